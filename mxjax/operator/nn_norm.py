"""Normalization layers: BatchNorm, LayerNorm, GroupNorm, InstanceNorm, L2Normalization, LRN.

BatchNorm is pure here.  MXNet's op also mutates its ``moving_mean``/``moving_var``
inputs (aux states) in training; in mxjax the op returns only what MXNet shows
(the output, plus the batch mean and inverse std with ``output_mean_var``), and
``_batch_norm_moving_stats`` computes the updated moving statistics, which the
front-end (``npx.batch_norm``) or an executor writes back into the aux arrays:
``new = momentum * old + (1 - momentum) * batch`` with the biased batch variance,
as MXNet's CPU implementation does.

Statistics are accumulated in float32 for 16-bit input (MXNet's AccReal) and the
output is cast back to the input dtype.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax import lax

from .nn_util import acc_dtype, check_choice, check_shape, fail, float_input, norm_axis
from .registry import defop


def per_channel(axis_key: str | None, default_axis: int, slots: tuple):
    """A ``param_shapes`` rule: these input slots hold one value per channel of the data, the
    channel axis being parameter ``axis_key`` (``default_axis`` if unset, or always when None)."""
    def rule(shapes: list, params: dict) -> dict:
        axis = params.get(axis_key, default_axis) if axis_key else default_axis
        return {slot: (shapes[0][axis],) for slot in slots}
    return rule


def _channel_shape(ndim, axis, size):
    shape = [1] * ndim
    shape[axis] = size
    return tuple(shape)


def _batch_moments(x, axis):
    """Per-channel mean and biased variance of ``x`` over every axis but ``axis``."""
    reduce = tuple(i for i in range(x.ndim) if i != axis)
    mean = jnp.mean(x, axis=reduce)
    centered = x - mean.reshape(_channel_shape(x.ndim, axis, -1))
    return mean, jnp.mean(centered * centered, axis=reduce)


def _check_bn_inputs(op, data, axis, arrays):
    if data.ndim < 1:
        fail(op, "data must have at least one dimension")
    axis = norm_axis(op, axis, data.ndim)
    channels = data.shape[axis]
    for name, value in arrays.items():
        check_shape(op, name, value, (channels,), f"one value per channel of data {tuple(data.shape)} "
                                                  f"on axis {axis}")
    return axis, channels


def _bn_aux_update(data, gamma, beta, moving_mean, moving_var, *, momentum: float = 0.9, axis: int = 1,
                   use_global_stats: bool = False, **_: Any):
    """New (moving_mean, moving_var) after a training step (unchanged with use_global_stats)."""
    if use_global_stats:
        return moving_mean, moving_var
    return batch_norm_moving_stats.compute(data, moving_mean, moving_var, momentum=momentum, axis=axis)


@defop("BatchNorm", aliases=("_npx_batch_norm", "BatchNorm_v1", "CuDNNBatchNorm"), aux_inputs=(3, 4),
       param_shapes=per_channel("axis", 1, (1, 2, 3, 4)),
       aux_update=_bn_aux_update,
       num_outputs=lambda params: 3 if params.get("output_mean_var") else 1)
def batch_norm(data, gamma, beta, moving_mean, moving_var, *, eps: float = 1e-3, momentum: float = 0.9,
               fix_gamma: bool = True, use_global_stats: bool = False, output_mean_var: bool = False,
               axis: int = 1, cudnn_off: bool = False, min_calib_range: float | None = None,
               max_calib_range: float | None = None, _train: bool = False):
    """Batch normalization over every axis but ``axis``.

    In training (``_train`` and not ``use_global_stats``) the batch statistics
    normalize; otherwise the moving ones.  ``fix_gamma`` (MXNet's default) uses
    gamma = 1.  With ``output_mean_var`` also returns the mean and inverse std
    used (their gradients are blocked).
    """
    op = "BatchNorm"
    axis, channels = _check_bn_inputs(op, data, axis, {"gamma": gamma, "beta": beta,
                                                       "moving_mean": moving_mean, "moving_var": moving_var})
    x = float_input(op, data)
    acc = acc_dtype(x.dtype)
    xa = x.astype(acc)
    if _train and not use_global_stats:
        mean, var = _batch_moments(xa, axis)
    else:
        mean, var = moving_mean.astype(acc), moving_var.astype(acc)
    invstd = lax.rsqrt(var + jnp.asarray(eps, acc))
    scale = invstd if fix_gamma else invstd * gamma.astype(acc)
    shape = _channel_shape(x.ndim, axis, channels)
    out = (xa - mean.reshape(shape)) * scale.reshape(shape) + beta.astype(acc).reshape(shape)
    out = out.astype(x.dtype)
    if output_mean_var:
        return out, lax.stop_gradient(mean), lax.stop_gradient(invstd)
    return out


@defop("_batch_norm_moving_stats", differentiable=False, num_outputs=2)
def batch_norm_moving_stats(data, moving_mean, moving_var, *, momentum: float = 0.9, axis: int = 1):
    """BatchNorm's moving-statistics update in training: ``momentum * old + (1 - momentum) * batch``."""
    op = "BatchNorm"
    axis, _ = _check_bn_inputs(op, data, axis, {"moving_mean": moving_mean, "moving_var": moving_var})
    x = lax.stop_gradient(float_input(op, data))
    acc = acc_dtype(x.dtype)
    mean, var = _batch_moments(x.astype(acc), axis)
    m = jnp.asarray(momentum, acc)
    new_mean = m * moving_mean.astype(acc) + (1 - m) * mean
    new_var = m * moving_var.astype(acc) + (1 - m) * var
    return new_mean.astype(moving_mean.dtype), new_var.astype(moving_var.dtype)


def _normalize(x, reduce, eps):
    """(x - mean) / std over ``reduce`` (kept as size-1 axes), in the accumulation dtype."""
    mean = jnp.mean(x, axis=reduce, keepdims=True)
    centered = x - mean
    std = jnp.sqrt(jnp.mean(centered * centered, axis=reduce, keepdims=True) + jnp.asarray(eps, x.dtype))
    return centered / std, mean, std


def _with_mean_std(params: dict) -> int:
    """Outputs of LayerNorm and GroupNorm: with ``output_mean_var`` also the mean and std, as MXNet's."""
    return 3 if params.get("output_mean_var") else 1


def _mean_std_names(params: dict) -> list:
    return ["output", "mean", "std"][:_with_mean_std(params)]


@defop("LayerNorm", aliases=("_npx_layer_norm",), param_shapes=per_channel("axis", -1, (1, 2)),
       num_outputs=_with_mean_std, output_names=_mean_std_names)
def layer_norm(data, gamma, beta, *, axis: int = -1, eps: float = 1e-5, output_mean_var: bool = False):
    """Normalize along ``axis`` then scale by ``gamma`` and shift by ``beta`` (both of that axis' length).

    With ``output_mean_var`` also returns the mean and ``sqrt(var + eps)``, keeping
    ``axis`` as a size-1 dimension.
    """
    op = "LayerNorm"
    axis, channels = _check_bn_inputs(op, data, axis, {"gamma": gamma, "beta": beta})
    x = float_input(op, data)
    acc = acc_dtype(x.dtype)
    normed, mean, std = _normalize(x.astype(acc), (axis,), eps)
    shape = _channel_shape(x.ndim, axis, channels)
    out = (normed * gamma.astype(acc).reshape(shape) + beta.astype(acc).reshape(shape)).astype(x.dtype)
    if output_mean_var:
        return out, lax.stop_gradient(mean.astype(x.dtype)), lax.stop_gradient(std.astype(x.dtype))
    return out


@defop("GroupNorm", aliases=("_npx_group_norm",), param_shapes=per_channel(None, 1, (1, 2)),
       num_outputs=_with_mean_std, output_names=_mean_std_names)
def group_norm(data, gamma, beta, *, num_groups: int = 1, eps: float = 1e-5, output_mean_var: bool = False):
    """Normalize each of ``num_groups`` channel groups of (N, C, ...) data, then scale and shift per channel.

    ``gamma``/``beta`` have one value per channel (MXNet >= 1.7) or per group (older MXNet).
    """
    op = "GroupNorm"
    if data.ndim < 3:
        fail(op, f"data of shape {tuple(data.shape)} must be at least 3-D (batch, channel, ...)")
    n, c = data.shape[0], data.shape[1]
    if num_groups < 1 or c % num_groups:
        fail(op, f"num_groups={num_groups} must divide the {c} channels of data {tuple(data.shape)}")
    for name, value in (("gamma", gamma), ("beta", beta)):
        if tuple(value.shape) not in ((c,), (num_groups,)):
            fail(op, f"{name} has shape {tuple(value.shape)} but ({c},) is expected "
                     f"(one value per channel of data {tuple(data.shape)})")
    x = float_input(op, data)
    acc = acc_dtype(x.dtype)
    grouped = x.astype(acc).reshape((n, num_groups, c // num_groups) + x.shape[2:])
    normed, mean, std = _normalize(grouped, tuple(range(2, grouped.ndim)), eps)
    normed = normed.reshape(x.shape)
    shape = _channel_shape(x.ndim, 1, c)

    def per_channel(p):
        p = p.astype(acc)
        return (jnp.repeat(p, c // num_groups) if p.shape[0] != c else p).reshape(shape)

    out = (normed * per_channel(gamma) + per_channel(beta)).astype(x.dtype)
    if output_mean_var:
        stats = (mean.reshape(n, num_groups), std.reshape(n, num_groups))
        return out, *(lax.stop_gradient(s.astype(x.dtype)) for s in stats)
    return out


@defop("InstanceNorm", aliases=("_npx_instance_norm",), param_shapes=per_channel(None, 1, (1, 2)))
def instance_norm(data, gamma, beta, *, eps: float = 1e-3):
    """Normalize each (instance, channel) over the spatial axes of (N, C, ...) data, scale and shift per channel."""
    op = "InstanceNorm"
    if data.ndim < 3:
        fail(op, f"data of shape {tuple(data.shape)} must be at least 3-D (batch, channel, spatial...)")
    _check_bn_inputs(op, data, 1, {"gamma": gamma, "beta": beta})
    x = float_input(op, data)
    acc = acc_dtype(x.dtype)
    normed, _, _ = _normalize(x.astype(acc), tuple(range(2, x.ndim)), eps)
    shape = _channel_shape(x.ndim, 1, x.shape[1])
    return (normed * gamma.astype(acc).reshape(shape) + beta.astype(acc).reshape(shape)).astype(x.dtype)


@defop("L2Normalization")
def l2_normalization(data, *, eps: float = 1e-10, mode: str = "instance"):
    """``x / sqrt(sum(x**2) + eps)`` per instance (all axes but 0), per channel (axis 1) or per position (axes 2+)."""
    op = "L2Normalization"
    check_choice(op, "mode", mode, ("instance", "channel", "spatial"))
    x = float_input(op, data)
    if mode == "instance":
        reduce = tuple(range(1, x.ndim))
    elif mode == "channel":
        if x.ndim < 2:
            fail(op, f"mode='channel' needs at least 2-D data, got shape {tuple(x.shape)}")
        reduce = (1,)
    else:
        if x.ndim < 3:
            fail(op, f"mode='spatial' needs at least 3-D data, got shape {tuple(x.shape)}")
        reduce = tuple(range(2, x.ndim))
    acc = acc_dtype(x.dtype)
    xa = x.astype(acc)
    norm = jnp.sqrt(jnp.sum(xa * xa, axis=reduce, keepdims=True) + jnp.asarray(eps, acc))
    return (xa / norm).astype(x.dtype)


@defop("LRN")
def lrn(data, *, alpha: float = 1e-4, beta: float = 0.75, knorm: float = 2.0, nsize: int = 1):
    """Local response normalization across channels: ``x / (knorm + alpha/nsize * sum(x**2 over nsize))**beta``."""
    op = "LRN"
    if data.ndim < 3:
        fail(op, f"data of shape {tuple(data.shape)} must be at least 3-D (batch, channel, ...)")
    if nsize < 1:
        fail(op, f"nsize={nsize} must be positive")
    x = float_input(op, data)
    window = (1, nsize) + (1,) * (x.ndim - 2)
    padding = ((0, 0), (nsize // 2, nsize - 1 - nsize // 2)) + ((0, 0),) * (x.ndim - 2)
    squares = lax.reduce_window(x * x, jnp.zeros((), x.dtype), lax.add, window, (1,) * x.ndim, padding)
    norm = jnp.asarray(knorm, x.dtype) + jnp.asarray(alpha / nsize, x.dtype) * squares
    return x * norm ** jnp.asarray(-beta, x.dtype)
