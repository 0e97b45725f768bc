"""MXNet's intgemm ops (8-bit matrix multiplication on CPU) and ``_contrib_calibrate_entropy``.

intgemm quantizes float32 by ``x * 127 / maxabs``, rounding half to even and saturating to
[-127, 127] (-128 is banned so sign tricks stay exact).  MXNet stores a "prepared" weight in a
CPU-specific interleaved layout and says it is opaque: only ``intgemm_fully_connected`` and
``intgemm_take_weight`` read it.  Here the prepared weight is the quantized weight in its plain
(num_hidden, inner) layout, which both ops read; products are exact int32 sums, as intgemm's.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from .nn_util import check_choice, fail
from .quantization import as_range, check_dtype, check_ranges
from .registry import defop

_f32 = jnp.float32


def _quantize(x, maxabs):
    scale = _f32(127.0) / maxabs.reshape(()).astype(_f32)
    return jnp.clip(jnp.rint(x * scale), -127, 127).astype(jnp.int8)


def _check_weight(op, weight):
    if weight.ndim < 2 or weight.shape[-1] % 64 or (weight.size // weight.shape[-1]) % 8:
        fail(op, f"weight has shape {tuple(weight.shape)}; intgemm needs the last dimension a multiple of 64 "
                 "and the product of the others a multiple of 8")


@defop("_contrib_intgemm_maxabsolute", aliases=("_npx_intgemm_maxabsolute",), differentiable=False)
def intgemm_maxabsolute(data):
    """``max(|data|)`` of float32 ``data``, shape (1,)."""
    check_dtype("intgemm_maxabsolute", "data", data, ("float32",))
    return as_range(jnp.max(jnp.abs(data)))


@defop("_contrib_intgemm_prepare_data", aliases=("_npx_intgemm_prepare_data",), differentiable=False)
def intgemm_prepare_data(data, maxabs):
    """int8 ``round(data * 127 / maxabs)``, saturated to [-127, 127]."""
    op = "intgemm_prepare_data"
    check_dtype(op, "data", data, ("float32",))
    check_ranges(op, ("maxabs", maxabs))
    return _quantize(data, maxabs)


@defop("_contrib_intgemm_prepare_weight", aliases=("_npx_intgemm_prepare_weight",), differentiable=False)
def intgemm_prepare_weight(weight, maxabs=None, *, already_quantized: bool = False):
    """The weight as ``intgemm_fully_connected`` reads it: float32 is quantized like
    ``intgemm_prepare_data``; int8 (``already_quantized``) is taken as is."""
    op = "intgemm_prepare_weight"
    _check_weight(op, weight)
    if already_quantized:
        check_dtype(op, "weight", weight, ("int8",))
        return weight
    check_dtype(op, "weight", weight, ("float32",))
    if maxabs is None:
        fail(op, "maxabs is required unless already_quantized=True")
    check_ranges(op, ("maxabs", maxabs))
    return _quantize(weight, maxabs)


@defop("_contrib_intgemm_take_weight", aliases=("_npx_intgemm_take_weight",), differentiable=False)
def intgemm_take_weight(weight, indices):
    """Rows (outputs) of a prepared weight picked by ``indices``."""
    op = "intgemm_take_weight"
    check_dtype(op, "weight", weight, ("int8",))
    check_dtype(op, "indices", indices, ("int32",))
    _check_weight(op, weight)
    rows = weight.reshape(-1, weight.shape[-1])
    return jnp.take(rows, jnp.clip(indices, 0, rows.shape[0] - 1), axis=0)


@defop("_contrib_intgemm_fully_connected", aliases=("_npx_intgemm_fully_connected",), differentiable=False)
def intgemm_fully_connected(data, weight, scaling=None, bias=None, *, num_hidden: int | None = None,
                            no_bias: bool = False, flatten: bool = True, out_type: str = "float32"):
    """``data @ weight.T`` in int8: float32 data is quantized by its own max|data| on the fly.  float32
    output is the int32 product times ``scaling`` (divided by the data's scale when it was float), plus
    ``bias``; int32 output is the raw product."""
    op = "intgemm_fully_connected"
    check_choice(op, "out_type", out_type, ("float32", "int32"))
    check_dtype(op, "data", data, ("float32", "int8"))
    check_dtype(op, "weight", weight, ("int8",))
    _check_weight(op, weight)
    if num_hidden is None:
        fail(op, "num_hidden is required")
    if not no_bias and bias is None:
        fail(op, "bias is required unless no_bias=True")
    if not no_bias and out_type != "float32":
        fail(op, "a bias needs out_type='float32'")
    inner = data.shape[-1]
    rows = weight.reshape(-1, weight.shape[-1])
    if rows.shape != (num_hidden, inner):
        fail(op, f"weight has shape {tuple(weight.shape)} but ({num_hidden}, {inner}) is expected for data "
                 f"{tuple(data.shape)}")
    multiplier = None
    if out_type == "float32":
        if scaling is None:
            fail(op, "scaling is required for out_type='float32'")
        check_ranges(op, ("scaling", scaling))
        multiplier = scaling.reshape(()).astype(_f32)
    if data.dtype == jnp.float32:
        scale = _f32(127.0) / jnp.max(jnp.abs(data))
        data = jnp.clip(jnp.rint(data * scale), -127, 127).astype(jnp.int8)
        multiplier = None if multiplier is None else multiplier / scale
    out = lax.dot_general(data.astype(jnp.int32), rows.astype(jnp.int32), (((data.ndim - 1,), (1,)), ((), ())),
                          preferred_element_type=jnp.int32)
    if flatten and out.ndim > 2:
        out = out.reshape(-1, num_hidden)
    if out_type == "int32":
        return out
    out = out.astype(_f32) * multiplier
    return out if no_bias else out + bias.reshape(-1).astype(_f32)


@defop("_contrib_calibrate_entropy", aliases=("_npx_contrib_calibrate_entropy",), num_outputs=2,
       differentiable=False)
def calibrate_entropy(hist, hist_edges, *, num_quantized_bins: int = 255):
    """The threshold (a right edge of the histogram, symmetric about its middle bin) whose clipped
    distribution quantized to ``num_quantized_bins`` levels has the least KL divergence from the
    original; returns ``(threshold, divergence)``, each of shape (1,)."""
    op = "calibrate_entropy"
    check_dtype(op, "hist", hist, ("float32",))
    check_dtype(op, "hist_edges", hist_edges, ("float32",))
    bins = hist.size
    if hist_edges.size != bins + 1:
        fail(op, f"hist_edges has {hist_edges.size} entries but {bins + 1} (one more than hist) are expected")
    zero, half = bins // 2, num_quantized_bins // 2
    if num_quantized_bins < 1 or half > zero:
        fail(op, f"num_quantized_bins={num_quantized_bins} must be positive and at most the {bins} histogram "
                 "bins")
    hist, edges = hist.reshape(-1), hist_edges.reshape(-1)
    i = jnp.arange(half, zero + 1)[:, None]                     # one row per candidate threshold
    k = jnp.arange(2 * zero + 1)[None, :]
    start, length = zero - i, 2 * i + 1
    inside = k < length
    interior = (k > 0) & inside      # the last bin also takes everything above it, as MXNet's p.back()
    values = hist[jnp.clip(start + k, 0, bins - 1)]
    total = jnp.concatenate([jnp.zeros(1, hist.dtype), jnp.cumsum(hist)])
    p = jnp.where(interior, values, 0.0)
    p = p + jnp.where(k == 0, total[start + 1], 0.0) + jnp.where(k == length - 1, total[-1] - total[start + length], 0.0)
    sliced = jnp.where(interior, jnp.trunc(values), 0.0)        # MXNet copies the counts into size_t
    merged = length // num_quantized_bins
    group = jnp.minimum(k // merged, num_quantized_bins - 1)
    lo = group * merged
    hi = jnp.where(group == num_quantized_bins - 1, length, (group + 1) * merged)
    zero_col = jnp.zeros((i.shape[0], 1), _f32)
    counts = jnp.concatenate([zero_col, jnp.cumsum(sliced, axis=1)], axis=1)
    nonzero = jnp.concatenate([zero_col, jnp.cumsum((sliced != 0).astype(_f32), axis=1)], axis=1)
    pick = lambda table, at: jnp.take_along_axis(table, jnp.clip(at, 0, table.shape[1] - 1), axis=1)
    level = pick(counts, hi) - pick(counts, lo)
    norm = pick(nonzero, hi) - pick(nonzero, lo)
    q = jnp.where(inside & (p != 0) & (norm > 0), level / jnp.maximum(norm, 1.0), 0.0)
    p, p_ok = _smooth(p, inside)
    q, q_ok = _smooth(q, inside)
    p = p / jnp.sum(jnp.where(inside, p, 0.0), axis=1, keepdims=True)
    q = q / jnp.sum(jnp.where(inside, q, 0.0), axis=1, keepdims=True)
    terms = jnp.where(inside & (p > 0) & (q > 0), p * jnp.log(jnp.where(inside, p / q, 1.0)), 0.0)
    divergence = jnp.where(q_ok & p_ok, jnp.sum(terms, axis=1), jnp.inf)
    biggest = jnp.finfo(_f32).max
    divergence = jnp.where(divergence < biggest, divergence, biggest).astype(_f32)
    best = jnp.argmin(divergence)                               # the first of equal minima, as MXNet
    return as_range(edges[zero + 1 + half + best]), as_range(divergence[best])


def _smooth(p, inside, eps=1e-4):
    """MXNet's SmoothDistribution over each row's first ``length`` entries; the flag is False where
    it gives up (all zeros, or the mass moved would reach 1)."""
    zeros = inside & (p == 0)
    n_zero = jnp.sum(zeros, axis=1, keepdims=True).astype(_f32)
    n_nonzero = jnp.sum(inside, axis=1, keepdims=True).astype(_f32) - n_zero
    eps1 = _f32(eps) * n_zero / jnp.maximum(n_nonzero, 1.0)
    ok = (n_nonzero > 0) & (eps1 < 1.0)
    smoothed = p + jnp.where(zeros, _f32(eps), 0.0) - jnp.where(inside & ~zeros, eps1, 0.0)
    return smoothed, ok[:, 0]
