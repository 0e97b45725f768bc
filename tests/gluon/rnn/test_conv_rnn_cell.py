"""gluon.rnn convolutional cells against a NumPy reference, finite differences and MXNet 2.0 fixtures.

Fixtures come from tools/make_conv_rnn_fixtures.py (channel-first only: MXNet's CPU convolution has
no channel-last kernel), so the channel-last layouts are checked against the NumPy reference.
"""
import inspect
import itertools
import json
from pathlib import Path

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon import nn, rnn

FIXTURES = Path(__file__).parent / "../../fixtures/conv_rnn"
RNG = onp.random.default_rng(5)
N, HIDDEN = 2, 3
GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
ACTIVATIONS = {"tanh": onp.tanh, "relu": lambda v: onp.maximum(v, 0), "softsign": lambda v: v / (1 + abs(v)),
               "leaky": lambda v: onp.where(v > 0, v, 0.2 * v)}


# ------------------------------------------------------------------ the NumPy reference (channel-first, float64)

def _tup(v, dims):
    return (v,) * dims if isinstance(v, int) else tuple(v)


def np_conv(x, w, b, pad, dilate):
    """Stride-1 cross-correlation of ``x`` (N, C, *S) with ``w`` (O, C, *K), plus bias."""
    dims = x.ndim - 2
    xp = onp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_size = [xp.shape[2 + i] - dilate[i] * (w.shape[2 + i] - 1) for i in range(dims)]
    out = onp.zeros((x.shape[0], w.shape[0], *out_size))
    for pos in itertools.product(*[range(k) for k in w.shape[2:]]):
        window = tuple(slice(p * d, p * d + o) for p, d, o in zip(pos, dilate, out_size))
        out += onp.einsum("nc...,oc->no...", xp[(slice(None), slice(None)) + window],
                          w[(slice(None), slice(None)) + pos])
    return out + b.reshape((1, -1) + (1,) * dims)


def sigmoid(v):
    return 1 / (1 + onp.exp(-v))


def ref_step(kind, cfg, params, x, states):
    """One step of a conv cell in NumPy; ``cfg`` has full tuples, everything channel-first."""
    i2h = np_conv(x, params["i2h_weight"], params["i2h_bias"], cfg["i2h_pad"], cfg["i2h_dilate"])
    h2h_pad = tuple(d * (k - 1) // 2 for k, d in zip(cfg["h2h_kernel"], cfg["h2h_dilate"]))
    h2h = np_conv(states[0], params["h2h_weight"], params["h2h_bias"], h2h_pad, cfg["h2h_dilate"])
    act = ACTIVATIONS[cfg["act"]]
    gi, gh = onp.split(i2h, GATES[kind], axis=1), onp.split(h2h, GATES[kind], axis=1)
    if kind == "RNN":
        h = act(i2h + h2h)
        return h, [h]
    if kind == "LSTM":
        i, f, g, o = (a + b for a, b in zip(gi, gh))
        c = sigmoid(f) * states[1] + sigmoid(i) * act(g)
        h = sigmoid(o) * act(c)
        return h, [h, c]
    r, z = sigmoid(gi[0] + gh[0]), sigmoid(gi[1] + gh[1])
    h = (1 - z) * act(gi[2] + r * gh[2]) + z * states[0]
    return h, [h]


def ref_unroll(kind, cfg, params, xs, states):
    """``xs``: (N, T, C, *S); returns outputs (N, T, H, *S') and the last states."""
    outs = []
    for t in range(xs.shape[1]):
        out, states = ref_step(kind, cfg, params, xs[:, t], states)
        outs.append(out)
    return onp.stack(outs, 1), states


# ------------------------------------------------------------------ building cells

def to_first(a, lead=1):
    """Channel-last array -> channel-first (``lead`` leading non-spatial axes before the channel)."""
    return onp.moveaxis(a, -1, lead)


def to_last(a, lead=1):
    return onp.moveaxis(a, lead, -1)


def make_cell(kind, dims, layout_index, act="tanh", in_channels=2, spatial=None, **spec):
    """A cell with random weights; returns (cell, cfg, channel-first float64 params)."""
    spec = {"i2h_kernel": 3, "h2h_kernel": 3, "i2h_pad": 0, "i2h_dilate": 1, "h2h_dilate": 1, **spec}
    spatial = spatial or (6, 5, 4)[:dims]
    layout = LAYOUTS[dims][layout_index]
    last = layout_index == 1
    input_shape = (*spatial, in_channels) if last else (in_channels, *spatial)
    activation = nn.LeakyReLU(0.2) if act == "leaky" else act
    cell = getattr(rnn, f"Conv{dims}D{kind}Cell")(input_shape, HIDDEN, conv_layout=layout, activation=activation,
                                                  **spec)
    cell.initialize(mx.init.Zero())  # overwritten below; the random initializers compile per shape (slow)
    params = {}
    for name, p in cell.collect_params().items():
        value = RNG.uniform(-0.6, 0.6, p.shape)
        p.set_data(mx.np.array(value.astype("float32")))
        params[name] = to_first(value) if last and "weight" in name else value
    cfg = {k: _tup(v, dims) for k, v in spec.items()}
    cfg.update(act=act, last=last, input_shape=input_shape)
    return cell, cfg, params


def rand_states(cell, n=N):
    return [RNG.uniform(-0.5, 0.5, info["shape"]) for info in cell.state_info(n)]


def call_ref_step(kind, cfg, params, x, states):
    """The reference on arrays in the cell's own layout."""
    conv = to_first if cfg["last"] else (lambda a: a)
    back = to_last if cfg["last"] else (lambda a: a)
    out, new = ref_step(kind, cfg, params, conv(x), [conv(s) for s in states])
    return back(out), [back(s) for s in new]


def mx32(a):
    return mx.np.array(onp.asarray(a, "float32"))


def close(got, want, tol=2e-5):
    onp.testing.assert_allclose(got.asnumpy() if hasattr(got, "asnumpy") else got, want, rtol=tol, atol=tol)


# ------------------------------------------------------------------ one step, every cell, both layouts

STEP_CASES = [
    ("RNN", 1, {}, "tanh"), ("RNN", 2, {"i2h_pad": (1, 0), "h2h_kernel": (3, 1)}, "relu"),
    ("RNN", 3, {"i2h_kernel": 2, "h2h_dilate": (1, 2, 1)}, "leaky"),
    ("LSTM", 1, {"i2h_dilate": 2, "h2h_kernel": 5}, "tanh"), ("LSTM", 2, {"i2h_pad": 1, "h2h_dilate": 2}, "tanh"),
    ("LSTM", 3, {"i2h_kernel": (1, 3, 2)}, "softsign"),
    ("GRU", 1, {"i2h_pad": 1}, "tanh"), ("GRU", 2, {"i2h_dilate": (1, 2), "h2h_kernel": (1, 3)}, "tanh"),
    ("GRU", 3, {"i2h_kernel": 2, "i2h_pad": (1, 0, 0)}, "relu"),
]


@pytest.mark.parametrize("layout_index", [0, 1], ids=["channel_first", "channel_last"])
@pytest.mark.parametrize("kind,dims,spec,act", STEP_CASES, ids=[f"{k}{d}d" for k, d, _, _ in STEP_CASES])
def test_one_step_matches_numpy(kind, dims, spec, act, layout_index):
    cell, cfg, params = make_cell(kind, dims, layout_index, act=act, **spec)
    x = RNG.uniform(-1, 1, (N, *cfg["input_shape"]))
    states = rand_states(cell)
    out, new_states = cell(mx32(x), [mx32(s) for s in states])
    want_out, want_states = call_ref_step(kind, cfg, params, x, states)
    assert isinstance(out, mx.np.ndarray) and out.dtype == onp.float32
    assert tuple(out.shape) == cell.state_info(N)[0]["shape"]
    close(out, want_out)
    assert len(new_states) == len(want_states)
    for got, want in zip(new_states, want_states):
        close(got, want)


# ------------------------------------------------------------------ unroll

@pytest.mark.parametrize("kind,dims,layout_index", [("LSTM", 2, 0), ("GRU", 1, 1)])
def test_unroll_layouts_and_merge(kind, dims, layout_index):
    cell, cfg, params = make_cell(kind, dims, layout_index, i2h_pad=1)
    steps = 3
    xs = RNG.uniform(-1, 1, (N, steps, *cfg["input_shape"]))
    states = rand_states(cell)
    lead = 2
    ref_xs = to_first(xs, lead) if cfg["last"] else xs
    ref_states = [to_first(s) if cfg["last"] else s for s in states]
    want, want_states = ref_unroll(kind, cfg, params, ref_xs, ref_states)
    if cfg["last"]:
        want, want_states = to_last(want, lead), [to_last(s) for s in want_states]
    begin = [mx32(s) for s in states]
    ntc, ntc_states = cell.unroll(steps, mx32(xs), begin_state=begin, layout="NTC", merge_outputs=True)
    close(ntc, want)
    for got, w in zip(ntc_states, want_states):
        close(got, w)
    listed, _ = cell.unroll(steps, mx32(xs), begin_state=begin, layout="NTC", merge_outputs=False)
    assert isinstance(listed, list) and len(listed) == steps
    for t in range(steps):
        close(listed[t], want[:, t])
    tnc, _ = cell.unroll(steps, mx32(onp.swapaxes(xs, 0, 1)), begin_state=begin, layout="TNC", merge_outputs=True)
    close(tnc, onp.swapaxes(want, 0, 1))
    tnc_list, tnc_states = cell.unroll(steps, mx32(onp.swapaxes(xs, 0, 1)), begin_state=begin, layout="TNC",
                                       merge_outputs=False)
    close(tnc_list[-1], want[:, -1])
    close(tnc_states[-1], want_states[-1])
    from_list, _ = cell.unroll(steps, [mx32(xs[:, t]) for t in range(steps)], begin_state=begin,
                               merge_outputs=True)
    close(from_list, want)


def test_unroll_default_zero_states():
    cell, cfg, params = make_cell("RNN", 2, 0)
    xs = RNG.uniform(-1, 1, (N, 2, *cfg["input_shape"]))
    out, states = cell.unroll(2, mx32(xs), layout="NTC", merge_outputs=True)
    zeros = [onp.zeros(i["shape"]) for i in cell.state_info(N)]
    want, _ = ref_unroll("RNN", cfg, params, xs, zeros)
    close(out, want)
    close(states[0], want[:, -1])


# ------------------------------------------------------------------ hybridize

@pytest.mark.parametrize("kind,dims,layout_index", [("RNN", 1, 1), ("GRU", 2, 0), ("LSTM", 3, 1)])
def test_hybridized_equals_imperative(kind, dims, layout_index):
    cell, cfg, _ = make_cell(kind, dims, layout_index, spatial=(5, 4, 3)[:dims])
    x = mx32(RNG.uniform(-1, 1, (N, *cfg["input_shape"])))
    states = [mx32(s) for s in rand_states(cell)]
    xs = mx32(RNG.uniform(-1, 1, (N, 2, *cfg["input_shape"])))
    step_out, step_states = cell(x, states)
    seq_out, seq_states = cell.unroll(2, xs, begin_state=states, merge_outputs=True)
    cell.hybridize()
    for _ in range(2):  # the second call runs the cached program
        h_out, h_states = cell(x, states)
        close(h_out, step_out.asnumpy(), 1e-5)
        for got, want in zip(h_states, step_states):
            close(got, want.asnumpy(), 1e-5)
    h_seq, h_seq_states = cell.unroll(2, xs, begin_state=states, merge_outputs=True)
    close(h_seq, seq_out.asnumpy(), 1e-5)
    close(h_seq_states[-1], seq_states[-1].asnumpy(), 1e-5)


# ------------------------------------------------------------------ gradients

@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_gradients_match_finite_differences(kind):
    cell, cfg, params = make_cell(kind, 1, 0, in_channels=2, spatial=(4,), i2h_pad=1)
    x = RNG.uniform(-1, 1, (1, *cfg["input_shape"]))
    states = rand_states(cell, 1)
    head = RNG.uniform(-1, 1, cell.state_info(1)[0]["shape"])
    heads = [RNG.uniform(-1, 1, s.shape) for s in states]

    def loss(p, xv, sv):
        out, new = ref_step(kind, cfg, p, xv, sv)
        return (out * head).sum() + sum((s * h).sum() for s, h in zip(new, heads))

    xm, sm = mx32(x), [mx32(s) for s in states]
    xm.attach_grad()
    for s in sm:
        s.attach_grad()
    with mx.autograd.record():
        out, new = cell(xm, sm)
        total = (out * mx32(head)).sum()
        for s, h in zip(new, heads):
            total = total + (s * mx32(h)).sum()
    total.backward()
    close(total.asnumpy(), loss(params, x, states), 1e-5)

    eps = 1e-6

    def numeric(array, update):
        grad = onp.zeros_like(array)
        for idx in onp.ndindex(array.shape):
            bumped = []
            for sign in (1, -1):
                moved = array.copy()
                moved[idx] += sign * eps
                bumped.append(update(moved))
            grad[idx] = (bumped[0] - bumped[1]) / (2 * eps)
        return grad

    close(xm.grad, numeric(x, lambda v: loss(params, v, states)), 1e-4)
    for i, s in enumerate(sm):
        close(s.grad, numeric(states[i], lambda v: loss(params, x, states[:i] + [v] + states[i + 1:])), 1e-4)
    for name, p in cell.collect_params().items():
        close(p.grad(), numeric(params[name], lambda v: loss({**params, name: v}, x, states)), 1e-4)


# ------------------------------------------------------------------ MXNet 2.0 fixtures

FIXTURE_NAMES = sorted(p.stem for p in FIXTURES.glob("*.npz"))


def test_fixtures_present():
    assert FIXTURE_NAMES == sorted(f"{k}{d}d" for k in ("rnn", "lstm", "gru") for d in (1, 2, 3))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_matches_mxnet_fixture(name):
    # hybridized: one compiled step (and its gradient) serves every time step, much faster than op by op
    data = onp.load(FIXTURES / f"{name}.npz")
    cfg = json.loads(str(data["config"]))
    cell = getattr(rnn, cfg["cls"])(tuple(cfg["input_shape"]), cfg["hidden_channels"], **cfg["kwargs"])
    cell.initialize(mx.init.Zero())
    params = cell.collect_params()
    assert {k: list(p.shape) for k, p in params.items()} == cfg["param_shapes"]
    assert list(params) == list(cfg["param_shapes"])
    assert repr(cell) == cfg["repr"]
    assert [list(i["shape"]) for i in cell.state_info(N)] == cfg["state_shapes"]
    assert [i["__layout__"] for i in cell.state_info(N)] == cfg["layouts"]
    for k, p in params.items():
        p.set_data(mx.np.array(data[f"param:{k}"]))
    cell.hybridize()
    x = mx.np.array(data["x"])
    x.attach_grad()
    states = [mx.np.array(data[f"state_{i}"]) for i in range(len(cfg["state_shapes"]))]
    steps = x.shape[1]
    with mx.autograd.record():
        out, out_states = cell.unroll(steps, x, begin_state=states, layout="NTC", merge_outputs=True)
        loss = (out * mx.np.array(data["head"])).sum()
    loss.backward()
    close(out, data["out"], 1e-5)
    for i, s in enumerate(out_states):
        close(s, data[f"out_state_{i}"], 1e-5)
    close(x.grad, data["grad_x"], 1e-4)
    for k, p in params.items():
        close(p.grad(), data[f"grad:{k}"], 1e-4)


# ------------------------------------------------------------------ API surface: names, shapes, signatures, states

def test_channel_last_param_shapes_match_mxnet():
    # shapes printed by MXNet 2.0.0b1 for these constructors (its CPU build cannot run them)
    cases = [(rnn.Conv1DRNNCell((8, 3), 4, 3, 3, conv_layout="NWC"), (4, 3, 3), (4, 3, 4), (2, 6, 4), "3 -> 4"),
             (rnn.Conv2DLSTMCell((6, 6, 3), 4, 3, 3, conv_layout="NHWC"), (16, 3, 3, 3), (16, 3, 3, 4),
              (2, 4, 4, 4), "3 -> 16"),
             (rnn.Conv3DGRUCell((4, 4, 4, 2), 4, 3, 3, conv_layout="NDHWC"), (12, 3, 3, 3, 2), (12, 3, 3, 3, 4),
              (2, 2, 2, 2, 4), "2 -> 12")]
    for cell, i2h, h2h, state, mapping in cases:
        shapes = {k: p.shape for k, p in cell.collect_params().items()}
        rows = i2h[0]
        assert shapes == {"i2h_weight": i2h, "h2h_weight": h2h, "i2h_bias": (rows,), "h2h_bias": (rows,)}
        assert all(info["shape"] == state for info in cell.state_info(2))
        assert repr(cell) == f"{type(cell).__name__}({mapping}, tanh, {cell._conv_layout})"


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_constructor_signatures_match_mxnet(dims):
    names = ["input_shape", "hidden_channels", "i2h_kernel", "h2h_kernel", "i2h_pad", "i2h_dilate", "h2h_dilate",
             "i2h_weight_initializer", "h2h_weight_initializer", "i2h_bias_initializer", "h2h_bias_initializer",
             "conv_layout", "activation"]
    defaults = {"i2h_pad": (0,) * dims, "i2h_dilate": (1,) * dims, "h2h_dilate": (1,) * dims,
                "i2h_weight_initializer": None, "h2h_weight_initializer": None, "i2h_bias_initializer": "zeros",
                "h2h_bias_initializer": "zeros", "conv_layout": LAYOUTS[dims][0], "activation": "tanh"}
    for kind in GATES:
        sig = inspect.signature(getattr(rnn, f"Conv{dims}D{kind}Cell"))
        assert list(sig.parameters) == names
        got = {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
        assert got == defaults


def test_exported_names():
    from mxjax.gluon.rnn import conv_rnn_cell
    expected = {f"Conv{d}D{k}Cell" for d in (1, 2, 3) for k in GATES}
    assert set(conv_rnn_cell.__all__) == expected
    assert expected <= set(rnn.__all__)
    assert all(issubclass(getattr(rnn, n), rnn.HybridRecurrentCell) for n in expected)


def test_begin_state_and_state_info():
    cell = rnn.Conv2DLSTMCell((2, 5, 5), 4, 3, 3, i2h_pad=1)
    info = cell.state_info(3)
    assert info == [{"shape": (3, 4, 5, 5), "__layout__": "NCHW"}] * 2
    assert info[0] is not info[1]
    zeros = cell.begin_state(batch_size=3)
    assert len(zeros) == 2 and all(s.shape == (3, 4, 5, 5) and not s.asnumpy().any() for s in zeros)
    ones = cell.begin_state(batch_size=1, func=mx.np.ones)
    assert all(s.shape == (1, 4, 5, 5) and (s.asnumpy() == 1).all() for s in ones)
    assert cell.state_info()[0]["shape"] == (0, 4, 5, 5)
    gru = rnn.Conv3DGRUCell((3, 3, 4, 2), 2, (1, 1, 3), 1, conv_layout="NDHWC")
    assert gru.state_info(1) == [{"shape": (1, 3, 3, 2, 2), "__layout__": "NDHWC"}]


def test_kernels_as_lists_and_numpy_ints():
    # MXNet 2.0.0b1 fails on list kernels (it concatenates a list to a tuple); they work here
    cell = rnn.Conv2DRNNCell([2, 6, 6], onp.int64(3), [3, 1], [3, 1], i2h_pad=[1, 0])
    assert cell.i2h_weight.shape == (3, 2, 3, 1) and cell.state_info(1)[0]["shape"] == (1, 3, 6, 6)


@pytest.mark.parametrize("hybridize", [False, True])
def test_deferred_input_channels(hybridize):
    # input_shape with 0 channels: inferred on the first call (MXNet 2.0.0b1 raises DeferredInitializationError)
    cell = rnn.Conv1DGRUCell((0, 5), 2, 3, 3, conv_layout="NCW")
    assert cell.i2h_weight.shape == (6, -1, 3) and repr(cell) == "Conv1DGRUCell(-1 -> 6, tanh, NCW)"
    cell.initialize(mx.init.One())
    if hybridize:
        cell.hybridize()
    out, states = cell(mx32(RNG.uniform(-1, 1, (N, 4, 5))), cell.begin_state(N))
    assert cell.i2h_weight.shape == (6, 4, 3) and out.shape == (N, 2, 3)
    assert repr(cell) == "Conv1DGRUCell(4 -> 6, tanh, NCW)"


def test_stacked_in_sequential_cell():
    first, cfg1, p1 = make_cell("RNN", 2, 0, i2h_pad=1)
    second = rnn.Conv2DLSTMCell((HIDDEN, 6, 5), HIDDEN, 3, 3, i2h_pad=1)
    second.initialize(mx.init.Zero())
    p2 = {k: RNG.uniform(-0.6, 0.6, p.shape) for k, p in second.collect_params().items()}
    for k, p in second.collect_params().items():
        p.set_data(mx32(p2[k]))
    seq = rnn.HybridSequentialRNNCell()
    seq.add(first)
    seq.add(second)
    xs = RNG.uniform(-1, 1, (N, 2, *cfg1["input_shape"]))
    out, states = seq.unroll(2, mx32(xs), layout="NTC", merge_outputs=True)
    assert [tuple(s.shape) for s in states] == [(N, HIDDEN, 6, 5)] * 3
    mid, _ = ref_unroll("RNN", cfg1, p1, xs, [onp.zeros((N, HIDDEN, 6, 5))])
    cfg2 = {**cfg1, "act": "tanh"}
    want, _ = ref_unroll("LSTM", cfg2, p2, mid, [onp.zeros((N, HIDDEN, 6, 5))] * 2)
    close(out, want)


# ------------------------------------------------------------------ bad arguments and inputs

@pytest.mark.parametrize("make,match", [
    (lambda: rnn.Conv2DRNNCell((2, 5, 5), 3, 3, 2), r"Conv2DRNNCell: h2h_kernel=2 must be odd"),
    (lambda: rnn.Conv3DGRUCell((2, 4, 4, 4), 3, 3, (3, 4, 3)), r"Conv3DGRUCell: h2h_kernel=\(3, 4, 3\) must be odd"),
    (lambda: rnn.Conv2DLSTMCell((2, 5, 5), 3, (3, 3, 3), 3), r"Conv2DLSTMCell: i2h_kernel must be .*2 ints"),
    (lambda: rnn.Conv1DRNNCell((2, 5), 3, 3, 3, i2h_pad=(1, 1)), r"Conv1DRNNCell: i2h_pad must be"),
    (lambda: rnn.Conv2DRNNCell((2, 5), 3, 3, 3), r"Conv2DRNNCell: input_shape must be a tuple of 3 ints"),
    (lambda: rnn.Conv2DRNNCell((2, 5, 5), 3, 3, 3, conv_layout="NCW"), r"Conv2DRNNCell: conv_layout='NCW'"),
    (lambda: rnn.Conv1DRNNCell((2, 2), 3, 5, 3), r"Conv1DRNNCell: i2h_kernel=\(5,\).*does not fit"),
    (lambda: rnn.Conv1DRNNCell((2, 5), 0, 3, 3), r"Conv1DRNNCell: hidden_channels must be a positive int"),
    (lambda: rnn.Conv1DRNNCell((2, 5), 3, 3, 3, h2h_dilate=0), r"Conv1DRNNCell: kernels and dilations"),
])
def test_bad_constructor_arguments(make, match):
    # MXNet checks these with assert: the error is both an MXNetError and an AssertionError
    with pytest.raises(AssertionError, match=match) as info:
        make()
    assert isinstance(info.value, MXNetError) and isinstance(info.value, ValueError)


def test_non_integer_kernel_is_type_error():
    with pytest.raises(TypeError, match=r"Conv2DRNNCell: h2h_kernel must be an int or a tuple of 2 ints, got 3.0"):
        rnn.Conv2DRNNCell((2, 5, 5), 3, 3, 3.0)
    with pytest.raises(TypeError, match=r"Conv1DRNNCell: input_shape must be a tuple of 2 ints, got 5"):
        rnn.Conv1DRNNCell(5, 3, 3, 3)


@pytest.mark.parametrize("hybridize", [False, True])
def test_bad_inputs_name_the_cell(hybridize):
    cell = rnn.Conv2DLSTMCell((2, 5, 5), 3, 3, 3)
    cell.initialize(mx.init.Zero())
    if hybridize:
        cell.hybridize()
    states = cell.begin_state(N)
    with pytest.raises(MXNetError, match=r"Conv2DLSTMCell: expected a 4-D input NCHW .* got shape \(2, 2, 5\)"):
        cell(mx.np.zeros((N, 2, 5)), states)
    with pytest.raises(MXNetError, match=r"Conv2DLSTMCell: expected input of shape \(batch_size, 2, 5, 5\).*"
                                         r"got \(2, 4, 5, 5\)"):
        cell(mx.np.zeros((N, 4, 5, 5)), states)
    with pytest.raises(MXNetError, match=r"Conv2DLSTMCell: expected input of shape .* got \(2, 2, 7, 7\)"):
        cell(mx.np.zeros((N, 2, 7, 7)), states)
    with pytest.raises(MXNetError, match=r"Conv2DLSTMCell: expected 2 state\(s\) of shape \(2, 3, 3, 3\)"):
        cell(mx.np.zeros((N, 2, 5, 5)), states[:1])
    with pytest.raises(ValueError, match=r"Conv2DLSTMCell: expected 2 state\(s\).*got \[\(1, 3, 3, 3\)"):
        cell(mx.np.zeros((N, 2, 5, 5)), cell.begin_state(1))
