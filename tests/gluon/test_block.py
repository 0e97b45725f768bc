"""Block/HybridBlock core: registration, parameters, deferred init, hybridize == imperative, export."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn

RNG = onp.random.default_rng(0)
X = RNG.normal(size=(4, 5)).astype(onp.float32)


def _mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    return net


def _loss_and_grads(net, x):
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    return loss.item(), [p.grad().asnumpy().copy() for p in net.collect_params().values()]


def test_structural_names_and_deferred_shapes():
    net = _mlp()
    assert list(net.collect_params()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert net[0].weight.shape == (8, -1)                # unknown until the first input (-1, as MXNet 2.0)
    with pytest.raises(mx.MXNetError, match="not been initialized yet"):
        net[0].weight.data()
    net(mx.np.array(X))
    assert net[0].weight.shape == (8, 5) and net[1].weight.shape == (3, 8)
    assert list(net.collect_params(".*bias")) == ["0.bias", "1.bias"]


def test_dense_matches_numpy():
    net = _mlp()
    out = net(mx.np.array(X)).asnumpy()
    w0, b0, w1, b1 = [p.data().asnumpy() for p in net.collect_params().values()]
    want = onp.maximum(X @ w0.T + b0, 0) @ w1.T + b1
    onp.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_hybridized_equals_imperative_values_and_gradients():
    net = _mlp()
    x = mx.np.array(X)
    loss_i, grads_i = _loss_and_grads(net, x)
    net.hybridize()
    loss_h, grads_h = _loss_and_grads(net, x)
    assert net._cache  # the cached op was built
    onp.testing.assert_allclose(loss_h, loss_i, rtol=1e-5)
    for gi, gh in zip(grads_i, grads_h):
        onp.testing.assert_allclose(gh, gi, rtol=1e-5, atol=1e-6)
    net.hybridize(active=False)
    loss_again, _ = _loss_and_grads(net, x)
    onp.testing.assert_allclose(loss_again, loss_i, rtol=1e-5)


def test_hybridized_call_is_one_tape_node():
    net = _mlp()
    x = mx.np.array(X)
    net(x)
    net.hybridize()
    with autograd.record():
        out = net(x)
    node = out._ag[0]
    assert node.name == "HybridSequential" and all(
        e is None or not isinstance(e, tuple) for e in node.entries)   # inputs are leaves: one node


class OldStyle(gluon.HybridBlock):
    """A 1.x block with hybrid_forward(F, x, *params)."""

    def __init__(self):
        super().__init__()
        self.scale = gluon.Parameter("scale", shape=(5,), init="ones")

    def hybrid_forward(self, F, x, scale):
        return F.sum(x * scale, axis=1)


def test_hybrid_forward_blocks_run_both_ways():
    block = OldStyle()
    block.initialize()
    x = mx.np.array(X)
    want = X.sum(axis=1)
    onp.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-5)
    block.hybridize()
    onp.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-5)


def test_save_load_and_errors(tmp_path):
    net = _mlp()
    x = mx.np.array(X)
    out = net(x).asnumpy()
    path = str(tmp_path / "net.params")
    net.save_parameters(path)
    other = _mlp()
    other.load_parameters(path)
    onp.testing.assert_allclose(other(x).asnumpy(), out, rtol=1e-6)
    small = nn.HybridSequential()
    small.add(nn.Dense(8, in_units=5))
    small.initialize()
    with pytest.raises(mx.MXNetError, match=r"has values for \['1.weight', '1.bias'\]"):
        small.load_parameters(path)
    small.load_parameters(path, ignore_extra=True)
    bigger = _mlp()
    bigger.add(nn.Dense(2))
    with pytest.raises(mx.MXNetError, match=r"no values for parameters \['2.weight', '2.bias'\]"):
        bigger.load_parameters(path)
    wrong = nn.HybridSequential()
    wrong.add(nn.Dense(7, in_units=5), nn.Dense(3, in_units=7))
    wrong.initialize()
    with pytest.raises(mx.MXNetError, match=r"'0.weight'.*shape \(7, 5\).*\(8, 5\)"):
        wrong.load_parameters(path)


def test_export_writes_mxnet_files(tmp_path):
    net = _mlp()
    x = mx.np.array(X)
    with pytest.raises(mx.MXNetError, match="hybridize"):
        net.export(str(tmp_path / "m"))
    net.hybridize()
    out = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "m"), epoch=3)
    assert params_file.endswith("m-0003.params")
    sym = mx.sym.load(sym_file)
    params = mx.nd.load(params_file)
    assert sorted(params) == ["arg:0.bias", "arg:0.weight", "arg:1.bias", "arg:1.weight"]
    args = {k[4:]: v for k, v in params.items()}
    (got,) = sym.eval(data=x, **args)
    onp.testing.assert_allclose(got.asnumpy(), out, rtol=1e-5)


def test_uninitialized_block_is_a_clear_error():
    net = nn.Dense(3, in_units=5)
    with pytest.raises(mx.MXNetError, match="has not been initialized"):
        net(mx.np.array(X))


def test_summary_lists_layers_shapes_and_parameter_counts(capsys):
    net = _mlp()
    net.hybridize()
    net.summary(mx.np.array(X))
    out = capsys.readouterr().out
    assert "hybridsequential.0(Dense)" in out and "(4, 8)" in out and "(4, 3)" in out
    assert f"Total params: {5 * 8 + 8 + 8 * 3 + 3}" in out
    assert net._active  # hybridization restored after the imperative pass


def test_summary_shows_nested_inputs_and_outputs_as_mxnet_does(capsys):
    """mxnet 2.0.0b1 prints ``(4, 5), [(4, 5), (4, 5)]`` for an input beside a list of states, and
    ``(4, 5), [(4, 5), [(4, 5), (4, 5)]]`` for the output beside the new states."""
    net = _Nested()
    net.initialize()
    x = mx.np.array(RNG.normal(size=(4, 5)).astype(onp.float32))
    net.summary(x, [x, x])
    rows = {line.split("  ")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "(4, 5), [(4, 5), (4, 5)]" in rows["Input"]
    assert "(4, 5), [(4, 5), [(4, 5), (4, 5)]]" in rows["_nested(_Nested)"]
    assert "(4, 5)" in rows["_nested.dense(Dense)"]


class _Nested(gluon.HybridBlock):
    """Nested inputs and outputs, as MXNet's word language model passes an LSTM's states."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(5, in_units=5)

    def forward(self, x, states):
        h, c = states
        y = self.dense(x) + h
        return y, [y * c, (c + 1, h)]


def test_hybridized_block_takes_and_returns_nested_lists_of_arrays():
    """MXNet 2.0 flattens a hybridized block's nested inputs and outputs and regroups them (every
    container as a list: mxnet 2.0.0b1 and 1.9.1 give [y, [yc, [c1, h1]]]); the values equal the
    block run imperatively, and so do the gradients."""
    net = _Nested()
    net.initialize()
    x, h, c = (mx.np.array(RNG.normal(size=(4, 5)).astype(onp.float32)) for _ in range(3))
    want = net(x, [h, c])
    w, b = net.dense.weight.data().asnumpy(), net.dense.bias.data().asnumpy()
    y = x.asnumpy() @ w.T + b + h.asnumpy()
    onp.testing.assert_allclose(want[1][0].asnumpy(), y * c.asnumpy(), rtol=1e-5)
    net.hybridize()
    for states in ([h, c], (h, c)):
        got = net(x, states)
        assert isinstance(got, list) and isinstance(got[1], list) and isinstance(got[1][1], list)
        for g, e in zip((got[0], got[1][0], *got[1][1]), (want[0], want[1][0], *want[1][1])):
            onp.testing.assert_allclose(g.asnumpy(), e.asnumpy(), rtol=1e-6)
    # as an LSTM's states: differentiated through, hybridized or not
    grads = []
    for hybridize in (False, True):
        net.hybridize(hybridize)
        h.attach_grad()
        with autograd.record():
            y, (yc, (c1, h1)) = net(x, [h, c])
            loss = (yc * c1).sum() + h1.sum()
        loss.backward()
        grads.append((h.grad.asnumpy().copy(), net.dense.weight.grad().asnumpy().copy()))
    for imperative, hybridized in zip(*grads):
        onp.testing.assert_allclose(hybridized, imperative, rtol=1e-5, atol=1e-6)
    # d loss / d h = c * (c + 1) + 1 (y = dense(x) + h)
    onp.testing.assert_allclose(grads[0][0], c.asnumpy() * (c.asnumpy() + 1) + 1, rtol=1e-5)
