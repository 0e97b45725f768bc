"""MXNet's ``Pooling`` op: max, average, sum and Lp pooling over 1-3 spatial axes, with MXNet's
'valid'/'full'/'same' output sizes and its rule for the elements an average divides by.

Split from ``nn_conv`` (which re-exports ``pooling``) to keep that module to the dense and
convolution layers; pooling shares only the layout and spatial-tuple helpers of ``nn_util``.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as onp
from jax import lax

from ._max_pool import max_pool
from .nn_util import (check_choice, fail, float_input, from_channel_first, resolve_layout, spatial_tuple,
                      to_channel_first)
from .registry import defop


def _pool_out_size(op, size, k, p, s, convention):
    if k > size + 2 * p:
        fail(op, f"kernel size ({k}) exceeds input ({size} padded to {size + 2 * p})")
    if convention == "valid":
        return 1 + (size + 2 * p - k) // s
    if convention == "full":
        return 1 + math.ceil((size + 2 * p - k) / s)
    return math.ceil((size + 2 * p) / s)  # 'same' (1-D max pooling)


def _window_sum(x, window, strides, padding):
    # the initial value must be a host constant: a traced one makes the window op non-differentiable
    return lax.reduce_window(x, onp.zeros((), x.dtype), lax.add, window, strides, padding)


@defop("Pooling", aliases=("_npx_pooling",))
def pooling(data, *, kernel: shape = (), pool_type: str = "max", global_pool: bool = False,
            cudnn_off: bool = False, pooling_convention: str = "valid", stride: shape = (), pad: shape = (),
            p_value: int | None = None, count_include_pad: bool | None = None, layout: str | None = None):
    """Max/avg/sum/Lp pooling over 1-3 spatial axes, with MXNet's 'valid'/'full'/'same' output sizes."""
    op = "Pooling"
    check_choice(op, "pool_type", pool_type, ("max", "avg", "sum", "lp"))
    check_choice(op, "pooling_convention", pooling_convention, ("valid", "full", "same"))
    if not 3 <= data.ndim <= 5:
        fail(op, f"data of shape {tuple(data.shape)} must be 3-D (batch, channel, x), 4-D or 5-D")
    nspatial = data.ndim - 2
    layout, channel_last = resolve_layout(op, layout, nspatial)
    if pool_type == "lp" and p_value not in (1, 2, 3):
        fail(op, f"pool_type='lp' needs p_value 1, 2 or 3, got {p_value}")
    x = to_channel_first(data, channel_last)
    if pool_type in ("avg", "lp"):
        x = float_input(op, x)
    sizes = tuple(x.shape[2:])
    if global_pool:
        kernel, stride, pad = sizes, (1,) * nspatial, (0,) * nspatial
    else:
        if len(kernel) != nspatial:
            fail(op, f"kernel {tuple(kernel)} must have {nspatial} entries for data {tuple(data.shape)} "
                     f"({layout})")
        stride = spatial_tuple(op, "stride", stride, nspatial, 1)
        pad = spatial_tuple(op, "pad", pad, nspatial, 0)
    if pooling_convention == "same" and not global_pool:
        if nspatial != 1 or any(pad):
            fail(op, f"pooling_convention='same' supports 1-D pooling without pad only "
                     f"(data {tuple(data.shape)}, pad={pad})")
    outs = tuple(_pool_out_size(op, n, k, p, s, "valid" if global_pool else pooling_convention)
                 for n, k, p, s in zip(sizes, kernel, pad, stride))
    # pad low by `pad`, high by whatever the last window needs (never less than zero)
    highs = tuple(max((o - 1) * s + k - n - p, 0) for o, s, k, n, p in zip(outs, stride, kernel, sizes, pad))
    window, strides = (1, 1) + tuple(kernel), (1, 1) + tuple(stride)
    padding = ((0, 0), (0, 0)) + tuple(zip(pad, highs))
    if pool_type == "max":
        init = onp.array(-onp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min,
                         x.dtype)
        if jax.default_backend() == "cpu":
            # XLA:CPU keeps the convolutions around a pooling channel-last; pooling channel-first
            # would make it relayout the activation before and after (resnet's stem)
            last = (1,) + window[2:] + (1,), (1,) + strides[2:] + (1,), ((0, 0),) + padding[2:] + ((0, 0),)
            out = jnp.moveaxis(max_pool(jnp.moveaxis(x, 1, -1), init, *last), -1, 1)
        else:
            out = lax.reduce_window(x, init, lax.max, window, strides, padding)
    elif pool_type == "lp":
        powered = x if p_value == 1 else x * x if p_value == 2 else x * x * x
        total = _window_sum(powered, window, strides, padding)
        out = total if p_value == 1 else jnp.sqrt(total) if p_value == 2 else jnp.cbrt(total)
    else:
        out = _window_sum(x, window, strides, padding)
    crop = tuple(slice(0, o) for o in outs)
    out = out[(slice(None), slice(None)) + crop]
    if pool_type == "avg":
        out = out / _avg_divisor(sizes, kernel, stride, pad, highs, count_include_pad, out.dtype)[crop]
    return from_channel_first(out, channel_last)


def _avg_divisor(sizes, kernel, stride, pad, highs, count_include_pad, dtype):
    """Elements each window averages over: the window clipped to the padded input (MXNet's default)
    or, with ``count_include_pad=False``, to the input itself."""
    if count_include_pad is None or count_include_pad:
        ones = jnp.ones(tuple(n + 2 * p for n, p in zip(sizes, pad)), dtype)
        padding = tuple((0, max(h - p, 0)) for h, p in zip(highs, pad))
    else:
        ones = jnp.ones(sizes, dtype)
        padding = tuple(zip(pad, highs))
    return _window_sum(ones, tuple(kernel), tuple(stride), padding)
