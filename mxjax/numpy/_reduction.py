"""``mx.np`` reductions, statistics, products and whole-array comparisons, one binding per public name.

``positional=`` follows NumPy's argument order (so ``np.sum(x, 1)`` works); the
few functions whose arguments a generic binding cannot express (``einsum``'s
leading subscripts string, ``average``'s optional second output, ``histogram``'s
int-or-array ``bins``) are small Python functions around the one op.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .._frontend import store_out
from ..base import MXNetTypeError, MXNetValueError
from .._ndarray import NDArray
from .._invoke import invoke, np_class
from ..operator import get_op
from ._maker import np_function

_SUM_ARGS = ("a", "axis", "dtype", "out", "keepdims", "initial")
_MAX_ARGS = ("a", "axis", "out", "keepdims", "initial")
_MEAN_ARGS = ("a", "axis", "dtype", "out", "keepdims")
_STD_ARGS = ("a", "axis", "dtype", "out", "ddof", "keepdims")
_ARG_ARGS = ("a", "axis", "out")
_BOOL_ARGS = ("a", "axis", "out", "keepdims")
_CUM_ARGS = ("a", "axis", "dtype", "out")
_QUANTILE_ARGS = ("a", "q", "axis", "out", "overwrite_input", "method", "keepdims")
_MEDIAN_ARGS = ("a", "axis", "out", "overwrite_input", "keepdims")

sum = np_function("sum", positional=_SUM_ARGS)
prod = np_function("prod", positional=_SUM_ARGS)
max = np_function("max", positional=_MAX_ARGS)
min = np_function("min", positional=_MAX_ARGS)
amax = np_function("max", name="amax", positional=_MAX_ARGS)
amin = np_function("min", name="amin", positional=_MAX_ARGS)
ptp = np_function("ptp", positional=("a", "axis", "out", "keepdims"))
mean = np_function("mean", positional=_MEAN_ARGS)
std = np_function("std", positional=_STD_ARGS)
var = np_function("var", positional=_STD_ARGS)
argmax = np_function("argmax", positional=_ARG_ARGS)
argmin = np_function("argmin", positional=_ARG_ARGS)
nanargmax = np_function("nanargmax", positional=_ARG_ARGS)
nanargmin = np_function("nanargmin", positional=_ARG_ARGS)
all = np_function("all", positional=_BOOL_ARGS)
any = np_function("any", positional=_BOOL_ARGS)
count_nonzero = np_function("count_nonzero", positional=("a", "axis"))
cumsum = np_function("cumsum", positional=_CUM_ARGS)
cumprod = np_function("cumprod", positional=_CUM_ARGS)
nansum = np_function("nansum", positional=_SUM_ARGS)
nanprod = np_function("nanprod", positional=_SUM_ARGS)
nanmax = np_function("nanmax", positional=_MAX_ARGS)
nanmin = np_function("nanmin", positional=_MAX_ARGS)
nanmean = np_function("nanmean", positional=_MEAN_ARGS)
nanstd = np_function("nanstd", positional=_STD_ARGS)
nanvar = np_function("nanvar", positional=_STD_ARGS)
nancumsum = np_function("nancumsum", positional=_CUM_ARGS)
nancumprod = np_function("nancumprod", positional=_CUM_ARGS)
allclose = np_function("allclose")
isclose = np_function("isclose")
array_equal = np_function("array_equal")
array_equiv = np_function("array_equiv")

median = np_function("median", positional=_MEDIAN_ARGS)
nanmedian = np_function("nanmedian", positional=_MEDIAN_ARGS)
bincount = np_function("bincount", positional=("x", "weights", "minlength"))
diff = np_function("diff", positional=("a", "n", "axis", "prepend", "append"))
ediff1d = np_function("ediff1d")
interp = np_function("interp")
polyval = np_function("polyval")
convolve = np_function("convolve")
correlate = np_function("correlate")
trapezoid = np_function("trapezoid")

matmul = np_function("matmul")
dot = np_function("dot")
inner = np_function("inner")
outer = np_function("outer")
kron = np_function("kron")
vdot = np_function("vdot")
cross = np_function("cross")
_tensordot = np_function("tensordot")


def _quantile_function(op: str, scale: float) -> Any:
    """A percentile/quantile binding that checks Python-side q against NumPy's range [0, scale]."""
    binding = np_function(op, positional=_QUANTILE_ARGS)

    def function(a: Any, q: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(q, NDArray):  # an NDArray q is not read back to the host (it may be lazy)
            values = onp.asarray(q, dtype=float)
            if values.size and not ((values >= 0) & (values <= scale)).all():
                raise MXNetValueError(f"{op}: q must be in the range [0, {scale:g}], got {q!r}")
            if isinstance(q, (list, tuple)):
                q = values
        return binding(a, q, *args, **kwargs)

    function.__name__ = function.__qualname__ = op
    function.__doc__ = binding.__doc__
    function.__module__ = "mxjax.numpy"
    function.op = binding.op  # type: ignore[attr-defined]
    return function


percentile = _quantile_function("percentile", 100.0)
quantile = _quantile_function("quantile", 1.0)
nanpercentile = _quantile_function("nanpercentile", 100.0)
nanquantile = _quantile_function("nanquantile", 1.0)


def _axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted average over the given axes; with returned=True also the sum of the weights."""
    params = {"axis": _axis(axis), "returned": bool(returned), "keepdims": bool(keepdims)}
    avg, scale = invoke(get_op("average"), (a, weights), params, np_class())
    return (avg, scale) if returned else avg


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None, weights: Any = None) -> Any:
    """Histogram of a: (counts, bin edges); bins is a count of equal-width bins or an array of edges."""
    params: dict[str, Any] = {"density": bool(density)}
    if range is not None:
        params["range"] = tuple(float(r) for r in range)
    if isinstance(bins, str):
        raise MXNetValueError(f"histogram: bin estimators such as {bins!r} are not supported; "
                              f"give a number of bins or an array of edges")
    if isinstance(bins, (int, onp.integer)):
        params["bin_cnt"], bins = int(bins), None
    return invoke(get_op("histogram"), (a, bins, weights), params, np_class())


def einsum(subscripts: str, *operands: Any, out: NDArray | None = None, optimize: Any = False) -> Any:
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``."""
    if not isinstance(subscripts, str):
        raise MXNetTypeError("einsum: the first argument must be a subscripts string such as 'ij,jk->ik' "
                             "(the interleaved operand/sublist form is not supported)")
    params = {"subscripts": subscripts, "optimize": optimize if isinstance(optimize, (bool, str)) else bool(optimize)}
    result = invoke(get_op("einsum"), operands, params, np_class())
    return store_out(out, result, "einsum") if out is not None else result


def _nested_tuple(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_nested_tuple(v) for v in value)
    return int(value)


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum-product over the last ``axes`` axes of a and the first of b, or over ``(a_axes, b_axes)``."""
    return _tensordot(a, b, axes=_nested_tuple(axes))


for _f in (average, histogram, einsum, tensordot):
    _f.__module__ = "mxjax.numpy"
tensordot.op = _tensordot.op  # type: ignore[attr-defined]
average.op, histogram.op, einsum.op = get_op("average"), get_op("histogram"), get_op("einsum")  # type: ignore

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "ptp", "mean", "std", "var", "argmax", "argmin",
    "nanargmax", "nanargmin", "all", "any", "count_nonzero", "cumsum", "cumprod", "nansum", "nanprod",
    "nanmax", "nanmin", "nanmean", "nanstd", "nanvar", "nancumsum", "nancumprod", "allclose", "isclose",
    "array_equal", "array_equiv", "median", "nanmedian", "percentile", "quantile", "nanpercentile",
    "nanquantile", "average", "histogram", "bincount", "diff", "ediff1d", "interp", "polyval", "convolve",
    "correlate", "trapezoid", "matmul", "dot", "inner", "outer", "kron", "vdot", "cross", "tensordot",
    "einsum",
]
