"""Legacy (MXNet 1.x) creation ops, ``add_n``, ``dot`` and the unary math NumPy lacks."""
from __future__ import annotations

import math

import jax.numpy as jnp

from ..base import MXNetValueError
from ._dtypes import resolve_dtype, to_float
from .legacy_reduce import one_d
from .registry import defop


def _as_shape(shape) -> tuple:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise MXNetValueError(f"negative dimensions are not allowed in shape {shape}")
    return shape


# ----------------------------------------------------------------------------- creation
# ``ctx`` is a 1.x attribute ("cpu(0)"): accepted so symbol JSON decodes; the front-end places arrays.

@defop("_zeros")
def legacy_zeros(*, shape: shape = (), ctx: str = "", dtype: dtype | None = None):
    """A new array of zeros (1.x ``zeros``; float32 by default)."""
    return jnp.zeros(_as_shape(shape), resolve_dtype(dtype))


@defop("_ones")
def legacy_ones(*, shape: shape = (), ctx: str = "", dtype: dtype | None = None):
    """A new array of ones (1.x ``ones``; float32 by default)."""
    return jnp.ones(_as_shape(shape), resolve_dtype(dtype))


@defop("_full")
def legacy_full(*, shape: shape = (), value: float = 0.0, ctx: str = "", dtype: dtype | None = None):
    """A new array filled with ``value`` (1.x ``full``; float32 by default)."""
    return jnp.full(_as_shape(shape), value, resolve_dtype(dtype))


@defop("_arange")
def legacy_arange(*, start: float = 0.0, stop: float | None = None, step: float = 1.0, repeat: int = 1,
                  infer_range: bool = False, ctx: str = "", dtype: dtype | None = None):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times (1.x ``arange``)."""
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise MXNetValueError("arange: step cannot be 0")
    if repeat < 1:
        raise MXNetValueError(f"arange: repeat must be positive, got {repeat}")
    n = max(int(math.ceil((stop - start) / step)), 0)
    out = (start + jnp.arange(n, dtype=jnp.float64) * step).astype(resolve_dtype(dtype))
    return jnp.repeat(out, repeat) if repeat > 1 else out


@defop("_eye")
def legacy_eye(*, N: int = 0, M: int = 0, k: int = 0, ctx: str = "", dtype: dtype | None = None):
    """An N x M (M=0: N x N) matrix with ones on the k-th diagonal (1.x ``eye``)."""
    return jnp.eye(N, M or N, k, dtype=resolve_dtype(dtype))


# ----------------------------------------------------------------------------- arithmetic

@defop("add_n", aliases=("ElementWiseSum",))
def add_n(*args, num_args: int | None = None):
    """Element-wise sum of any number of same-shape arrays."""
    if not args:
        raise MXNetValueError("add_n: needs at least one input array")
    shapes = {tuple(jnp.shape(a)) for a in args}
    if len(shapes) != 1:
        raise MXNetValueError(f"add_n: all inputs must have the same shape, got {sorted(shapes)}")
    dtype = jnp.asarray(args[0]).dtype
    total = args[0]
    for a in args[1:]:
        total = total + a
    return jnp.asarray(total).astype(dtype)


def _dot_sides(shape: tuple, first: bool) -> tuple:
    """(contracted axis, kept dims) of a legacy dot operand: ``first`` contracts axis 0."""
    if len(shape) == 1:
        return 0, ()
    return (0, shape[1:]) if first else (len(shape) - 1, shape[:-1])


@defop("_legacy_dot")
def legacy_dot(lhs, rhs, *, transpose_a: bool = False, transpose_b: bool = False,
               forward_stype: str | None = None):
    """Legacy ``dot``: contract lhs's last axis (first if transpose_a) with rhs's first (last if transpose_b)."""
    if lhs.ndim == 0 or rhs.ndim == 0:
        raise MXNetValueError(f"dot: inputs must have at least 1 dimension, got {tuple(lhs.shape)} "
                              f"and {tuple(rhs.shape)}")
    la, _ = _dot_sides(tuple(lhs.shape), transpose_a)
    ra, _ = _dot_sides(tuple(rhs.shape), not transpose_b)
    if lhs.shape[la] != rhs.shape[ra]:
        raise MXNetValueError(
            f"dot: shapes {tuple(lhs.shape)} and {tuple(rhs.shape)} do not match for "
            f"transpose_a={transpose_a}, transpose_b={transpose_b} ({lhs.shape[la]} vs {rhs.shape[ra]})")
    out = jnp.tensordot(lhs, rhs, axes=([la], [ra]))
    return one_d(out.astype(jnp.result_type(lhs, rhs)))


# ----------------------------------------------------------------------------- unary math

@defop("rsqrt")
def rsqrt(data):
    """1 / sqrt(x), element-wise."""
    return 1 / jnp.sqrt(to_float(data))


@defop("rcbrt")
def rcbrt(data):
    """1 / cbrt(x), element-wise."""
    return 1 / jnp.cbrt(to_float(data))


@defop("_legacy_round")
def legacy_round(data):
    """Legacy ``round``: to the nearest integer, halves away from zero (NumPy rounds them to even)."""
    if not jnp.issubdtype(data.dtype, jnp.inexact):
        return data
    return jnp.where(data >= 0, jnp.floor(data + 0.5), jnp.ceil(data - 0.5)).astype(data.dtype)


@defop("hard_sigmoid")
def hard_sigmoid(data, *, alpha: float = 0.2, beta: float = 0.5):
    """clip(alpha * x + beta, 0, 1), element-wise."""
    x = to_float(data)
    return jnp.clip(alpha * x + beta, 0, 1).astype(x.dtype)


@defop("_legacy_logical_not")
def legacy_logical_not(data):
    """Legacy ``logical_not``: 1 where data is 0, else 0, in the input dtype (NumPy's gives bool)."""
    return (data == 0).astype(data.dtype)


# ----------------------------------------------------------------------------- mixed precision (AMP graphs)

@defop("amp_cast")
def amp_cast(data, *, dtype: dtype = "float32"):
    """Cast floating-point input to ``dtype`` (AMP); other dtypes pass through unchanged."""
    return data.astype(dtype) if jnp.issubdtype(data.dtype, jnp.floating) else data


@defop("amp_multicast", num_outputs=lambda params: params.get("num_outputs", 1))
def amp_multicast(*data, num_outputs: int = 1, cast_narrow: bool = False):
    """Cast floating-point inputs to their widest float dtype (narrowest if ``cast_narrow``) (AMP)."""
    if len(data) != num_outputs:
        raise MXNetValueError(f"amp_multicast: num_outputs={num_outputs} but {len(data)} inputs were given")
    floats = [d.dtype for d in data if jnp.issubdtype(d.dtype, jnp.floating)]
    if not floats:
        return tuple(data) if len(data) > 1 else data[0]
    pick = min if cast_narrow else max
    target = pick(floats, key=lambda t: jnp.dtype(t).itemsize)
    out = tuple(d.astype(target) if jnp.issubdtype(d.dtype, jnp.floating) else d for d in data)
    return out if len(out) > 1 else out[0]
