"""MXNet 1.x's ``hybrid_forward(F, x, **params)`` blocks: imperative (F = mx.nd), hybridized (F = mx.sym),
against what MXNet 1.9.1 computed for the same block and weights (tools/make_gluon_fixtures.py)."""
import contextlib
import importlib.util
import json
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gluon_api"
X = onp.random.default_rng(0).normal(size=(2, 3)).astype(onp.float32)


def _tool():
    spec = importlib.util.spec_from_file_location("make_gluon_fixtures", ROOT / "tools" / "make_gluon_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def legacy():
    tool = _tool()
    net = tool.legacy_classes(mx)()
    net.load_parameters(str(FIXTURE / "legacy.params"))
    return net, onp.load(FIXTURE / "legacy_mxnet191.npz")


def _close(actual, expected):
    onp.testing.assert_allclose(actual.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_imperative_hybridized_and_training_match_mxnet191(legacy):
    net, ref = legacy
    x = mx.nd.array(ref["x"])
    net.hybridize(False)
    out, pooled = net(x)
    _close(out, ref["imperative_out"])
    _close(pooled, ref["imperative_pooled"])
    net.hybridize()
    out, pooled = net(x)
    _close(out, ref["hybrid_out"])
    _close(pooled, ref["hybrid_pooled"])
    graph = net._cache.programs()[0][1].symbol
    assert graph.list_inputs() == ["data", "weight", "bias", "gamma", "beta", "running_mean", "running_var",
                                   "scale.alpha", "out.weight", "out.bias"]
    saved = {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}
    for active in (True, False):
        net.hybridize(active)
        _check_training_step(net, x, ref)
        net.load_dict(saved)


def _check_training_step(net, x, ref):
    """Batch statistics; the running ones move; gradients of every parameter."""
    with autograd.record():
        out, pooled = net(x)
        total = out.sum() + pooled.sum()
    total.backward()
    _close(out, ref["train_out"])
    _close(pooled, ref["train_pooled"])
    _close(net.weight.grad(), ref["weight_grad"])
    _close(net.out.weight.grad(), ref["out_weight_grad"])
    _close(net.scale.alpha.grad(), ref["alpha_grad"])
    _close(net.running_mean.data(), ref["running_mean"])
    _close(net.running_var.data(), ref["running_var"])


def test_export_is_what_mxnet191_ran(legacy, tmp_path):
    net, ref = legacy
    net.hybridize()
    net(mx.nd.array(ref["x"]))
    symbol_file, params_file = net.export(str(tmp_path / "legacy"))
    ops = [(n["op"], n.get("attrs", {})) for n in json.loads(pathlib.Path(symbol_file).read_text())["nodes"]]
    ran = [(n["op"], n.get("attrs", {})) for n in json.loads((FIXTURE / "legacy-symbol.json").read_text())["nodes"]]
    assert ops == ran and ("FullyConnected", {"num_hidden": "6"}) in ops
    mxnet = onp.load(FIXTURE / "legacy_export_mxnet191.npz")  # MXNet 1.9.1 ran the committed export
    _close(mx.nd.array(mxnet["out"]), ref["hybrid_out"])
    block = gluon.SymbolBlock.imports(symbol_file, ["data"], params_file)
    out, pooled = block(mx.nd.array(ref["x"]))
    _close(out, mxnet["out"])
    _close(pooled, mxnet["pooled"])


class Affine(gluon.HybridBlock):
    """1.x custom layer: deferred shape from self.params.get, a constant, F recorded per call."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(4, 0), allow_deferred_init=True)
            self.shift = self.params.get_constant("shift", [1.0, 2.0, 3.0, 4.0])
        self.namespaces = []

    def hybrid_forward(self, F, x, weight, shift):
        self.namespaces.append((F, type(x)))
        return F.broadcast_add(F.FullyConnected(x, weight, no_bias=True, num_hidden=4), shift.reshape((1, -1)))


def _affine_numpy(block):
    return X @ block.weight.data().asnumpy().T + onp.array([1.0, 2.0, 3.0, 4.0], onp.float32)


def test_F_is_nd_imperatively_and_sym_hybridized_with_deferred_shapes():
    block = Affine()
    block.initialize()
    out = block(mx.nd.array(X))
    assert block.weight.shape == (4, 3) and block.shift.dtype == onp.float32
    assert block.namespaces[-1] == (mx.nd, type(mx.nd.array(X)))
    _close(out, _affine_numpy(block))
    block.hybridize()
    out = block(mx.np.array(X))
    assert block.namespaces[-1] == (mx.sym, mx.sym.Symbol)
    _close(out, _affine_numpy(block))


def test_mixing_1x_and_2x_blocks_both_ways():
    inner = Affine()
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=3), inner, nn.Activation("relu"))
    net.initialize()
    x = mx.np.array(X)
    imperative = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), imperative, rtol=1e-6)
    assert list(net.collect_params()) == ["0.weight", "0.bias", "1.weight", "1.shift"]
    dense = net[0].weight.data().asnumpy(), net[0].bias.data().asnumpy()
    want = onp.maximum((X @ dense[0].T + dense[1]) @ inner.weight.data().asnumpy().T + [1, 2, 3, 4], 0)
    onp.testing.assert_allclose(imperative, want, rtol=1e-5, atol=1e-6)


def test_called_on_a_symbol_gives_the_graph_with_structural_names():
    block = Affine()
    block.initialize()
    block(mx.nd.array(X))
    graph = block(mx.sym.var("data"))
    assert isinstance(graph, mx.sym.Symbol) and graph.list_inputs() == ["data", "weight", "shift"]
    dense = nn.Dense(2)
    with pytest.raises(mx.MXNetError, match="Dense: a block defined by forward"):
        dense(mx.sym.var("data"))


def test_attribute_name_is_the_keyword():
    class Renamed(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = self.params.get("weight", shape=(3,), init="ones")

        def hybrid_forward(self, F, x, w):
            return F.broadcast_mul(x, w)

    block = Renamed()
    block.initialize()
    assert list(block.params) == ["w"]
    _close(block(mx.nd.array(X)), X)


def test_a_missing_parameter_names_the_block():
    class Missing(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.weight = gluon.Parameter("weight", shape=(3,))

        def hybrid_forward(self, F, x, weight, bias):
            return x * weight + bias

    block = Missing()
    block.initialize()
    with pytest.raises(mx.MXNetError, match=r"Missing.hybrid_forward.*\['weight'\].*'bias'"):
        block(mx.nd.array(X))
    block.hybridize()
    with pytest.raises(mx.MXNetError, match=r"Missing.hybrid_forward.*'bias'"):
        block(mx.nd.array(X))


def test_collect_params_dict_has_1x_methods():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3), Affine())
    params = net.collect_params()
    params.initialize(mx.init.One())
    assert net[0].weight.data().asnumpy().tolist() == [[1, 1, 1]] * 2
    with pytest.warns(UserWarning, match="Constant parameter 'shift' does not support grad_req"):
        params.setattr("grad_req", "add")
    assert net[1].shift.grad_req == "null"
    assert {p.grad_req for p in net.collect_params(".*weight").values()} == {"add"}
    with autograd.record():
        out = net(mx.np.array(X))
    out.backward()
    params.zero_grad()
    assert not net[0].weight.grad().asnumpy().any()


class _StateCell(gluon.HybridBlock):
    """A 1.x recurrent cell: its states come and go as a list beside the output (deferred weight)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(4, 0), allow_deferred_init=True)

    def hybrid_forward(self, F, x, states, weight):
        h = F.tanh(F.FullyConnected(x, weight, no_bias=True, num_hidden=4) + states[0])
        return h, [h, states[1] + 1]


class _StateParent(gluon.HybridBlock):
    """A 1.x block handing its list of states to a child on Symbols."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.cell = _StateCell()

    def hybrid_forward(self, F, x, states):
        out, new = self.cell(x, states)
        return out * 2, new


@pytest.mark.parametrize("parent", [False, True])
def test_a_hybridized_hybrid_forward_takes_and_returns_lists_of_states(parent):
    """As MXNet 1.9.1 flattens a hybridized block's nested inputs and regroups its outputs (every
    container a list: it gives [h, [h, s1]]); values and gradients against NumPy."""
    net = _StateParent() if parent else _StateCell()
    cell = net.cell if parent else net
    net.initialize(mx.init.Uniform(0.5))
    rng = onp.random.default_rng(1)
    s0, s1 = (rng.normal(size=(2, 4)).astype(onp.float32) for _ in range(2))
    x = mx.nd.array(X)
    imperative = net(x, [mx.nd.array(s0), mx.nd.array(s1)])
    assert cell.weight.shape == (4, 3) and isinstance(imperative, tuple) and isinstance(imperative[1], list)
    w = cell.weight.data().asnumpy()
    h = onp.tanh(X @ w.T + s0)
    scale = 2 if parent else 1
    net.hybridize()
    for states in ([mx.nd.array(s0), mx.nd.array(s1)], (mx.nd.array(s0), mx.nd.array(s1))):
        out = net(x, states)
        assert isinstance(out, list) and isinstance(out[1], list) and len(out[1]) == 2
        for got, want in zip((imperative[0], out[0], out[1][0], out[1][1]), (scale * h, scale * h, h, s1 + 1)):
            onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    state = mx.nd.array(s0)
    state.attach_grad()
    with autograd.record():
        out, (_, new) = net(x, [state, mx.nd.array(s1)])
        loss = (out * 3 + new).sum()
    loss.backward()
    delta = 3 * scale * (1 - h ** 2)  # d loss / d (the FullyConnected output + s0)
    onp.testing.assert_allclose(state.grad.asnumpy(), delta, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(cell.weight.grad().asnumpy(), delta.T @ X, rtol=1e-5, atol=1e-5)


def test_infer_shape_and_infer_type_take_lists_of_states():
    """1.x's ``infer_shape`` then ``infer_type`` on nested inputs, before any forward (MXNet 1.9.1
    gives (4, 3) and float32); the parameter is then initialized with that shape."""
    cell = _StateCell()
    cell.initialize(mx.init.Constant(0.1))
    x, states = mx.nd.array(X), [mx.nd.zeros((2, 4)), mx.nd.zeros((2, 4))]
    cell.infer_shape(x, states)
    assert cell.weight.shape == (4, 3)
    cell.infer_type(x, states)
    assert cell.weight.dtype == onp.float32
    onp.testing.assert_allclose(cell.weight.data().asnumpy(), onp.full((4, 3), 0.1, onp.float32))


class _Scaled(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(3,))

    def hybrid_forward(self, F, x, weight):
        return F.relu(F.broadcast_mul(x, weight)), x * 2


def test_a_hybridized_1x_block_gives_mx_nd_arrays_for_mx_nd_inputs():
    """As MXNet 1.9.1: ``mx.nd`` arrays in, ``mx.nd`` arrays out, hybridized or not, recorded or not
    -- so 1.x code after the block keeps ``mx.nd``'s semantics (``reshape``'s 0 copies a dimension)."""
    block = _Scaled()
    block.initialize(mx.init.Constant(-0.5))
    x = mx.nd.array(onp.arange(-3, 3, dtype=onp.float32).reshape(2, 3))
    x.attach_grad()
    want = (onp.maximum(x.asnumpy() * -0.5, 0), x.asnumpy() * 2)
    for hybridize in (False, True):
        block.hybridize(hybridize)
        for record in (False, True):
            with autograd.record() if record else contextlib.nullcontext():
                outs = block(x)
                loss = (outs[0] * 3 + outs[1]).sum() if record else None
            for out, expected in zip(outs, want):
                assert type(out) is mx.nd.NDArray
                assert out.reshape((0, -1)).shape == (2, 3)
                _close(out, expected)
            if record:
                loss.backward()
                _close(x.grad, onp.where(x.asnumpy() * -0.5 > 0, -1.5, 0) + 2)


def test_built_in_layers_and_losses_give_mx_nd_arrays_for_mx_nd_inputs():
    """A 1.x script's HybridSequential of built-in layers and its loss, fed mx.nd arrays: mx.nd arrays
    out, hybridized or not, recorded or not, as MXNet 1.9.1 gives them (checked there; MXNet 2.0's
    blocks refuse mx.nd inputs, so no 2.0 program meets this).  Values and gradients are those of the
    same network on mx.np arrays; nested outputs (an LSTM's states) keep their lists."""
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    mx.random.seed(0)
    net.initialize(mx.init.Uniform(1.0))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    data = onp.linspace(-1, 1, 12, dtype=onp.float32).reshape(4, 3)
    label = onp.array([0, 1, 1, 0], onp.float32)
    reference = mx.np.array(data)
    reference.attach_grad()
    with autograd.record():
        want = net(reference)
        loss_fn(want, mx.np.array(label)).backward()
    want, want_grad = want.asnumpy(), reference.grad.asnumpy()
    assert onp.abs(want_grad).sum() > 0
    for hybridize in (False, True):
        net.hybridize(hybridize)
        for record in (False, True):
            x = mx.nd.array(data)
            x.attach_grad()
            with autograd.record() if record else contextlib.nullcontext():
                out = net(x)
                loss = loss_fn(out, mx.nd.array(label))
            assert type(out) is mx.nd.NDArray and type(loss) is mx.nd.NDArray
            _close(out, want)
            assert out.argmax(axis=1).dtype == onp.float32  # legacy argmax, as 1.9.1
            if record:
                loss.backward()
                assert type(x.grad) is mx.nd.NDArray
                _close(x.grad, want_grad)
    lstm = gluon.rnn.LSTM(3, input_size=2)
    lstm.initialize(mx.init.Constant(0.1))
    out, states = lstm(mx.nd.ones((2, 1, 2)), lstm.begin_state(batch_size=1, func=mx.nd.zeros))
    assert type(out) is mx.nd.NDArray and isinstance(states, list)
    assert all(type(s) is mx.nd.NDArray for s in states)
