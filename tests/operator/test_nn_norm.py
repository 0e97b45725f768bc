"""BatchNorm (inference, training, moving statistics), LayerNorm, GroupNorm, InstanceNorm,
L2Normalization and LRN against NumPy references."""
import functools

import jax
import numpy as onp
import pytest
from oracle import check, run_op

import mxjax as mx
from mxjax import _config
import mxjax.numpy_extension as npx
from mxjax._ndarray import invoke
from mxjax.operator import get_op

_run = run_op
_check = functools.partial(check, rtol=0.0001, atol=1e-05)
RNG = onp.random.default_rng(2)


def _x(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _a(x):
    return mx.np.array(x)


def _bshape(ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return shape


def bn_ref(x, gamma, beta, mean, var, eps, axis, fix_gamma):
    shape = _bshape(x.ndim, axis)
    g = onp.ones_like(gamma) if fix_gamma else gamma
    x = x.astype(onp.float64)
    return (x - mean.reshape(shape)) / onp.sqrt(var.reshape(shape) + eps) * g.reshape(shape) + beta.reshape(shape)


@pytest.fixture
def training():
    """Training mode on, as ``autograd.record(train_mode=True)`` sets it."""
    with _config.training(True):
        yield


@pytest.mark.parametrize("axis,fix_gamma", [(1, True), (1, False), (-1, False)])
def test_batch_norm_inference_uses_moving_stats(axis, fix_gamma):
    x = _x(2, 3, 4)
    c = x.shape[axis]
    gamma, beta, mean, var = _x(c), _x(c), _x(c), onp.abs(_x(c)) + 0.5
    got = npx.batch_norm(_a(x), _a(gamma), _a(beta), _a(mean), _a(var), axis=axis, fix_gamma=fix_gamma)
    _check(got, bn_ref(x, gamma, beta, mean, var, 1e-3, axis % 3, fix_gamma))


def test_batch_norm_training_batch_stats_and_moving_update(training):
    x = _x(4, 3, 2, 2)
    gamma, beta = _x(3), _x(3)
    run_mean, run_var = _a(onp.zeros(3, "float32")), _a(onp.ones(3, "float32"))
    out, mean, invstd = npx.batch_norm(_a(x), _a(gamma), _a(beta), run_mean, run_var, fix_gamma=False,
                                       momentum=0.8, eps=1e-5, output_mean_var=True)
    batch_mean = x.astype(onp.float64).mean((0, 2, 3))
    batch_var = x.astype(onp.float64).var((0, 2, 3))  # biased, as MXNet's CPU op
    _check(out, bn_ref(x, gamma, beta, batch_mean, batch_var, 1e-5, 1, False))
    _check(mean, batch_mean)
    _check(invstd, 1 / onp.sqrt(batch_var + 1e-5))  # MXNet's second extra output is the inverse std
    _check(run_mean, 0.2 * batch_mean)
    _check(run_var, 0.8 + 0.2 * batch_var)
    # use_global_stats: the moving statistics normalize and stay unchanged even in training
    before = run_mean.asnumpy().copy()
    got = npx.batch_norm(_a(x), _a(gamma), _a(beta), run_mean, run_var, use_global_stats=True)
    _check(got, bn_ref(x, gamma, beta, before, run_var.asnumpy(), 1e-3, 1, True))
    onp.testing.assert_array_equal(run_mean.asnumpy(), before)


def test_batch_norm_op_is_pure_and_half_precision():
    x = _x(3, 2, 5)
    params = dict(eps=1e-3, momentum=0.9, fix_gamma=False)
    arrays = [x, _x(2), _x(2), onp.zeros(2, "float32"), onp.ones(2, "float32")]
    trained = _run("BatchNorm", arrays, _train=True, **params)
    _check(trained, bn_ref(x, arrays[1], arrays[2], x.mean((0, 2)), x.var((0, 2)), 1e-3, 1, False))
    new_mean, new_var = _run("_batch_norm_moving_stats", [x, arrays[3], arrays[4]], momentum=0.9)
    _check(new_mean, 0.1 * x.astype(onp.float64).mean((0, 2)))
    _check(new_var, 0.9 + 0.1 * x.astype(onp.float64).var((0, 2)))
    half = _run("BatchNorm", [x.astype("float16")] + arrays[1:], **params)
    _check(half, bn_ref(x.astype("float16"), *arrays[1:], 1e-3, 1, False), dtype="float16", rtol=1e-2, atol=1e-2)
    # fix_gamma blocks gamma's gradient; output_mean_var outputs carry none
    grad = jax.grad(lambda g: get_op("BatchNorm").compute(x, g, *arrays[2:], _train=True).sum())(arrays[1])
    onp.testing.assert_array_equal(grad, onp.zeros(2))
    attrs = get_op("BatchNorm").decode_params(
        {"eps": "0.001", "fix_gamma": "True", "use_global_stats": "False", "axis": "1", "momentum": "0.9"})
    assert attrs == {"eps": 0.001, "fix_gamma": True, "use_global_stats": False, "axis": 1, "momentum": 0.9}


def test_batch_norm_errors():
    x = _a(_x(2, 3, 4))
    ones = _a(onp.ones(3, "float32"))
    with pytest.raises(ValueError, match=r"BatchNorm: gamma has shape \(4,\) but \(3,\) is expected"):
        npx.batch_norm(x, _a(onp.ones(4, "float32")), ones, ones, ones)
    with pytest.raises(ValueError, match=r"BatchNorm: moving_var has shape \(2,\) but \(4,\) is expected"):
        npx.batch_norm(x, _a(_x(4)), _a(_x(4)), _a(_x(4)), _a(_x(2)), axis=2)
    with pytest.raises(ValueError, match="BatchNorm: axis 3 is out of bounds"):
        npx.batch_norm(x, ones, ones, ones, ones, axis=3)


def _norm_ref(x, axes, eps):
    x = x.astype(onp.float64)
    mean = x.mean(axes, keepdims=True)
    std = onp.sqrt(x.var(axes, keepdims=True) + eps)
    return (x - mean) / std, mean, std


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm(axis):
    x = _x(2, 3, 4)
    c = x.shape[axis]
    gamma, beta = _x(c), _x(c)
    normed, mean, std = _norm_ref(x, axis, 1e-5)
    want = normed * gamma.reshape(_bshape(3, axis)) + beta.reshape(_bshape(3, axis))
    _check(npx.layer_norm(_a(x), _a(gamma), _a(beta), axis=axis), want)
    out, got_mean, got_std = npx.layer_norm(_a(x), _a(gamma), _a(beta), axis=axis, output_mean_var=True)
    _check(out, want)
    _check(got_mean, mean)
    _check(got_std, std)  # MXNet's std includes eps: sqrt(var + eps)
    with pytest.raises(ValueError, match=r"LayerNorm: gamma has shape \(5,\) but \(4,\) is expected"):
        npx.layer_norm(_a(x), _a(_x(5)), _a(_x(4)))


@pytest.mark.parametrize("per_group", [False, True])
def test_group_norm(per_group):
    x = _x(2, 4, 3, 2)
    n_groups = 2
    size = n_groups if per_group else 4  # old MXNet: one gamma per group; >= 1.7: per channel
    gamma, beta = _x(size), _x(size)
    normed, mean, std = _norm_ref(x.reshape(2, 2, 2, 3, 2), (2, 3, 4), 1e-5)
    g = onp.repeat(gamma, 2) if per_group else gamma
    b = onp.repeat(beta, 2) if per_group else beta
    want = normed.reshape(x.shape) * g.reshape(1, 4, 1, 1) + b.reshape(1, 4, 1, 1)
    out, got_mean, got_std = npx.group_norm(_a(x), _a(gamma), _a(beta), num_groups=n_groups, output_mean_var=True)
    _check(out, want)
    _check(got_mean, mean.reshape(2, 2))
    _check(got_std, std.reshape(2, 2))
    with pytest.raises(ValueError, match=r"GroupNorm: num_groups=3 must divide the 4 channels"):
        npx.group_norm(_a(x), _a(gamma), _a(beta), num_groups=3)
    with pytest.raises(ValueError, match=r"GroupNorm: gamma has shape \(3,\) but \(4,\) is expected"):
        npx.group_norm(_a(x), _a(_x(3)), _a(beta), num_groups=2)


def test_instance_norm():
    x = _x(2, 3, 4, 2)
    gamma, beta = _x(3), _x(3)
    normed, _, _ = _norm_ref(x, (2, 3), 1e-3)
    _check(_run("InstanceNorm", [x, gamma, beta]), normed * gamma.reshape(1, 3, 1, 1) + beta.reshape(1, 3, 1, 1))
    with pytest.raises(ValueError, match=r"InstanceNorm: data of shape \(2, 3\) must be at least 3-D"):
        _run("InstanceNorm", [_x(2, 3), gamma, beta])


@pytest.mark.parametrize("mode,axes", [("instance", (1, 2, 3)), ("channel", (1,)), ("spatial", (2, 3))])
def test_l2_normalization(mode, axes):
    x = _x(2, 3, 2, 2)
    want = x / onp.sqrt((x.astype(onp.float64) ** 2).sum(axes, keepdims=True) + 1e-10)
    _check(_run("L2Normalization", [x], mode=mode), want)
    with pytest.raises(ValueError, match="L2Normalization: mode='batch' is not supported"):
        _run("L2Normalization", [x], mode="batch")


@pytest.mark.parametrize("nsize", [3, 4])
def test_lrn(nsize):
    x = _x(1, 5, 2, 3)
    sq = onp.pad(x.astype(onp.float64) ** 2, [(0, 0), (nsize // 2, nsize - 1 - nsize // 2), (0, 0), (0, 0)])
    window = onp.stack([sq[:, c:c + nsize].sum(1) for c in range(5)], axis=1)
    want = x / (2.0 + 1e-4 / nsize * window) ** 0.75
    _check(_run("LRN", [x], nsize=nsize), want)
    with pytest.raises(ValueError, match=r"LRN: data of shape \(5,\) must be at least 3-D"):
        _run("LRN", [_x(5)], nsize=3)
