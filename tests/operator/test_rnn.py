"""The fused ``RNN`` op (``mx.nd.RNN``, ``mx.sym.RNN``, ``mx.npx.rnn``) and ``mx.init.RNNFused`` against
values and gradients written by MXNet 2.0 (tests/fixtures/rnn, from tools/make_rnn_fixtures.py).

MXNet's CPU op has no ``use_sequence_length`` (cuDNN only): those cases check that running each
sequence alone, cut to its length, gives the same outputs and final states."""
import json
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd
from mxjax.base import MXNetError
from mxjax.operator.rnn import param_size

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "rnn"
OP_CASES = sorted(p.stem for p in FIXTURES.glob("*.npz") if not p.stem.startswith("init_"))
INIT_CASES = sorted(p.stem for p in FIXTURES.glob("init_*.npz"))
INPUTS = ("data", "parameters", "state", "state_cell")
RNG = onp.random.default_rng(5)


def _load(name):
    record = onp.load(FIXTURES / f"{name}.npz")
    params = json.loads(str(record["params"]))
    inputs = {k: record[k] for k in INPUTS if k in record.files}
    outs = [record[f"out_{i}"] for i in range(sum(k.startswith("out_") for k in record.files))]
    heads = [record[f"head_{i}"] for i in range(len(outs))] if "head_0" in record.files else None
    grads = {k: record[f"grad_{k}"] for k in inputs} if heads else None
    return params, inputs, outs, heads, grads


def _as_list(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def test_fixtures_present():
    assert len(OP_CASES) >= 12 and len(INIT_CASES) >= 5
    assert sum(p.stat().st_size for p in FIXTURES.glob("*.npz")) < 300_000


@pytest.mark.parametrize("name", OP_CASES)
def test_forward_and_gradients_match_mxnet(name):
    params, inputs, outs, heads, grads = _load(name)
    arrays = {k: mx.nd.array(v) for k, v in inputs.items()}
    if heads is None:  # values only (MXNet's CPU projected LSTM has no training mode)
        got = _as_list(mx.nd.RNN(**arrays, **params))
    else:
        for a in arrays.values():
            a.attach_grad()
        with autograd.record():
            got = _as_list(mx.nd.RNN(**arrays, **params))
        autograd.backward(got, [mx.nd.array(h) for h in heads])  # d sum(out_i * head_i)
    assert len(got) == len(outs)
    for g, want in zip(got, outs):
        assert g.shape == want.shape and g.dtype == want.dtype
        onp.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5, atol=1e-5)
    if heads is not None:
        for k, a in arrays.items():
            onp.testing.assert_allclose(a.grad.asnumpy(), grads[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_npx_and_sym_match_nd():
    params, inputs, outs, _, _ = _load("lstm_l1_uni")
    got = mx.npx.rnn(**{k: mx.np.array(v) for k, v in inputs.items()}, **params)
    assert isinstance(got[0], mx.np.ndarray) and len(got) == 3
    for g, want in zip(got, outs):
        onp.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5, atol=1e-5)
    variables = {k: mx.sym.var(k) for k in inputs}
    sym = mx.sym.RNN(**variables, **params)
    assert len(sym.list_outputs()) == 3 and sym.list_arguments() == list(INPUTS)
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in inputs.items()})
    assert [tuple(s) for s in out_shapes] == [o.shape for o in outs]
    exe = sym.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in inputs.items()})
    for g, want in zip(exe.forward(), outs):
        onp.testing.assert_allclose(g.asnumpy(), want, rtol=1e-5, atol=1e-5)
    json_sym = mx.sym.fromjson(sym.tojson())
    assert json.loads(sym.tojson())["nodes"][-1]["op"] == "RNN"
    assert json_sym.list_arguments() == sym.list_arguments()


def _random_inputs(mode, layers, dirs, steps=5, batch=3, size_in=4, hidden=3):
    inputs = {"data": RNG.uniform(-1, 1, (steps, batch, size_in)).astype("float32"),
              "parameters": RNG.uniform(-0.6, 0.6, param_size(mode, layers, dirs, size_in, hidden)).astype("float32"),
              "state": RNG.uniform(-0.5, 0.5, (layers * dirs, batch, hidden)).astype("float32")}
    if mode == "lstm":
        inputs["state_cell"] = RNG.uniform(-0.5, 0.5, (layers * dirs, batch, hidden)).astype("float32")
    return inputs


@pytest.mark.parametrize("mode, layers", [("lstm", 1), ("gru", 2)])
def test_sequence_length_matches_each_sequence_alone(mode, layers):
    inputs = _random_inputs(mode, layers, 2, batch=2)
    lengths = onp.array([5, 2], "int32")
    params = {"mode": mode, "state_size": 3, "num_layers": layers, "bidirectional": True, "state_outputs": True}
    got = _as_list(mx.nd.RNN(**{k: mx.nd.array(v) for k, v in inputs.items()},
                             sequence_length=mx.nd.array(lengths, dtype="int32"), use_sequence_length=True,
                             **params))
    for n, length in enumerate(lengths):
        alone = {k: (v[:length, n:n + 1] if k == "data" else v if k == "parameters" else v[:, n:n + 1])
                 for k, v in inputs.items()}
        want = _as_list(mx.nd.RNN(**{k: mx.nd.array(v) for k, v in alone.items()}, **params))
        onp.testing.assert_allclose(got[0].asnumpy()[:length, n], want[0].asnumpy()[:, 0], rtol=1e-5, atol=1e-6)
        assert not got[0].asnumpy()[length:, n].any()  # padded steps output zeros
        for g, w in zip(got[1:], want[1:]):  # final states: each sequence's own last step
            onp.testing.assert_allclose(g.asnumpy()[:, n], w.asnumpy()[:, 0], rtol=1e-5, atol=1e-6)


def test_sequence_length_gradient_ignores_padding():
    inputs = _random_inputs("lstm", 1, 2, batch=2)
    data = mx.nd.array(inputs["data"])
    data.attach_grad()
    with autograd.record():
        out = mx.nd.RNN(data, mx.nd.array(inputs["parameters"]), mx.nd.array(inputs["state"]),
                        mx.nd.array(inputs["state_cell"]), sequence_length=mx.nd.array([5, 2], dtype="int32"),
                        use_sequence_length=True, mode="lstm", state_size=3, num_layers=1, bidirectional=True,
                        state_outputs=True)
    autograd.backward(out[0])
    grad = data.grad.asnumpy()
    assert not grad[2:, 1].any() and grad[:2, 1].all() and grad[:, 0].all()


def test_dropout_between_layers_in_training_only():
    inputs = _random_inputs("rnn_relu", 2, 1)
    arrays = {k: mx.nd.array(v) for k, v in inputs.items()}
    params = {"mode": "rnn_relu", "state_size": 3, "num_layers": 2, "p": 0.5}
    inference = mx.nd.RNN(**arrays, **params).asnumpy()
    plain = mx.nd.RNN(**arrays, **{**params, "p": 0.0}).asnumpy()
    with autograd.train_mode():
        dropped = mx.nd.RNN(**arrays, **params).asnumpy()
    onp.testing.assert_allclose(inference, plain, rtol=1e-6)
    assert not onp.allclose(dropped, plain)


def test_lstm_state_clip():
    # MXNet's CPU op ignores the clip parameters; cuDNN clips the cell state at each step
    inputs = _random_inputs("lstm", 1, 1)
    inputs["parameters"] *= 4
    arrays = {k: mx.nd.array(v) for k, v in inputs.items()}
    params = {"mode": "lstm", "state_size": 3, "num_layers": 1, "state_outputs": True}
    free = mx.nd.RNN(**arrays, **params)[2].asnumpy()
    clipped = mx.nd.RNN(**arrays, lstm_state_clip_min=-0.2, lstm_state_clip_max=0.3, **params)[2].asnumpy()
    assert free.min() < -0.2 or free.max() > 0.3
    assert clipped.min() >= -0.2 and clipped.max() <= 0.3


def test_hybridized_block_matches_imperative():
    params, inputs, outs, _, _ = _load("gru_l1_uni")

    class Net(mx.gluon.HybridBlock):
        def forward(self, data, parameters, state):
            out, h = mx.npx.rnn(data, parameters, state, mode="gru", state_size=params["state_size"],
                                num_layers=1, state_outputs=True)
            return out * 2, h

    net = Net()
    arrays = [mx.np.array(inputs[k]) for k in ("data", "parameters", "state")]
    eager = [o.asnumpy() for o in net(*arrays)]
    net.hybridize()
    for _ in range(2):
        hybrid = [o.asnumpy() for o in net(*arrays)]
        for h, e in zip(hybrid, eager):
            onp.testing.assert_allclose(h, e, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(eager[0], outs[0] * 2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad, match", [
    ({"parameters": onp.zeros(7, "float32")}, r"parameters has shape \(7,\) but \(\d+,\) is expected"),
    ({"state": onp.zeros((1, 3, 3), "float32")}, r"state has shape \(1, 3, 3\) but \(4, 3, 3\)"),
    ({"state_cell": onp.zeros((4, 2, 3), "float32")}, r"state_cell has shape"),
    ({"mode": "lstmx"}, r"mode='lstmx' is not supported"),
    ({"data": onp.zeros((5, 4), "float32")}, r"data must be 3-D"),
])
def test_errors(bad, match):
    inputs = _random_inputs("lstm", 2, 2)
    params = {"mode": "lstm", "state_size": 3, "num_layers": 2, "bidirectional": True}
    params.update({k: v for k, v in bad.items() if k == "mode"})
    inputs.update({k: v for k, v in bad.items() if k != "mode"})
    with pytest.raises(MXNetError, match=match) as info:
        mx.nd.RNN(**{k: mx.nd.array(v) for k, v in inputs.items()}, **params).asnumpy()
    assert "RNN" in str(info.value)


def test_projection_needs_lstm():
    inputs = _random_inputs("gru", 1, 1)
    with pytest.raises(MXNetError, match="projection_size=2 is only supported with mode='lstm'"):
        mx.nd.RNN(**{k: mx.nd.array(v) for k, v in inputs.items()}, mode="gru", state_size=3, num_layers=1,
                  projection_size=2)


def test_param_size_error_says_how():
    inputs = _random_inputs("gru", 1, 1)
    with pytest.raises(MXNetError, match=r"3\*H\*\(input_size \+ H \+ 2\)"):
        mx.nd.RNN(mx.nd.array(inputs["data"]), mx.nd.zeros((5,)), mx.nd.array(inputs["state"]), mode="gru",
                  state_size=3, num_layers=1)


# -------------------------------------------------------------------- RNNFused

def _init_case(name):
    record = onp.load(FIXTURES / f"{name}.npz")
    config = json.loads(str(record["params"]))
    dirs = 2 if config["bidirectional"] else 1
    size = param_size(config["mode"], config["num_layers"], dirs, config["size_in"], config["state_size"],
                      config["projection_size"])
    inits = {k: mx.init.create(v) if v.startswith("[") else v for k, v in config["inits"].items()}
    init = mx.init.RNNFused(config["mode"], config["num_layers"], config["state_size"], config["bidirectional"],
                            config["projection_size"], **inits)
    if config["default"]:
        init.set_initializer(mx.init.create(config["default"]))
    arr = mx.nd.zeros((size,))
    init(mx.init.InitDesc("rnn_param", {"__init__": init}), arr)
    return config, arr.asnumpy(), record["value"]


@pytest.mark.parametrize("name", INIT_CASES)
def test_rnn_fused_matches_mxnet(name):
    config, got, want = _init_case(name)
    assert got.shape == want.shape
    if "const" in name:  # constant sub-initializers: every value is determined
        onp.testing.assert_array_equal(got, want)
        return
    # random pieces: same pieces are random / constant, with the same range
    for values in (got, want):
        assert onp.abs(values).max() <= 1.0
    onp.testing.assert_array_equal(got == 0, want == 0)
    onp.testing.assert_array_equal(got == 1, want == 1)
    onp.testing.assert_array_equal(got == 0.5, want == 0.5)
    assert abs(onp.abs(got[want != 0]).max() - onp.abs(want[want != 0]).max()) < 0.1


def test_rnn_fused_dumps_and_create():
    init = mx.init.RNNFused("lstm", 2, 4, bidirectional=True)
    assert json.loads(init.dumps())[0] == "rnnfused"
    again = mx.init.create(init.dumps())
    assert isinstance(again, mx.init.RNNFused) and again.gates == 4 and again.dir == 2


def test_symbol_names_and_shapes_as_mxnet():
    # MXNet 2.0.0b1: output and argument names, and infer_shape from the data shape alone
    data = mx.sym.var("data")
    lstm = mx.sym.RNN(data, state_size=4, num_layers=1, mode="lstm", state_outputs=True, name="rnn0")
    assert lstm.list_outputs() == ["rnn0_output", "rnn0_state_output", "rnn0_statecell_output"]
    assert lstm.list_arguments() == ["data", "rnn0_parameters", "rnn0_state", "rnn0_state_cell"]
    args, outs, _ = lstm.infer_shape(data=(5, 2, 3))
    assert args == [(5, 2, 3), (144,), (1, 2, 4), (1, 2, 4)] and outs == [(5, 2, 4), (1, 2, 4), (1, 2, 4)]
    gru = mx.sym.RNN(data, state_size=4, num_layers=2, bidirectional=True, mode="gru", state_outputs=True,
                     name="rnn1")
    assert gru.list_outputs() == ["rnn1_output", "rnn1_state_output"]
    assert gru.list_arguments() == ["data", "rnn1_parameters", "rnn1_state"]
    args, outs, _ = gru.infer_shape(data=(5, 2, 3))
    assert args[1] == (param_size("gru", 2, 2, 3, 4),) == (552,) and outs == [(5, 2, 8), (4, 2, 4)]
