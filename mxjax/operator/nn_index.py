"""Index, sequence and loss ops of the nn family: Embedding, one_hot, pick, topk, sequence masking,
batch_dot, gather_nd/scatter_nd, arange_like, BlockGrad, smooth_l1 and CTCLoss.

(MXNet 1.x's output layers -- SoftmaxOutput, the regression outputs, MakeLoss --
and softmax_cross_entropy live with the legacy ops in ``legacy_loss``.)

MXNet reads float index arrays by truncation toward zero (``static_cast<int>``)
and clips out-of-range indices where its docs say so (Embedding, pick's 'clip');
both are reproduced here.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ._checked import guard
from .nn_util import check_choice, fail, float_input, norm_axis
from .registry import defop


def _as_index(x):
    """Integer indices (floats truncate toward zero, as MXNet's casts do)."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.integer):
        return x
    return x.astype(jnp.int64 if x.dtype == jnp.float64 else jnp.int32)


@defop("Embedding", aliases=("_npx_embedding",),
       param_shapes=lambda s, p: {1: (p["input_dim"], p["output_dim"])})
def embedding(data, weight, *, input_dim: int | None = None, output_dim: int | None = None,
              dtype: dtype = "float32", sparse_grad: bool = False):
    """Rows of ``weight`` (input_dim, output_dim) picked by the indices in ``data``; out-of-range indices clip."""
    op = "Embedding"
    if weight.ndim != 2:
        fail(op, f"weight must be 2-D (input_dim, output_dim), got shape {tuple(weight.shape)}")
    rows, cols = weight.shape
    if (input_dim not in (None, 0) and input_dim != rows) or (output_dim not in (None, 0) and output_dim != cols):
        fail(op, f"weight has shape {tuple(weight.shape)} but ({input_dim}, {output_dim}) is expected "
                 f"from input_dim={input_dim}, output_dim={output_dim}")
    index = jnp.clip(_as_index(data), 0, rows - 1)
    return jnp.take(weight, index, axis=0)


@defop("one_hot", aliases=("_npx_one_hot",))
def one_hot(indices, *, depth: int | None = None, on_value: float = 1.0, off_value: float = 0.0,
            dtype: dtype = "float32"):
    """A new last axis of length ``depth``: ``on_value`` at each index, ``off_value`` elsewhere (and for
    indices outside ``[0, depth)``)."""
    if depth is None or depth < 0:
        fail("one_hot", f"depth must be a non-negative integer, got {depth!r}")
    hot = _as_index(indices)[..., None] == jnp.arange(depth)
    dtype = jnp.dtype(dtype)
    return jnp.where(hot, jnp.asarray(on_value, dtype), jnp.asarray(off_value, dtype))


@defop("pick", aliases=("_npx_pick", "choose_element_0index"))
def pick(data, index, *, axis: int | None = -1, keepdims: bool = False, mode: str = "clip"):
    """``data`` picked along ``axis`` at ``index`` (data's shape without that axis); 'clip' or 'wrap' bounds."""
    op = "pick"
    check_choice(op, "mode", mode, ("clip", "wrap"))
    idx = _as_index(index)
    if axis is None:
        flat = data.reshape(-1)
        idx = _bound(idx, flat.shape[0], mode)
        return jnp.take(flat, idx)
    axis = norm_axis(op, axis, data.ndim)
    reduced = data.shape[:axis] + data.shape[axis + 1:]
    kept = data.shape[:axis] + (1,) + data.shape[axis + 1:]
    if tuple(idx.shape) == reduced:
        idx = jnp.expand_dims(idx, axis)
    elif tuple(idx.shape) != kept:
        fail(op, f"index has shape {tuple(idx.shape)} but {reduced} is expected "
                 f"(data {tuple(data.shape)} without axis {axis})")
    picked = jnp.take_along_axis(data, _bound(idx, data.shape[axis], mode), axis=axis)
    return picked if keepdims else jnp.squeeze(picked, axis)


def _bound(idx, size, mode):
    return jnp.clip(idx, 0, size - 1) if mode == "clip" else jnp.mod(idx, size)


@defop("topk", aliases=("_npx_topk",), num_outputs=lambda params: 2 if params.get("ret_typ") == "both" else 1)
def topk(data, *, axis: int | None = -1, k: int = 1, ret_typ: str = "indices", is_ascend: bool = False,
         dtype: dtype = "float32"):
    """The ``k`` largest (or smallest) entries along ``axis``, sorted: their values, indices (as ``dtype``,
    float32 by default as in MXNet), both, or a 0/1 mask; ``k < 1`` sorts the whole axis."""
    op = "topk"
    check_choice(op, "ret_typ", ret_typ, ("value", "indices", "mask", "both"))
    x = data.reshape(-1) if axis is None else data
    ax = 0 if axis is None else norm_axis(op, axis, x.ndim)
    n = x.shape[ax]
    count = n if k < 1 else k
    if count > n:
        fail(op, f"k={k} exceeds the {n} elements along axis {ax} of data {tuple(data.shape)}")
    moved = jnp.moveaxis(x, ax, -1)
    if is_ascend:
        order = jnp.argsort(moved, axis=-1, stable=True)[..., :count]
        values = jnp.take_along_axis(moved, order, axis=-1)
    else:
        values, order = lax.top_k(moved, count)
    if ret_typ == "mask":
        mask = jnp.zeros(moved.shape, data.dtype)
        mask = jnp.put_along_axis(mask, order, jnp.ones((), data.dtype), axis=-1, inplace=False)
        return jnp.moveaxis(mask, -1, ax).reshape(data.shape)
    values = jnp.moveaxis(values, -1, ax)
    indices = jnp.moveaxis(order, -1, ax).astype(jnp.dtype(dtype))
    if ret_typ == "value":
        return values
    if ret_typ == "indices":
        return indices
    return values, indices


# -------------------------------------------------------------------- sequences (time-major by default)

def _sequence_lengths(op, data, sequence_length, axis):
    if sequence_length is None:
        fail(op, "use_sequence_length=True needs the sequence_length input")
    batch = data.shape[1 - axis]
    if tuple(sequence_length.shape) != (batch,):
        fail(op, f"sequence_length has shape {tuple(sequence_length.shape)} but ({batch},) is expected "
                 f"(one length per batch entry of data {tuple(data.shape)}, axis={axis})")
    return _as_index(sequence_length)


def _seq_axis(op, data, axis):
    if data.ndim < 2:
        fail(op, f"data of shape {tuple(data.shape)} must be at least 2-D (time and batch axes)")
    if axis not in (0, 1):
        fail(op, f"axis={axis} must be 0 (time-major) or 1 (batch-major)")
    return axis


@defop("SequenceMask", aliases=("_npx_sequence_mask", "sequence_mask"))
def sequence_mask(data, sequence_length=None, *, use_sequence_length: bool = False, value: float = 0.0,
                  axis: int = 0):
    """Set the steps past each sequence's length to ``value`` (time on ``axis``, 0 or 1)."""
    op = "SequenceMask"
    axis = _seq_axis(op, data, axis)
    if not use_sequence_length:
        return data
    lengths = _sequence_lengths(op, data, sequence_length, axis)
    steps = lax.broadcasted_iota(lengths.dtype, data.shape, axis)
    batch_shape = [1] * data.ndim
    batch_shape[1 - axis] = -1
    lengths = lengths.reshape(batch_shape)
    return jnp.where(steps < lengths, data, jnp.asarray(value, data.dtype))


@defop("SequenceLast", aliases=("_npx_sequence_last",))
def sequence_last(data, sequence_length=None, *, use_sequence_length: bool = False, axis: int = 0):
    """The last valid step of each sequence (the final step without lengths); drops the time axis."""
    op = "SequenceLast"
    axis = _seq_axis(op, data, axis)
    time_major = jnp.moveaxis(data, axis, 0)
    if not use_sequence_length:
        return time_major[-1]
    last = jnp.clip(_sequence_lengths(op, data, sequence_length, axis) - 1, 0, time_major.shape[0] - 1)
    return time_major[last, jnp.arange(time_major.shape[1])]


@defop("SequenceReverse", aliases=("_npx_sequence_reverse",))
def sequence_reverse(data, sequence_length=None, *, use_sequence_length: bool = False, axis: int = 0):
    """Reverse the first ``length`` steps of each sequence along the time axis 0; later steps stay."""
    op = "SequenceReverse"
    if axis != 0:
        fail(op, f"axis={axis} is not supported; SequenceReverse works on time axis 0")
    _seq_axis(op, data, axis)
    if not use_sequence_length:
        return jnp.flip(data, axis=0)
    lengths = _sequence_lengths(op, data, sequence_length, 0)
    steps = jnp.arange(data.shape[0])[:, None]
    source = jnp.where(steps < lengths[None, :], lengths[None, :] - 1 - steps, steps)
    source = source.reshape(source.shape + (1,) * (data.ndim - 2))
    return jnp.take_along_axis(data, jnp.broadcast_to(source, data.shape), axis=0)


# -------------------------------------------------------------------- products and scatter/gather

@defop("batch_dot", aliases=("_npx_batch_dot",))
def batch_dot(lhs, rhs, *, transpose_a: bool = False, transpose_b: bool = False,
              forward_stype: str | None = None):
    """Matrix product of matching batches of matrices: (..., N, M) x (..., M, K) -> (..., N, K)."""
    op = "batch_dot"
    if lhs.ndim < 3 or lhs.ndim != rhs.ndim:
        fail(op, f"lhs {tuple(lhs.shape)} and rhs {tuple(rhs.shape)} must be batches of matrices "
                 f"with the same number (>= 3) of dimensions")
    a = jnp.swapaxes(lhs, -1, -2) if transpose_a else lhs
    b = jnp.swapaxes(rhs, -1, -2) if transpose_b else rhs
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        fail(op, f"cannot multiply lhs {tuple(lhs.shape)} by rhs {tuple(rhs.shape)} "
                 f"(transpose_a={transpose_a}, transpose_b={transpose_b}): batch shapes must be equal "
                 f"and the inner dimensions must match")
    return jnp.matmul(a, b)


def _nd_key(op, indices, target_shape):
    """One index array per leading axis of ``target_shape``, each guarded against that axis' length
    (an index in ``[-size, size)`` is valid, a negative one counting from the end)."""
    idx = _as_index(indices)
    data_ndim = len(target_shape)
    if idx.ndim < 1 or idx.shape[0] > data_ndim:
        fail(op, f"indices of shape {tuple(indices.shape)} must have a first axis of length 1 to "
                 f"{data_ndim} (one row per indexed data axis)")
    rows = tuple(idx[i] for i in range(idx.shape[0]))
    context = f"array shape {tuple(target_shape)}, indices shape {tuple(indices.shape)}"
    return guard(op, [(row, target_shape[k], k) for k, row in enumerate(rows)], rows, context)


# no host check before the call: copying the indices to the host would stall the pipeline (+45 us
# a call); the guard in the program reports a bad index at the first read of the result
@defop("gather_nd", aliases=("_npx_gather_nd",))
def gather_nd(data, indices):
    """``out[y] = data[indices[0, y], ..., indices[M-1, y], ...]`` for indices of shape (M, *Y);
    an index outside ``[-size, size)`` raises IndexError at the first read of the result."""
    return data[_nd_key("gather_nd", indices, data.shape)]


@defop("scatter_nd", aliases=("_npx_scatter_nd",))
def scatter_nd(data, indices, *, shape: shape = ()):
    """A zero array of ``shape`` with ``out[indices[:, y]] = data[y]`` (gather_nd's inverse).

    MXNet drops writes to out-of-range positions silently; here they raise IndexError
    as gather_nd's do, so no value is lost unnoticed."""
    op = "scatter_nd"
    key = _nd_key(op, indices, tuple(shape))
    expected = tuple(indices.shape[1:]) + tuple(shape[len(key):])
    if tuple(data.shape) != expected:
        fail(op, f"data has shape {tuple(data.shape)} but {expected} is expected for indices "
                 f"{tuple(indices.shape)} and shape={tuple(shape)}")
    return jnp.zeros(tuple(shape), data.dtype).at[key].set(data)


@defop("arange_like", aliases=("_contrib_arange_like", "_npx_arange_like"))
def arange_like(data, *, start: float = 0.0, step: float = 1.0, repeat: int = 1, ctx: str | None = None,
                axis: int | None = None):
    """``start + step * (i // repeat)`` over data's shape, or over its length along ``axis`` (1-D)."""
    op = "arange_like"
    if repeat < 1:
        fail(op, f"repeat={repeat} must be positive")
    shape = tuple(data.shape) if axis is None else (data.shape[norm_axis(op, axis, data.ndim)],)
    size = 1
    for n in shape:
        size *= n
    steps = (jnp.arange(size) // repeat).astype(jnp.float64 if data.dtype == jnp.float64 else jnp.float32)
    values = start + step * steps
    return values.reshape(shape).astype(data.dtype)


@defop("BlockGrad", aliases=("stop_gradient", "_npx_stop_gradient"))
def block_grad(data):
    """The identity whose gradient is zero."""
    return lax.stop_gradient(data)


# -------------------------------------------------------------------- losses

@defop("smooth_l1", aliases=("_npx_smooth_l1",))
def smooth_l1(data, *, scalar: float = 1.0):
    """``0.5 * (sigma*x)**2`` where ``|x| < 1/sigma**2``, else ``|x| - 0.5/sigma**2`` (sigma = ``scalar``)."""
    x = float_input("smooth_l1", data)
    s2 = jnp.asarray(scalar * scalar, x.dtype)
    ax = jnp.abs(x)
    return jnp.where(ax < 1 / s2, 0.5 * s2 * x * x, ax - 0.5 / s2)


@defop("CTCLoss", aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss", "_npx_ctc_loss"))
def ctc_loss(data, label, data_lengths=None, label_lengths=None, *, use_data_lengths: bool = False,
             use_label_lengths: bool = False, blank_label: str = "first"):
    """Connectionist temporal classification loss per sequence, shape (batch,).

    ``data`` (time, batch, alphabet) holds unnormalized scores; ``label`` (batch,
    max_label_len) is padded with 0 (``blank_label='first'``, blank is 0) or -1
    (``'last'``, blank is alphabet-1) unless ``label_lengths`` is used.
    """
    op = "CTCLoss"
    check_choice(op, "blank_label", blank_label, ("first", "last"))
    if use_label_lengths and not use_data_lengths and label_lengths is None:
        # symbol JSON lists only the inputs in use: (data, label, label_lengths)
        data_lengths, label_lengths = None, data_lengths
    if data.ndim != 3 or label.ndim != 2 or label.shape[0] != data.shape[1]:
        fail(op, f"data {tuple(data.shape)} must be (time, batch, alphabet) and label "
                 f"{tuple(label.shape)} (batch, max_label_len) with the same batch size")
    steps, batch, alphabet = data.shape
    if label.shape[1] > steps:
        fail(op, f"labels of length {label.shape[1]} cannot exceed the {steps} time steps of data")
    for used, lengths, name in ((use_data_lengths, data_lengths, "data_lengths"),
                                (use_label_lengths, label_lengths, "label_lengths")):
        if used and (lengths is None or tuple(lengths.shape) != (batch,)):
            fail(op, f"use_{name}=True needs {name} of shape ({batch},), got "
                     f"{None if lengths is None else tuple(lengths.shape)}")
    import optax  # deferred: only CTC needs it, and it is slow to import

    logits = jnp.swapaxes(float_input(op, data), 0, 1)
    time_len = data_lengths.astype(jnp.int32) if use_data_lengths else jnp.full((batch,), steps, jnp.int32)
    logit_pad = (jnp.arange(steps)[None, :] >= time_len[:, None]).astype(logits.dtype)
    labels = label.astype(jnp.int32)
    width = labels.shape[1]
    if use_label_lengths:
        label_len = label_lengths.astype(jnp.int32)
    else:
        is_pad = labels == (0 if blank_label == "first" else -1)
        label_len = jnp.where(jnp.any(is_pad, axis=1), jnp.argmax(is_pad, axis=1), width)
    label_pad = jnp.arange(width)[None, :] >= label_len[:, None]
    labels = jnp.where(label_pad, 0, labels)
    blank = 0 if blank_label == "first" else alphabet - 1
    loss = optax.ctc_loss(logits, logit_pad, labels, label_pad.astype(logits.dtype), blank_id=blank)
    return loss.astype(logits.dtype)
