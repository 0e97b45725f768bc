"""``mx.np.fallback``: NumPy functions that run on host NumPy and give ``mx.np`` arrays.

As in MXNet 2.0: the ``mx.np.ndarray`` arguments (also inside lists, tuples and dicts) are copied
to the host, official NumPy runs, and each NumPy array in the result comes back as an
``mx.np.ndarray`` of the same dtype on the inputs' device; scalars and dtypes are returned as
NumPy gives them.  These functions are not differentiable: under ``autograd.record()`` they
raise ``ValueError`` (move the call outside the recorded scope), and they cannot be part of a
hybridized graph (``MXNetError`` under deferred compute).  Callables passed in
(``apply_along_axis``'s ``func1d``) receive NumPy arrays.

mxjax binds many of these names to real ops in ``mx.np`` itself; this module keeps the host
versions of every name MXNet's module lists.  Functions NumPy has since removed (``alltrue``,
``msort``, ``trapz``, ``in1d``, the financial functions) run on host implementations of
their former behaviour.
"""
from __future__ import annotations

import functools
import logging
from typing import Any, Callable

import numpy as onp

from .._deferred_compute import is_deferred_compute
from ..autograd import is_recording
from ..base import MXNetError, MXNetValueError
from ..device import Device
from .._ndarray import NDArray, array
from . import _numpy_removed
from .multiarray import ndarray

_warned: set[str] = set()


def to_host(value: Any, devices: list[Device]) -> Any:
    """``value`` with every mx array (also in lists, tuples, dicts) replaced by a NumPy copy; the arrays'
    devices are appended to ``devices``."""
    if isinstance(value, NDArray):
        devices.append(value.device)
        return value.asnumpy()
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_host(v, devices) for v in value)
    if isinstance(value, dict):
        return {k: to_host(v, devices) for k, v in value.items()}
    return value


def to_device(value: Any, device: Device | None) -> Any:
    """``value`` with every NumPy array (also in lists and tuples) made an ``mx.np.ndarray`` of its dtype."""
    if isinstance(value, onp.ndarray):
        return array(value, dtype=value.dtype, device=device, cls=ndarray)
    if isinstance(value, (list, tuple)):
        items = [to_device(v, device) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def host_function(function: Callable[..., Any], name: str, namespace: str = "np") -> Callable[..., Any]:
    """The ``mx.np`` version of a host NumPy function (see the module docstring)."""

    @functools.wraps(function)
    def fallback(*args: Any, **kwargs: Any) -> Any:
        if is_recording():
            raise MXNetValueError(
                f"{namespace}.{name}: falling back to the NumPy operator with autograd active is not "
                "supported; move the call outside the autograd.record() scope")
        if is_deferred_compute():
            raise MXNetError(
                f"{namespace}.{name}: a fallback operator runs on host NumPy and cannot be part of a "
                "hybridized graph; call it outside the HybridBlock's forward, or do not hybridize")
        devices: list[Device] = []
        args, kwargs = to_host(args, devices), to_host(kwargs, devices)
        if len(set(devices)) > 1:
            raise MXNetValueError(f"{namespace}.{name}: input arrays are on different devices "
                                  f"{sorted(set(map(str, devices)))}; move them to one device")
        if name not in _warned:
            _warned.add(name)
            logging.warning("%s.%s is a fallback operator, which is actually using official numpy's "
                            "implementation.", namespace, name)
        return to_device(function(*args, **kwargs), devices[0] if devices else None)

    fallback.__module__ = f"mxjax.numpy.{'fallback' if namespace == 'np' else 'fallback_linalg'}"
    fallback.__doc__ = (f"NumPy's ``{name}`` run on the host (a fallback: not differentiable, raises "
                        "ValueError under autograd.record()); mx arrays in, mx arrays out.\n\n"
                        + (function.__doc__ or ""))
    return fallback

# every name of MXNet 2.0's mx.np.fallback, one line each
dtype = onp.dtype
allclose = host_function(onp.allclose, "allclose")
alltrue = host_function(_numpy_removed.alltrue, "alltrue")
apply_along_axis = host_function(onp.apply_along_axis, "apply_along_axis")
apply_over_axes = host_function(onp.apply_over_axes, "apply_over_axes")
argpartition = host_function(onp.argpartition, "argpartition")
argwhere = host_function(onp.argwhere, "argwhere")
array_equal = host_function(onp.array_equal, "array_equal")
array_equiv = host_function(onp.array_equiv, "array_equiv")
choose = host_function(onp.choose, "choose")
compress = host_function(onp.compress, "compress")
corrcoef = host_function(onp.corrcoef, "corrcoef")
correlate = host_function(onp.correlate, "correlate")
count_nonzero = host_function(onp.count_nonzero, "count_nonzero")
cov = host_function(onp.cov, "cov")
cumprod = host_function(onp.cumprod, "cumprod")
digitize = host_function(onp.digitize, "digitize")
divmod = host_function(onp.divmod, "divmod")
extract = host_function(onp.extract, "extract")
float_power = host_function(onp.float_power, "float_power")
frexp = host_function(onp.frexp, "frexp")
heaviside = host_function(onp.heaviside, "heaviside")
histogram2d = host_function(onp.histogram2d, "histogram2d")
histogram_bin_edges = host_function(onp.histogram_bin_edges, "histogram_bin_edges")
histogramdd = host_function(onp.histogramdd, "histogramdd")
i0 = host_function(onp.i0, "i0")
in1d = host_function(_numpy_removed.in1d, "in1d")
intersect1d = host_function(onp.intersect1d, "intersect1d")
isclose = host_function(onp.isclose, "isclose")
isin = host_function(onp.isin, "isin")
ix_ = host_function(onp.ix_, "ix_")
lexsort = host_function(onp.lexsort, "lexsort")
min_scalar_type = host_function(onp.min_scalar_type, "min_scalar_type")
mirr = host_function(_numpy_removed.mirr, "mirr")
modf = host_function(onp.modf, "modf")
msort = host_function(_numpy_removed.msort, "msort")
nanargmax = host_function(onp.nanargmax, "nanargmax")
nanargmin = host_function(onp.nanargmin, "nanargmin")
nancumprod = host_function(onp.nancumprod, "nancumprod")
nancumsum = host_function(onp.nancumsum, "nancumsum")
nanmax = host_function(onp.nanmax, "nanmax")
nanmedian = host_function(onp.nanmedian, "nanmedian")
nanmin = host_function(onp.nanmin, "nanmin")
nanpercentile = host_function(onp.nanpercentile, "nanpercentile")
nanprod = host_function(onp.nanprod, "nanprod")
nanquantile = host_function(onp.nanquantile, "nanquantile")
nanstd = host_function(onp.nanstd, "nanstd")
nansum = host_function(onp.nansum, "nansum")
nanvar = host_function(onp.nanvar, "nanvar")
ndim = host_function(onp.ndim, "ndim")
npv = host_function(_numpy_removed.npv, "npv")
packbits = host_function(onp.packbits, "packbits")
partition = host_function(onp.partition, "partition")
piecewise = host_function(onp.piecewise, "piecewise")
pmt = host_function(_numpy_removed.pmt, "pmt")
poly = host_function(onp.poly, "poly")
polyadd = host_function(onp.polyadd, "polyadd")
polydiv = host_function(onp.polydiv, "polydiv")
polyfit = host_function(onp.polyfit, "polyfit")
polyint = host_function(onp.polyint, "polyint")
polymul = host_function(onp.polymul, "polymul")
polysub = host_function(onp.polysub, "polysub")
positive = host_function(onp.positive, "positive")
ppmt = host_function(_numpy_removed.ppmt, "ppmt")
promote_types = host_function(onp.promote_types, "promote_types")
ptp = host_function(onp.ptp, "ptp")
pv = host_function(_numpy_removed.pv, "pv")
rate = host_function(_numpy_removed.rate, "rate")
real = host_function(onp.real, "real")
roots = host_function(onp.roots, "roots")
searchsorted = host_function(onp.searchsorted, "searchsorted")
select = host_function(onp.select, "select")
setdiff1d = host_function(onp.setdiff1d, "setdiff1d")
setxor1d = host_function(onp.setxor1d, "setxor1d")
signbit = host_function(onp.signbit, "signbit")
size = host_function(onp.size, "size")
spacing = host_function(onp.spacing, "spacing")
take_along_axis = host_function(onp.take_along_axis, "take_along_axis")
trapz = host_function(_numpy_removed.trapz, "trapz")
tril_indices_from = host_function(onp.tril_indices_from, "tril_indices_from")
trim_zeros = host_function(onp.trim_zeros, "trim_zeros")
union1d = host_function(onp.union1d, "union1d")
unpackbits = host_function(onp.unpackbits, "unpackbits")
unwrap = host_function(onp.unwrap, "unwrap")
vander = host_function(onp.vander, "vander")

__all__ = [
    "allclose", "alltrue", "apply_along_axis", "apply_over_axes", "argpartition", "argwhere",
    "array_equal", "array_equiv", "choose", "compress", "corrcoef", "correlate", "count_nonzero",
    "cov", "cumprod", "digitize", "divmod", "dtype", "extract", "float_power", "frexp", "heaviside",
    "histogram2d", "histogram_bin_edges", "histogramdd", "i0", "in1d", "intersect1d", "isclose",
    "isin", "ix_", "lexsort", "min_scalar_type", "mirr", "modf", "msort", "nanargmax", "nanargmin",
    "nancumprod", "nancumsum", "nanmax", "nanmedian", "nanmin", "nanpercentile", "nanprod",
    "nanquantile", "nanstd", "nansum", "nanvar", "ndim", "npv", "packbits", "partition",
    "piecewise", "pmt", "poly", "polyadd", "polydiv", "polyfit", "polyint", "polymul", "polysub",
    "positive", "ppmt", "promote_types", "ptp", "pv", "rate", "real", "roots", "searchsorted",
    "select", "setdiff1d", "setxor1d", "signbit", "size", "spacing", "take_along_axis", "trapz",
    "tril_indices_from", "trim_zeros", "union1d", "unpackbits", "unwrap", "vander",
]
