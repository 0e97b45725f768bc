"""MXNet's small contrib math ops: quadratic, gradientmultiplier, div_sqrt_dim, round_ste/sign_ste,
allclose, index_copy and AdaptiveAvgPooling2D.

The straight-through estimators (``round_ste``, ``sign_ste``) and ``gradientmultiplier``
change only the backward pass, so they carry a ``jax.custom_vjp``; the rest use
the registry's default ``jax.vjp``.
"""
from __future__ import annotations

import math
from functools import partial

import jax
import jax.numpy as jnp

from .nn_index import _as_index
from .nn_util import fail
from .registry import defop


@defop("_contrib_quadratic", aliases=("quadratic",))
def quadratic(data, *, a: float = 0.0, b: float = 0.0, c: float = 0.0):
    """``a * data**2 + b * data + c`` elementwise, in data's dtype."""
    dt = data.dtype
    return jnp.asarray(a, dt) * data * data + jnp.asarray(b, dt) * data + jnp.asarray(c, dt)


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def _scaled_grad(x, scalar):
    return x


def _scaled_fwd(x, scalar):
    return x, None


def _scaled_bwd(scalar, _res, g):
    return (g * jnp.asarray(scalar, g.dtype),)


_scaled_grad.defvjp(_scaled_fwd, _scaled_bwd)


@defop("_contrib_gradientmultiplier", aliases=("gradientmultiplier",))
def gradientmultiplier(data, *, scalar: float = 1.0, is_int: bool = True):
    """The identity forward; the backward multiplies the incoming gradient by ``scalar``
    (``is_int`` is MXNet's scalar-type flag and changes nothing for a float scalar)."""
    return _scaled_grad(data, float(scalar))


@defop("_contrib_div_sqrt_dim", aliases=("div_sqrt_dim",))
def div_sqrt_dim(data):
    """``data / sqrt(data.shape[-1])`` (attention-score scaling)."""
    if data.ndim < 1:
        fail("div_sqrt_dim", f"data must have at least one axis, got shape {tuple(data.shape)}")
    return data / jnp.asarray(math.sqrt(data.shape[-1]), data.dtype)


@jax.custom_vjp
def _straight_through_round(x):
    return jnp.sign(x) * jnp.floor(jnp.abs(x) + 0.5)


@jax.custom_vjp
def _straight_through_sign(x):
    return jnp.sign(x)


def _ste_fwd_round(x):
    return _straight_through_round(x), None


def _ste_fwd_sign(x):
    return _straight_through_sign(x), None


def _ste_bwd(_res, g):
    return (g,)


_straight_through_round.defvjp(_ste_fwd_round, _ste_bwd)
_straight_through_sign.defvjp(_ste_fwd_sign, _ste_bwd)


@defop("_contrib_round_ste", aliases=("round_ste", "_npx_round_ste"))
def round_ste(data):
    """Round half away from zero; the gradient passes straight through (identity)."""
    return _straight_through_round(data)


@defop("_contrib_sign_ste", aliases=("sign_ste", "_npx_sign_ste"))
def sign_ste(data):
    """The sign (-1, 0, 1); the gradient passes straight through (identity)."""
    return _straight_through_sign(data)


@defop("_contrib_allclose", differentiable=False)
def allclose(a, b, *, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = True):
    """1 (uint8, shape ``()``) when every ``|a - b| <= atol + rtol * |b|``, else 0; NaNs compare equal
    to each other when ``equal_nan``.  The shapes must match exactly (no broadcasting, as MXNet)."""
    if tuple(a.shape) != tuple(b.shape):
        fail("allclose", f"a has shape {tuple(a.shape)} and b has shape {tuple(b.shape)}; "
                         "they must be equal")
    dt = jnp.result_type(a.dtype, b.dtype)
    a, b = a.astype(dt), b.astype(dt)
    ok = jnp.abs(a - b) <= jnp.asarray(atol, dt) + jnp.asarray(rtol, dt) * jnp.abs(b)
    if equal_nan:
        ok = ok | (jnp.isnan(a) & jnp.isnan(b))
    return jnp.all(ok).astype(jnp.uint8)


@defop("_contrib_index_copy", aliases=("index_copy",))
def index_copy(old_tensor, index_vector, new_tensor):
    """``old_tensor`` with the rows named by ``index_vector`` replaced by the rows of ``new_tensor``."""
    op = "index_copy"
    if index_vector.ndim != 1:
        fail(op, f"index_vector must be 1-D, got shape {tuple(index_vector.shape)}")
    if old_tensor.ndim < 1 or new_tensor.ndim != old_tensor.ndim:
        fail(op, f"old_tensor {tuple(old_tensor.shape)} and new_tensor {tuple(new_tensor.shape)} must have "
                 "the same (non-zero) number of axes")
    want = (index_vector.shape[0], *old_tensor.shape[1:])
    if tuple(new_tensor.shape) != want:
        fail(op, f"new_tensor has shape {tuple(new_tensor.shape)} but {want} is expected (one row per index "
                 f"of index_vector {tuple(index_vector.shape)}, rows like old_tensor {tuple(old_tensor.shape)})")
    return old_tensor.at[_as_index(index_vector)].set(new_tensor.astype(old_tensor.dtype))


def _bins(size: int, count: int) -> jnp.ndarray:
    """(count, size) averaging matrix of adaptive pooling: bin i covers [floor(i*size/count),
    ceil((i+1)*size/count))."""
    rows = []
    for i in range(count):
        lo, hi = (i * size) // count, -((-(i + 1) * size) // count)
        rows.append([1.0 / (hi - lo) if lo <= j < hi else 0.0 for j in range(size)])
    return jnp.asarray(rows, jnp.float32)


@defop("_contrib_AdaptiveAvgPooling2D", aliases=("AdaptiveAvgPooling2D",))
def adaptive_avg_pooling_2d(data, *, output_size: shape = ()):
    """Average pooling of NCHW ``data`` to ``output_size`` (one int: square; empty: 1x1), each output
    cell averaging the input rows/columns ``[floor(i*H/oh), ceil((i+1)*H/oh))``."""
    op = "AdaptiveAvgPooling2D"
    if data.ndim != 4:
        fail(op, f"data must be 4-D (N, C, H, W), got shape {tuple(data.shape)}")
    size = tuple(output_size) if isinstance(output_size, (tuple, list)) else (int(output_size),)
    if len(size) == 0:
        size = (1, 1)
    elif len(size) == 1:
        size = size * 2
    if len(size) != 2 or min(size) < 1:
        fail(op, f"output_size={output_size!r} must be one or two positive integers")
    rows = _bins(data.shape[2], size[0]).astype(data.dtype)
    cols = _bins(data.shape[3], size[1]).astype(data.dtype)
    return jnp.einsum("ih,nchw,jw->ncij", rows, data, cols)


def _flag(test, data):
    return test(data).astype(data.dtype) if jnp.issubdtype(data.dtype, jnp.inexact) else \
        jnp.full(data.shape, 1 if test is jnp.isfinite else 0, data.dtype)


@defop("_contrib_isfinite", differentiable=False)
def isfinite(data):
    """1 where ``data`` is finite, 0 at inf/NaN, in data's dtype (integers are always finite)."""
    return _flag(jnp.isfinite, data)


@defop("_contrib_isinf", differentiable=False)
def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0, in data's dtype."""
    return _flag(jnp.isinf, data)


@defop("_contrib_isnan", differentiable=False)
def isnan(data):
    """1 where ``data`` is NaN, else 0, in data's dtype."""
    return _flag(jnp.isnan, data)


@defop("_contrib_fft")
def fft(data, *, compute_size: int = 128):
    """1-D FFT of real ``data`` (N, d) or (N1, N2, N3, d) along the last axis, as interleaved
    ``[real0, imag0, real1, imag1, ...]`` (last axis 2*d).  ``compute_size`` (MXNet's GPU sub-batch)
    changes nothing.  MXNet runs it on GPU only; here it runs on any device."""
    if data.ndim not in (2, 4):
        fail("fft", f"data must be 2-D (N, d) or 4-D (N1, N2, N3, d), got shape {tuple(data.shape)}")
    if jnp.issubdtype(data.dtype, jnp.complexfloating):
        fail("fft", f"data must be real, got {data.dtype}")
    x = data if jnp.issubdtype(data.dtype, jnp.floating) else data.astype(jnp.float32)
    spectrum = jnp.fft.fft(x, axis=-1)
    out = jnp.stack([spectrum.real, spectrum.imag], -1).astype(x.dtype)
    return out.reshape(*data.shape[:-1], 2 * data.shape[-1])


@defop("_contrib_count_sketch", aliases=("count_sketch",))
def count_sketch(data, h, s, *, out_dim: int | None = None, processing_batch_size: int = 32):
    """Count sketch of ``data`` (N, d) into ``out_dim`` buckets: ``out[n, h[j]] += s[j] * data[n, j]``
    with hash indices ``h`` and signs ``s`` of d entries each (shape (1, d) or (d,)).
    ``processing_batch_size`` (MXNet's GPU batching) changes nothing; MXNet runs it on GPU only."""
    op = "count_sketch"
    if out_dim is None or out_dim < 1:
        fail(op, f"out_dim must be a positive integer, got {out_dim!r}")
    if data.ndim != 2:
        fail(op, f"data must be 2-D (N, d), got shape {tuple(data.shape)}")
    dim = data.shape[1]
    for name, arr in (("h", h), ("s", s)):
        if arr.size != dim or arr.ndim > 2:
            fail(op, f"{name} has shape {tuple(arr.shape)} but (1, {dim}) is expected (one entry per column "
                     f"of data {tuple(data.shape)})")
    idx = jnp.clip(_as_index(h.reshape(-1)), 0, out_dim - 1)
    signed = data * s.reshape(1, -1).astype(data.dtype)
    return jnp.zeros((data.shape[0], out_dim), data.dtype).at[:, idx].add(signed)
