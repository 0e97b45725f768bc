"""Statistics, 1-D numerics and sum-products: average, percentile, histogram, bincount, diff, interp, einsum...

Float-producing functions give the default float dtype (float32) for integer
input, as MXNet does, where NumPy gives float64.  (matmul and dot live in core.py.)
"""
from __future__ import annotations

import jax.numpy as jnp

from ..base import MXNetTypeError, MXNetValueError
from ._dtypes import fix_float, to_float
from .reduction import check_axis
from .registry import defop


@defop("average", aliases=("_npi_average",), num_outputs=2)
def average(a, weights=None, *, axis: axis | None = None, returned: bool = False,
            keepdims: bool = False, weighted: bool | None = None):
    """Weighted average over the given axes; outputs (average, sum of weights) as MXNet's op does."""
    check_axis("average", a, axis)
    if weighted is not None and weighted != (weights is not None):  # MXNet's JSON flag: must agree
        raise MXNetValueError(f"average: weighted={weighted} but weights were {'not ' * weighted}given")
    a = to_float(a)
    avg, scale = jnp.average(a, axis=axis, weights=weights, returned=True, keepdims=keepdims)
    avg = fix_float(avg, a, weights)
    return avg, scale.astype(avg.dtype)


def _float_result(out, a):
    """Quantile-like results take a's float dtype (the default float for integer a), whatever q's dtype."""
    return out.astype(to_float(a).dtype)


def _quantile_args(op, a, q, q_scalar, method, interpolation, axis):
    check_axis(op, a, axis)
    if q is None:
        if q_scalar is None:
            raise MXNetValueError(f"{op}: q is required")
        q = q_scalar
    return q, interpolation if interpolation is not None else method


@defop("percentile", aliases=("_npi_percentile",))
def percentile(a, q=None, *, axis: axis | None = None, method: str = "linear", keepdims: bool = False,
               overwrite_input: bool = False, interpolation: str | None = None, q_scalar: float | None = None):
    """q-th percentile(s) (q in [0, 100]) over the given axes."""
    q, method = _quantile_args("percentile", a, q, q_scalar, method, interpolation, axis)
    return _float_result(jnp.percentile(to_float(a), q, axis=axis, method=method, keepdims=keepdims), a)


@defop("quantile")
def quantile(a, q, *, axis: axis | None = None, method: str = "linear", keepdims: bool = False,
             overwrite_input: bool = False, interpolation: str | None = None):
    """q-th quantile(s) (q in [0, 1]) over the given axes."""
    q, method = _quantile_args("quantile", a, q, None, method, interpolation, axis)
    return _float_result(jnp.quantile(to_float(a), q, axis=axis, method=method, keepdims=keepdims), a)


@defop("median")
def median(a, *, axis: axis | None = None, keepdims: bool = False, overwrite_input: bool = False):
    """Median over the given axes."""
    check_axis("median", a, axis)
    return _float_result(jnp.median(to_float(a), axis=axis, keepdims=keepdims), a)


@defop("nanpercentile")
def nanpercentile(a, q, *, axis: axis | None = None, method: str = "linear", keepdims: bool = False,
                  overwrite_input: bool = False, interpolation: str | None = None):
    """q-th percentile(s) over the given axes, ignoring NaNs."""
    q, method = _quantile_args("nanpercentile", a, q, None, method, interpolation, axis)
    return _float_result(jnp.nanpercentile(to_float(a), q, axis=axis, method=method, keepdims=keepdims), a)


@defop("nanquantile")
def nanquantile(a, q, *, axis: axis | None = None, method: str = "linear", keepdims: bool = False,
                overwrite_input: bool = False, interpolation: str | None = None):
    """q-th quantile(s) over the given axes, ignoring NaNs."""
    q, method = _quantile_args("nanquantile", a, q, None, method, interpolation, axis)
    return _float_result(jnp.nanquantile(to_float(a), q, axis=axis, method=method, keepdims=keepdims), a)


@defop("nanmedian")
def nanmedian(a, *, axis: axis | None = None, keepdims: bool = False, overwrite_input: bool = False):
    """Median over the given axes, ignoring NaNs."""
    check_axis("nanmedian", a, axis)
    return _float_result(jnp.nanmedian(to_float(a), axis=axis, keepdims=keepdims), a)


@defop("histogram", aliases=("_npi_histogram",), num_outputs=2)
def histogram(a, bins=None, weights=None, *, bin_cnt: int | None = None, range: tuple | None = None,
              density: bool = False):
    """Histogram of a: (counts, bin edges); ``bins`` an array of edges, or ``bin_cnt`` equal-width bins."""
    if bins is None and bin_cnt is None:
        bin_cnt = 10
    if bins is not None and bin_cnt is not None:
        raise MXNetValueError("histogram: give either bins (an array of edges) or bin_cnt, not both")
    if bin_cnt is not None and bin_cnt < 1:
        raise MXNetValueError(f"histogram: the number of bins must be positive, got {bin_cnt}")
    if range is not None and (len(range) != 2 or range[0] > range[1]):
        raise MXNetValueError(f"histogram: range must be (min, max) with min <= max, got {range}")
    if weights is not None and jnp.shape(weights) != jnp.shape(a):
        raise MXNetValueError(f"histogram: weights of shape {tuple(jnp.shape(weights))} must match "
                              f"a's shape {tuple(jnp.shape(a))}")
    a = jnp.asarray(a)
    hist, edges = jnp.histogram(a, bins=bins if bins is not None else bin_cnt, range=range,
                                weights=weights, density=density)
    edge_dtype = to_float(a).dtype if bins is None else to_float(jnp.asarray(bins)).dtype
    if density:
        hist = hist.astype(edge_dtype)
    elif weights is None:
        hist = hist.astype(jnp.int64)
    else:
        hist = hist.astype(jnp.asarray(weights).dtype)
    return hist, edges.astype(edge_dtype)


@defop("bincount", aliases=("_npi_bincount",), dynamic_shape=True)
def bincount(x, weights=None, *, minlength: int = 0, has_weights: bool | None = None):
    """Count of each value in a non-negative int array (length max(x)+1, at least minlength)."""
    x = jnp.asarray(x)
    if x.ndim != 1:
        raise MXNetValueError(f"bincount: expected a 1-D array, got shape {x.shape}")
    if not (jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_):
        raise MXNetTypeError(f"bincount: expected an integer array, got {x.dtype.name}")
    if minlength < 0:
        raise MXNetValueError(f"bincount: minlength must be non-negative, got {minlength}")
    if has_weights is not None and has_weights != (weights is not None):
        raise MXNetValueError(f"bincount: has_weights={has_weights} disagrees with the inputs given")
    if weights is not None and jnp.shape(weights) != x.shape:
        raise MXNetValueError(f"bincount: weights of shape {tuple(jnp.shape(weights))} must match x's shape {x.shape}")
    # a dynamic-shape op runs eagerly, so x is concrete: the length is max(x)+1 as in NumPy
    if x.size and int(x.min()) < 0:
        raise MXNetValueError("bincount: x must contain only non-negative values")
    length = max(int(x.max()) + 1 if x.size else 0, minlength)
    out = jnp.bincount(x, weights=weights, minlength=minlength, length=length)
    return out.astype(jnp.int64) if weights is None else fix_float(out, weights)


@defop("diff", aliases=("_npi_diff",))
def diff(a, prepend=None, append=None, *, n: int = 1, axis: int = -1):
    """n-th discrete difference along an axis."""
    check_axis("diff", a, axis)
    if n < 0:
        raise MXNetValueError(f"diff: order n must be non-negative, got {n}")
    if jnp.ndim(a) == 0:
        raise MXNetValueError("diff: requires input that is at least one dimensional")
    return jnp.diff(a, n=n, axis=axis, prepend=prepend, append=append)


@defop("ediff1d")
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences between consecutive elements of the flattened array, optionally padded."""
    return jnp.ediff1d(ary, to_end=to_end, to_begin=to_begin)


@defop("interp")
def interp(x, xp, fp, *, left: float | None = None, right: float | None = None, period: float | None = None):
    """One-dimensional piecewise-linear interpolation of (xp, fp) at x."""
    if jnp.ndim(xp) != 1 or jnp.shape(xp) != jnp.shape(fp):
        raise MXNetValueError(f"interp: xp and fp must be 1-D of the same length, got {tuple(jnp.shape(xp))} "
                              f"and {tuple(jnp.shape(fp))}")
    if period == 0:
        raise MXNetValueError("interp: period must be a non-zero value")
    out = jnp.interp(to_float(x), to_float(xp), to_float(fp), left=left, right=right, period=period)
    return fix_float(out, x, xp, fp)


@defop("polyval", aliases=("_npi_polyval",))
def polyval(p, x):
    """Value of the polynomial with coefficients p (highest degree first) at x."""
    if jnp.ndim(p) != 1:
        raise MXNetValueError(f"polyval: coefficients must be 1-D, got shape {tuple(jnp.shape(p))}")
    return fix_float(jnp.polyval(p, x), p, x)


def _check_1d(op, a, v):
    if jnp.ndim(a) != 1 or jnp.ndim(v) != 1:
        raise MXNetValueError(f"{op}: expected two 1-D arrays, got shapes {tuple(jnp.shape(a))} and "
                              f"{tuple(jnp.shape(v))}")
    if jnp.size(a) == 0 or jnp.size(v) == 0:
        raise MXNetValueError(f"{op}: inputs cannot be empty")


@defop("convolve")
def convolve(a, v, *, mode: str = "full"):
    """Discrete linear convolution of two 1-D arrays (mode 'full', 'same' or 'valid')."""
    _check_1d("convolve", a, v)
    return fix_float(jnp.convolve(a, v, mode=mode), a, v)


@defop("correlate")
def correlate(a, v, *, mode: str = "valid"):
    """Cross-correlation of two 1-D arrays (mode 'valid', 'same' or 'full')."""
    _check_1d("correlate", a, v)
    return fix_float(jnp.correlate(a, v, mode=mode), a, v)


@defop("trapezoid")
def trapezoid(y, x=None, *, dx: float = 1.0, axis: int = -1):
    """Integral along an axis by the composite trapezoidal rule (sample points x, or spacing dx)."""
    check_axis("trapezoid", y, axis)
    out = jnp.trapezoid(to_float(y), x if x is None else to_float(x), dx=dx, axis=axis)
    return fix_float(out, y, x) if x is not None else out.astype(to_float(y).dtype)


# -- sum-products --------------------------------------------------------------------------

@defop("einsum", aliases=("_npi_einsum",))
def einsum(*operands, subscripts: str = "", optimize: any = False, num_args: int | None = None):
    """Einstein summation over the operands as the subscripts string says (``'ij,jk->ik'``)."""
    if not subscripts:
        raise MXNetValueError("einsum: a subscripts string such as 'ij,jk->ik' is required")
    if num_args is not None and num_args != len(operands):  # MXNet's JSON records the operand count
        raise MXNetValueError(f"einsum: num_args={num_args} but {len(operands)} operands were given")
    n_terms = subscripts.split("->")[0].count(",") + 1
    if n_terms != len(operands):
        raise MXNetValueError(f"einsum: subscripts {subscripts!r} name {n_terms} operand(s), "
                              f"got {len(operands)} with shapes {[tuple(jnp.shape(o)) for o in operands]}")
    # MXNet's optimize is an int flag (0/1); JAX takes a bool or a strategy name
    optimize = bool(optimize) if isinstance(optimize, int) else optimize
    return fix_float(jnp.einsum(subscripts, *operands, optimize=optimize), *operands)


@defop("tensordot", aliases=("_npi_tensordot_int_axes",))
def tensordot(a, b, *, axes: any = 2):
    """Sum-product over the last ``axes`` axes of a and first of b, or over the axis lists ``(a_axes, b_axes)``."""
    if isinstance(axes, int):
        if axes < 0 or axes > min(jnp.ndim(a), jnp.ndim(b)):
            raise MXNetValueError(f"tensordot: axes={axes} must be in [0, {min(jnp.ndim(a), jnp.ndim(b))}] "
                                  f"for shapes {tuple(jnp.shape(a))} and {tuple(jnp.shape(b))}")
    else:
        a_axes, b_axes = axes
        a_axes = (a_axes,) if isinstance(a_axes, int) else tuple(a_axes)
        b_axes = (b_axes,) if isinstance(b_axes, int) else tuple(b_axes)
        if len(a_axes) != len(b_axes) or any(jnp.shape(a)[i] != jnp.shape(b)[j] for i, j in zip(a_axes, b_axes)):
            raise MXNetValueError(f"tensordot: shape-mismatch for sum over axes {a_axes} of {tuple(jnp.shape(a))} "
                                  f"and {b_axes} of {tuple(jnp.shape(b))}")
        axes = (a_axes, b_axes)
    return fix_float(jnp.tensordot(a, b, axes=axes), a, b)


@defop("inner")
def inner(a, b):
    """Inner product over the last axes of a and b."""
    return fix_float(jnp.inner(a, b), a, b)


@defop("outer")
def outer(a, b):
    """Outer product of the flattened a and b."""
    return fix_float(jnp.outer(a, b), a, b)


@defop("kron", aliases=("_npi_kron",))
def kron(a, b):
    """Kronecker product of a and b."""
    return fix_float(jnp.kron(a, b), a, b)


@defop("vdot")
def vdot(a, b):
    """Dot product of the flattened arrays (conjugating a)."""
    if jnp.size(a) != jnp.size(b):
        raise MXNetValueError(f"vdot: arrays of shapes {tuple(jnp.shape(a))} and {tuple(jnp.shape(b))} "
                              f"must have the same number of elements")
    return fix_float(jnp.vdot(a, b), a, b)


@defop("cross", aliases=("_npi_cross",))
def cross(a, b, *, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """Cross product of 2- or 3-element vectors along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    for name, arr, ax in (("a", a, axisa), ("b", b, axisb)):
        if not -jnp.ndim(arr) <= ax < jnp.ndim(arr):
            raise MXNetValueError(f"cross: axis{name}={ax} is out of bounds for {name} of shape "
                                  f"{tuple(jnp.shape(arr))}")
        if jnp.shape(arr)[ax] not in (2, 3):
            raise MXNetValueError(f"cross: incompatible dimensions for cross product (dimension must be 2 or 3), "
                                  f"got shapes {tuple(jnp.shape(a))} and {tuple(jnp.shape(b))}")
    return fix_float(jnp.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc), a, b)
