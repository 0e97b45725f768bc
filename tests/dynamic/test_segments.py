"""Hybridized blocks with dynamic-shape ops: static segments compiled, dynamic ops eager; values and
gradients equal imperative execution and NumPy; compile counts stay bounded."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd
from mxjax.dynamic import segments
from mxjax.gluon import HybridBlock, nn

RNG = onp.random.default_rng(11)


class MaskMiddle(HybridBlock):
    """Dense -> rows with positive sum -> Dense -> column sums (a dynamic op in the middle)."""

    def __init__(self):
        super().__init__()
        self.d1 = nn.Dense(8, in_units=5, activation="tanh")
        self.d2 = nn.Dense(3, in_units=8)

    def forward(self, x):
        h = self.d1(x)
        return self.d2(h[h.sum(axis=1) > 0]).sum(axis=0)


class MaskStart(HybridBlock):
    def __init__(self):
        super().__init__()
        self.d = nn.Dense(4, in_units=5)

    def forward(self, x, mask):
        return self.d(x[mask])


class MaskEnd(HybridBlock):
    def __init__(self):
        super().__init__()
        self.d = nn.Dense(4, in_units=5)

    def forward(self, x):
        h = self.d(x)
        return h[h[:, 0] > 0]


class Chained(HybridBlock):
    """Two dynamic ops in a row, then a reshape of the result (a dynamic shape fed to reshape)."""

    def __init__(self):
        super().__init__()
        self.d = nn.Dense(6, in_units=5)

    def forward(self, x):
        h = self.d(x)
        rows = h[h[:, 0] > -0.5]
        picked = mx.npx.boolean_mask(rows, rows[:, 1] < 0.5) if hasattr(mx.npx, "boolean_mask") else \
            rows[rows[:, 1] < 0.5]
        return picked.reshape(-1, 3, 2).sum(axis=(1, 2)) * 2


def _run(net, *inputs):
    with autograd.record():
        out = net(*inputs)
        loss = (out ** 2).sum()
    loss.backward()
    return out.asnumpy(), [p.grad().asnumpy().copy() for p in net.collect_params().values()]


def _both(make, *inputs):
    net = make()
    net.initialize(mx.init.Xavier())
    imperative = _run(net, *inputs)
    net.hybridize()
    hybrid = [_run(net, *inputs) for _ in range(2)]
    for got in hybrid:
        onp.testing.assert_allclose(got[0], imperative[0], rtol=1e-5, atol=1e-6)
        for g, w in zip(got[1], imperative[1]):
            onp.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    return net, imperative


def test_mask_in_the_middle_matches_imperative_and_numpy():
    x = RNG.normal(size=(12, 5)).astype(onp.float32)
    net, (out, grads) = _both(MaskMiddle, mx.np.array(x))
    w1, b1, w2, b2 = [p.data().asnumpy().astype(onp.float64) for p in net.collect_params().values()]
    h = onp.tanh(x @ w1.T + b1)
    keep = h.sum(axis=1) > 0
    want = (h[keep] @ w2.T + b2).sum(axis=0)
    onp.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    # d/dW2 of sum(out^2): 2 out_j * sum over kept rows of h
    onp.testing.assert_allclose(grads[2], 2 * want[:, None] * h[keep].sum(axis=0)[None, :], rtol=1e-4, atol=1e-5)
    stats = net.compile_stats()
    (entry,) = stats.values()
    assert entry["segments"] == 2 and entry["dynamic_ops"] == 1 and entry["eager_calls"] == [0, 0]


def test_mask_at_the_start_and_at_the_end():
    x = RNG.normal(size=(10, 5)).astype(onp.float32)
    mask = mx.np.array(RNG.random(10) > 0.4)
    _both(MaskStart, mx.np.array(x), mask)
    _both(MaskEnd, mx.np.array(x))


def test_chained_dynamic_ops_feeding_reshape():
    _both(Chained, mx.np.array(RNG.normal(size=(16, 5)).astype(onp.float32)))


def test_inference_mode_and_switching_hybridize_off_and_on():
    net = MaskMiddle()
    net.initialize()
    x = mx.np.array(RNG.normal(size=(9, 5)).astype(onp.float32))
    want = net(x).asnumpy()
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    net.hybridize(active=False)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    net.hybridize(static_alloc=True, static_shape=True)
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="dynamic-shape ops.*_getitem_mask|dynamic-shape ops"):
        net.hybridize(partition_if_dynamic=False)
        net(x)


class MaskThenColumnSoftmax(HybridBlock):
    """A softmax over the selected rows mixes them: padding them to a bucket would be wrong."""

    def __init__(self):
        super().__init__()
        self.d = nn.Dense(4, in_units=5)

    def forward(self, x, mask):
        h = self.d(x[mask])
        return h * mx.npx.softmax(h, axis=0)


@pytest.mark.parametrize("block, bucketed", [(MaskStart, True), (MaskThenColumnSoftmax, False)])
def test_compile_counts_are_bounded_over_random_mask_counts(block, bucketed):
    net = block()
    net.initialize()
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    batches = 100 if bucketed else 30  # the eager fallback is slow by design: fewer batches show it
    data = RNG.normal(size=(batches, 24, 5)).astype(onp.float32)
    masks = RNG.random((batches, 24)) < RNG.random((batches, 1))  # row counts spread over 0..24
    counts = {int(m.sum()) for m in masks}
    assert len(counts) > segments.MAX_SIGNATURES
    for batch, mask in zip(data, masks):
        with autograd.record():
            loss = (net(mx.np.array(batch), mx.np.array(mask)) ** 2).sum()
        loss.backward()
        trainer.step(1)
        assert bool((net.d.weight.grad().asnumpy() != 0).any()) == bool(mask.any())
    (entry,) = net.compile_stats().values()
    assert entry["segments"] == 1 and entry["dynamic_ops"] == 1 and entry["calls"] == [batches]
    if bucketed:  # one program per power-of-two bucket (2, 4, 8, 16, then the full 24 rows)
        buckets = {min(max(2, 1 << max(c - 1, 0).bit_length()), 24) for c in counts}
        assert entry["compiled"] == [len(buckets)] and entry["eager_calls"] == [0]
        assert entry["bucketed_calls"] == [100]
    else:  # compiled per row count up to the limit, then eager
        assert entry["compiled"] == [segments.MAX_SIGNATURES] and entry["bucketed_calls"] == [0]
        assert 0 < entry["eager_calls"][0] < batches


def test_symbol_bind_on_a_graph_with_a_dynamic_op():
    from mxjax import _deferred_compute as dc
    a_host = RNG.normal(size=(7, 4))
    w_host = RNG.normal(size=(4, 3))
    a, w = mx.np.array(a_host), mx.np.array(w_host)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        dc.set_variable(w, mx.sym.var("w"))
        h = mx.np.dot(a, w)
        sym = dc.get_symbol((h[h[:, 0] > 0] ** 2).sum())
    grad = mx.np.zeros((4, 3))
    ex = sym.bind(mx.cpu(), {"a": a, "w": w}, args_grad={"w": grad}, grad_req={"a": "null", "w": "write"})
    for host in (a_host, -a_host):  # a different mask on the second call
        out = ex.forward(is_train=True, a=mx.np.array(host))[0]
        ex.backward()
        h = host @ w_host
        keep = h[:, 0] > 0
        onp.testing.assert_allclose(out.asnumpy(), (h[keep] ** 2).sum(), rtol=1e-5)
        onp.testing.assert_allclose(grad.asnumpy(), 2 * host[keep].T @ h[keep], rtol=1e-4, atol=1e-5)
