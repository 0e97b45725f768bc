"""gluon.nn normalization layers and Embedding: NumPy references, running statistics, hybridize."""
import functools
import pathlib

import numpy as onp
import pytest
from oracle import check_hybrid as oracle_check_hybrid

import mxjax as mx
from mxjax import autograd
from mxjax.gluon import nn

RNG = onp.random.default_rng(1)


def _rand(*shape):
    return RNG.normal(size=shape).astype(onp.float32)


check_hybrid = functools.partial(oracle_check_hybrid, rtol=0.0001, atol=1e-05)


def _normalize(x, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / onp.sqrt(x.var(axis=axes, keepdims=True) + eps)


def _set(block, **values):
    for name, value in values.items():
        getattr(block, name).set_data(mx.np.array(value))


def _bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


@pytest.mark.parametrize("axis, shape", [(1, (4, 3, 2, 2)), (-1, (5, 3))])
def test_batch_norm_training_output_and_running_stats(axis, shape):
    x1, x2 = _rand(*shape), _rand(*shape) * 2 + 1
    c = shape[axis]
    reduce = tuple(i for i in range(len(shape)) if i != axis % len(shape))
    results = []
    for hybrid in (False, True):
        bn = nn.BatchNorm(axis=axis, momentum=0.8)
        bn.initialize()
        if hybrid:
            bn.hybridize()
        gamma, beta = _rand(c), _rand(c)
        bn(mx.np.array(x1))                    # inference call: infers shapes, leaves the stats alone
        _set(bn, gamma=gamma, beta=beta)
        for x in (x1, x2):
            with autograd.record():
                out = bn(mx.np.array(x))
            want = _normalize(x, reduce, 1e-5) * _bcast(gamma, x.ndim, axis) + _bcast(beta, x.ndim, axis)
            onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-4, atol=1e-4)
        mean, var = onp.zeros(c), onp.ones(c)
        for x in (x1, x2):                     # MXNet's recurrence, with the biased batch variance
            mean = 0.8 * mean + 0.2 * x.mean(axis=reduce)
            var = 0.8 * var + 0.2 * x.var(axis=reduce)
        onp.testing.assert_allclose(bn.running_mean.data().asnumpy(), mean, rtol=1e-5, atol=1e-6)
        onp.testing.assert_allclose(bn.running_var.data().asnumpy(), var, rtol=1e-5, atol=1e-6)
        assert bn.running_mean.grad_req == "null"
        # inference uses the running statistics
        out = bn(mx.np.array(x1)).asnumpy()
        want = (x1 - _bcast(mean, x1.ndim, axis)) / onp.sqrt(_bcast(var, x1.ndim, axis) + 1e-5)
        onp.testing.assert_allclose(out, want * _bcast(gamma, x1.ndim, axis) + _bcast(beta, x1.ndim, axis),
                                    rtol=1e-4, atol=1e-4)
        results.append(bn.running_var.data().asnumpy())
    onp.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_batch_norm_hybrid_gradients_and_options():
    bn = nn.BatchNorm(in_channels=3)
    assert bn.gamma.shape == (3,)
    bn.initialize()
    check_hybrid(bn, _rand(4, 3, 2))
    fixed = nn.BatchNorm(scale=False, center=False, use_global_stats=True)
    fixed.initialize()
    x = _rand(2, 3, 2)
    with autograd.record():
        out = fixed(mx.np.array(x))
    onp.testing.assert_allclose(out.asnumpy(), x / onp.sqrt(1 + 1e-5), rtol=1e-5)   # running stats 0 / 1
    onp.testing.assert_allclose(fixed.running_mean.data().asnumpy(), 0)
    assert fixed.gamma.grad_req == "null" and fixed.beta.grad_req == "null"


def test_layer_group_instance_norm_match_numpy():
    x = _rand(2, 4, 3)
    ln = nn.LayerNorm()
    ln.initialize()
    ln(mx.np.array(x))
    assert ln.gamma.shape == (3,)
    g, b = _rand(3), _rand(3)
    _set(ln, gamma=g, beta=b)
    out = check_hybrid(ln, x)
    onp.testing.assert_allclose(out, _normalize(x, (-1,), 1e-5) * g + b, rtol=1e-4, atol=1e-5)

    ln1 = nn.LayerNorm(axis=1, epsilon=1e-3, in_channels=4)
    ln1.initialize()
    onp.testing.assert_allclose(check_hybrid(ln1, x), _normalize(x, (1,), 1e-3), rtol=1e-4, atol=1e-5)

    gn = nn.GroupNorm(num_groups=2)
    gn.initialize()
    gn(mx.np.array(x))
    g, b = _rand(4), _rand(4)
    _set(gn, gamma=g, beta=b)
    want = _normalize(x.reshape(2, 2, 2, 3), (2, 3), 1e-5).reshape(x.shape) * g[:, None] + b[:, None]
    onp.testing.assert_allclose(check_hybrid(gn, x), want, rtol=1e-4, atol=1e-5)

    inorm = nn.InstanceNorm(scale=True)
    inorm.initialize()
    inorm(mx.np.array(x))
    _set(inorm, gamma=g, beta=b)
    want = _normalize(x, (2,), 1e-5) * g[:, None] + b[:, None]
    onp.testing.assert_allclose(check_hybrid(inorm, x), want, rtol=1e-4, atol=1e-5)

    last = nn.InstanceNorm(axis=-1, center=False)
    last.initialize()
    y = _rand(2, 3, 4)
    out = check_hybrid(last, y)
    assert last.gamma.shape == (4,)
    onp.testing.assert_allclose(out, _normalize(y, (1,), 1e-5), rtol=1e-4, atol=1e-5)


def test_norm_errors():
    gn = nn.GroupNorm(num_groups=3)
    gn.initialize()
    with pytest.raises(mx.MXNetError, match=r"GroupNorm.*num_groups=3 must divide the 4 channels"):
        gn(mx.np.ones((2, 4, 3)))
    ln = nn.LayerNorm(axis=3)
    ln.initialize()
    with pytest.raises(mx.MXNetError, match=r"LayerNorm: axis=3 is out of range.*\(2, 3\)"):
        ln(mx.np.ones((2, 3)))
    bn = nn.BatchNorm(in_channels=3)
    bn.initialize()
    with pytest.raises(mx.MXNetError, match="BatchNorm"):
        bn(mx.np.ones((2, 4)))


def test_embedding():
    emb = nn.Embedding(6, 3)
    emb.initialize()
    idx = onp.array([[0, 5], [2, 2]])
    x = mx.np.array(idx, dtype="int32")
    out = emb(x)
    table = emb.weight.data().asnumpy()
    assert out.shape == (2, 2, 3) and out.dtype == onp.float32
    onp.testing.assert_allclose(out.asnumpy(), table[idx])
    with autograd.record():
        loss = emb(x).sum()
    loss.backward()
    want = onp.zeros((6, 3))
    onp.add.at(want, idx.ravel(), 1)
    onp.testing.assert_allclose(emb.weight.grad().asnumpy(), want)
    emb.hybridize()
    onp.testing.assert_allclose(emb(x).asnumpy(), table[idx])
    emb.hybridize(False)
    assert repr(emb) == "Embedding(6 -> 3, float32)"
    with pytest.raises(mx.MXNetError, match="sparse_grad"):
        nn.Embedding(6, 3, sparse_grad=True)


MXNET20 = onp.load(pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gluon_api"
                   / "block_api_mxnet20.npz")


def test_batch_norm_relu_matches_mxnet20():
    block = nn.BatchNormReLU(in_channels=3)
    block.initialize()
    block.running_mean.set_data(mx.np.array([0.2, -0.3, 0.1]))
    block.running_var.set_data(mx.np.array([0.5, 2.0, 1.0]))
    block.gamma.set_data(mx.np.array([1.5, 0.5, -1.0]))
    x = MXNET20["bnr_x"]
    onp.testing.assert_allclose(block(mx.np.array(x)).asnumpy(), MXNET20["bnr_predict"], rtol=1e-5, atol=1e-6)
    with autograd.record():
        out = block(mx.np.array(x))
    onp.testing.assert_allclose(out.asnumpy(), MXNET20["bnr_train"], rtol=1e-5, atol=1e-5)
    # the running statistics move as BatchNorm's do (MXNet 2.0.0b1's fused CPU op leaves them put)
    want = 0.9 * onp.array([0.2, -0.3, 0.1]) + 0.1 * x.mean(axis=(0, 2, 3))
    onp.testing.assert_allclose(block.running_mean.data().asnumpy(), want, rtol=1e-5)
    fresh = nn.BatchNormReLU(in_channels=3)
    fresh.initialize()
    check_hybrid(fresh, x)


def test_sync_batch_norm_is_batch_norm_over_the_whole_batch():
    x = _rand(4, 3, 2, 2)
    sync, plain = nn.SyncBatchNorm(num_devices=2), nn.BatchNorm()
    sync.initialize()
    plain.initialize()
    with autograd.record():
        a, b = sync(mx.np.array(x)), plain(mx.np.array(x))
    onp.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    want = (x - x.mean(axis=(0, 2, 3), keepdims=True)) / onp.sqrt(x.var(axis=(0, 2, 3), keepdims=True) + 1e-5)
    onp.testing.assert_allclose(a.asnumpy(), want, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(sync.running_var.data().asnumpy(), plain.running_var.data().asnumpy())
    with pytest.raises(ValueError, match="SyncBatchNorm: num_devices must be a positive int, got 0"):
        nn.SyncBatchNorm(num_devices=0)
