"""MXNet's fused ``RNN`` op: multi-layer, optionally bidirectional ReLU/tanh RNN, LSTM and GRU.

One flat ``parameters`` vector holds every weight, then every bias, in cuDNN's order
(MXNet's): for each layer, for each direction, the i2h weight ``(G*H, input)``, the
h2h weight ``(G*H, P or H)`` and, for a projected LSTM, the h2r weight ``(P, H)``;
then for each layer and direction the i2h and h2h biases ``(G*H,)``.  Gates are
stacked in cuDNN's order: i, f, g, o for LSTM and r, z, n for GRU, whose reset gate
multiplies the h2h product *after* its bias is added.

Each layer and direction is one ``lax.scan`` over time; the input projection of all
time steps is one matmul before the scan.  The reverse direction runs the forward
recurrence over time-reversed input -- reversed within each sequence's own length
when ``use_sequence_length`` is set, so it starts at that sequence's last valid step.
Padded steps leave the state unchanged and output zeros.  Gradients are JAX's.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .nn_util import check_choice, fail, float_input
from .registry import defop

OP = "RNN"
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def param_layout(mode: str, num_layers: int, directions: int, input_size: int, state_size: int,
                 projection_size: int | None = None) -> list[tuple[str, int, int, tuple]]:
    """``(kind, layer, direction, shape)`` of each piece of the flat parameter vector, in order
    (kind: 'i2h_weight', 'h2h_weight', 'h2r_weight', 'i2h_bias', 'h2h_bias')."""
    gh, out = GATES[mode] * state_size, projection_size or state_size
    weights, biases = [], []
    for layer in range(num_layers):
        size_in = input_size if layer == 0 else out * directions
        for d in range(directions):
            weights += [("i2h_weight", layer, d, (gh, size_in)), ("h2h_weight", layer, d, (gh, out))]
            if projection_size:
                weights.append(("h2r_weight", layer, d, (projection_size, state_size)))
            biases += [("i2h_bias", layer, d, (gh,)), ("h2h_bias", layer, d, (gh,))]
    return weights + biases


def param_size(mode: str, num_layers: int, directions: int, input_size: int, state_size: int,
               projection_size: int | None = None) -> int:
    """Length of the flat parameter vector (MXNet's ``GetRnnParamSize``)."""
    total = 0
    for *_, shape in param_layout(mode, num_layers, directions, input_size, state_size, projection_size):
        n = 1
        for s in shape:
            n *= s
        total += n
    return total


def _param_shapes(shapes: list, p: dict) -> dict:
    """The flat parameter vector and the (cell) states from TNC data, as MXNet's RNN shape rule
    (slots of the graph node, which has no key input)."""
    steps, batch, size_in = shapes[0]
    layers, directions, hidden = p["num_layers"], 2 if p.get("bidirectional") else 1, p["state_size"]
    out = p.get("projection_size") or hidden
    return {1: (param_size(p["mode"], layers, directions, size_in, hidden, p.get("projection_size")),),
            2: (layers * directions, batch, out), 3: (layers * directions, batch, hidden)}


def _num_outputs(params: dict) -> int:
    if not params.get("state_outputs"):
        return 1
    return 3 if params.get("mode") == "lstm" else 2


def _check(data, parameters, state, state_cell, sequence_length, mode, state_size, num_layers, directions,
           projection_size, use_sequence_length):
    check_choice(OP, "mode", mode, tuple(GATES))
    if state_size is None or num_layers is None or int(state_size) < 1 or int(num_layers) < 1:
        fail(OP, f"state_size and num_layers must be positive integers, got state_size={state_size}, "
                 f"num_layers={num_layers}")
    if projection_size and mode != "lstm":
        fail(OP, f"projection_size={projection_size} is only supported with mode='lstm', not {mode!r}")
    if data.ndim != 3:
        fail(OP, f"data must be 3-D (seq_len, batch, input_size) in TNC layout, got shape {tuple(data.shape)}")
    steps, batch, size_in = data.shape
    expected = param_size(mode, num_layers, directions, size_in, state_size, projection_size)
    if parameters.ndim != 1 or parameters.shape[0] != expected:
        gates = GATES[mode]
        how = (f"per direction, layer 0: {gates}*H*(input_size + {'P' if projection_size else 'H'} + 2)"
               f"{' + P*H' if projection_size else ''}, later layers: the same with input_size = "
               f"{directions}*{'P' if projection_size else 'H'}")
        fail(OP, f"parameters has shape {tuple(parameters.shape)} but ({expected},) is expected for "
                 f"mode={mode!r}, num_layers={num_layers}, bidirectional={directions == 2}, input_size={size_in}, "
                 f"state_size H={state_size}" + (f", projection_size P={projection_size}" if projection_size else "")
                 + f" ({how})")
    out = projection_size or state_size
    if tuple(state.shape) != (num_layers * directions, batch, out):
        fail(OP, f"state has shape {tuple(state.shape)} but {(num_layers * directions, batch, out)} is expected "
                 "(num_layers * directions, batch, " + ("projection_size)" if projection_size else "state_size)"))
    if mode == "lstm":
        if state_cell is None:
            fail(OP, "mode='lstm' needs state_cell, the initial cell state")
        if tuple(state_cell.shape) != (num_layers * directions, batch, state_size):
            fail(OP, f"state_cell has shape {tuple(state_cell.shape)} but "
                     f"{(num_layers * directions, batch, state_size)} is expected "
                     "(num_layers * directions, batch, state_size)")
    if use_sequence_length:
        if sequence_length is None:
            fail(OP, "use_sequence_length=True needs the sequence_length input")
        if tuple(sequence_length.shape) != (batch,):
            fail(OP, f"sequence_length has shape {tuple(sequence_length.shape)} but ({batch},) is expected")
    return steps, batch, size_in


def _unpack(parameters, layout):
    pieces, offset = {}, 0
    for kind, layer, d, shape in layout:
        n = shape[0] * (shape[1] if len(shape) > 1 else 1)
        pieces[kind, layer, d] = parameters[offset:offset + n].reshape(shape)
        offset += n
    return pieces


def _cell(mode, wh, bh, wr, clip):
    """The step function ``(carry, (x_projected, mask)) -> (carry, output)`` of one direction."""
    def step(carry, inputs):
        xp, mask = inputs
        h, c = carry
        hp = h @ wh.T + bh
        if mode == "lstm":
            i, f, g, o = jnp.split(xp + hp, 4, axis=-1)
            c_new = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            if clip is not None:
                low, high, nan = clip
                clipped = jnp.clip(c_new, low, high)  # NaN stays NaN unless lstm_state_clip_nan
                c_new = jnp.where(jnp.isnan(c_new), jnp.asarray(low, c_new.dtype), clipped) if nan else clipped
            h_new = jax.nn.sigmoid(o) * jnp.tanh(c_new)
            if wr is not None:
                h_new = h_new @ wr.T
        elif mode == "gru":
            xr, xz, xn = jnp.split(xp, 3, axis=-1)
            hr, hz, hn = jnp.split(hp, 3, axis=-1)
            r, z = jax.nn.sigmoid(xr + hr), jax.nn.sigmoid(xz + hz)
            n = jnp.tanh(xn + r * hn)
            h_new, c_new = (1 - z) * n + z * h, c
        else:
            pre = xp + hp
            h_new, c_new = (jax.nn.relu(pre) if mode == "rnn_relu" else jnp.tanh(pre)), c
        if mask is not None:
            h_new, c_new = jnp.where(mask, h_new, h), jnp.where(mask, c_new, c)
            return (h_new, c_new), jnp.where(mask, h_new, jnp.zeros((), h_new.dtype))
        return (h_new, c_new), h_new
    return step


def _direction(x, pieces, layer, d, mode, h0, c0, mask, rev_index, clip):
    """Outputs (T, N, P or H) and final (h, c) of one layer and direction."""
    xp = jnp.einsum("tnc,gc->tng", x, pieces["i2h_weight", layer, d]) + pieces["i2h_bias", layer, d]
    if d == 1:
        xp = xp[::-1] if rev_index is None else jnp.take_along_axis(xp, rev_index[:, :, None], axis=0)
    step = _cell(mode, pieces["h2h_weight", layer, d], pieces["h2h_bias", layer, d],
                 pieces.get(("h2r_weight", layer, d)), clip)
    (h, c), ys = lax.scan(step, (h0, c0), (xp, mask))
    if d == 1:
        ys = ys[::-1] if rev_index is None else jnp.take_along_axis(ys, rev_index[:, :, None], axis=0)
    return ys, h, c


@defop(OP, aliases=("_npx_rnn",), needs_key=True, num_outputs=_num_outputs, param_shapes=_param_shapes,
       output_names=lambda params: ["output", "state_output", "statecell_output"])
def rnn(key, data, parameters, state, state_cell=None, sequence_length=None, *, state_size: int | None = None,
        num_layers: int | None = None, bidirectional: bool = False, mode: str | None = None, p: float = 0.0,
        state_outputs: bool = False, projection_size: int | None = None,
        lstm_state_clip_min: float | None = None, lstm_state_clip_max: float | None = None,
        lstm_state_clip_nan: bool = False, use_sequence_length: bool = False, _train: bool = False):
    """Fused recurrent layers over TNC ``data``: returns ``out`` (T, N, D*H) (D*P with a projection),
    and with ``state_outputs`` the final hidden state (L*D, N, H) and, for LSTM, the final cell state.
    ``p`` drops out each layer's output but the last's in training."""
    directions = 2 if bidirectional else 1
    data = float_input(OP, data)
    steps, batch, _ = _check(data, parameters, state, state_cell, sequence_length, mode, state_size, num_layers,
                             directions, projection_size, use_sequence_length)
    dtype = data.dtype
    layout = param_layout(mode, num_layers, directions, data.shape[2], state_size, projection_size)
    pieces = _unpack(parameters.astype(dtype), layout)
    state = state.astype(dtype)
    cell = state_cell.astype(dtype) if mode == "lstm" else jnp.zeros((num_layers * directions, batch, 1), dtype)
    mask = rev_index = None
    if use_sequence_length:
        lengths = sequence_length.astype(jnp.int32)
        t = lax.broadcasted_iota(jnp.int32, (steps, batch), 0)
        valid = t < lengths[None, :]
        mask = valid[:, :, None]
        rev_index = jnp.where(valid, lengths[None, :] - 1 - t, t)  # reverse each sequence within its length
    clip = None
    if mode == "lstm" and lstm_state_clip_min is not None and lstm_state_clip_max is not None:
        clip = (float(lstm_state_clip_min), float(lstm_state_clip_max), bool(lstm_state_clip_nan))
    x, hs, cs = data, [], []
    for layer in range(num_layers):
        if layer > 0 and _train and p > 0:
            key, sub = jax.random.split(key)
            keep = jax.random.bernoulli(sub, 1.0 - p, x.shape)
            x = jnp.where(keep, x / jnp.asarray(1.0 - p, dtype), jnp.zeros((), dtype)) if p < 1 else jnp.zeros_like(x)
        outs = []
        for d in range(directions):
            i = layer * directions + d
            ys, h, c = _direction(x, pieces, layer, d, mode, state[i], cell[i], mask, rev_index, clip)
            outs.append(ys)
            hs.append(h)
            cs.append(c)
        x = outs[0] if directions == 1 else jnp.concatenate(outs, axis=-1)
    if not state_outputs:
        return x
    if mode == "lstm":
        return x, jnp.stack(hs), jnp.stack(cs)
    return x, jnp.stack(hs)
