"""MXNet 1.x's fluent methods of ``NDArray`` (``x.sum(axis=1)``, ``x.clip(0, 1)``...).

Each method is the ``mx.nd`` function of the same name with the array as its first
argument, as in MXNet 1.x.  ``FLUENT_METHODS`` maps names to those functions; the
legacy ``NDArray`` looks methods up there (``mx.np.ndarray`` has NumPy's methods).
"""
from __future__ import annotations

from typing import Any, Callable

from ..base import MXNetValueError
from . import _extra, _functions, _legacy, _shared


def tostype(self: Any, stype: str) -> Any:
    """Storage-type conversion: mxjax has only dense ('default') storage."""
    if stype != "default":
        raise MXNetValueError(f"tostype: mxjax arrays support only the 'default' (dense) storage type, got {stype!r}")
    return self


FLUENT_METHODS: dict[str, Callable[..., Any]] = {
    "zeros_like": _shared.zeros_like,
    "ones_like": _shared.ones_like,
    "broadcast_axes": _legacy.broadcast_axes,
    "repeat": _shared.repeat,
    "pad": _legacy.pad,
    "swapaxes": _legacy.swapaxes,
    "slice": _legacy.slice,
    "slice_axis": _legacy.slice_axis,
    "slice_like": _legacy.slice_like,
    "one_hot": _shared.one_hot,
    "pick": _shared.pick,
    "sort": _legacy.sort,
    "topk": _shared.topk,
    "argsort": _legacy.argsort,
    "argmax": _legacy.argmax,
    "argmax_channel": _legacy.argmax_channel,
    "argmin": _legacy.argmin,
    "clip": _legacy.clip,
    "abs": _shared.abs,
    "sign": _shared.sign,
    "flatten": _legacy.flatten,
    "shape_array": _legacy.shape_array,
    "size_array": _legacy.size_array,
    "expand_dims": _shared.expand_dims,
    "tile": _shared.tile,
    "flip": _legacy.flip,
    "depth_to_space": _legacy.depth_to_space,
    "space_to_depth": _legacy.space_to_depth,
    "diag": _legacy.diag,
    "sum": _legacy.sum,
    "nansum": _legacy.nansum,
    "prod": _legacy.prod,
    "nanprod": _legacy.nanprod,
    "mean": _legacy.mean,
    "max": _legacy.max,
    "min": _legacy.min,
    "norm": _legacy.norm,
    "round": _legacy.round,
    "rint": _shared.rint,
    "fix": _shared.fix,
    "floor": _shared.floor,
    "ceil": _shared.ceil,
    "trunc": _shared.trunc,
    "sin": _shared.sin,
    "cos": _shared.cos,
    "tan": _shared.tan,
    "arcsin": _shared.arcsin,
    "arccos": _shared.arccos,
    "arctan": _shared.arctan,
    "degrees": _shared.degrees,
    "radians": _shared.radians,
    "sinh": _shared.sinh,
    "cosh": _shared.cosh,
    "tanh": _shared.tanh,
    "arcsinh": _shared.arcsinh,
    "arccosh": _shared.arccosh,
    "arctanh": _shared.arctanh,
    "exp": _shared.exp,
    "expm1": _shared.expm1,
    "log": _shared.log,
    "log10": _shared.log10,
    "log2": _shared.log2,
    "log1p": _shared.log1p,
    "log_sigmoid": _shared.log_sigmoid,
    "sqrt": _shared.sqrt,
    "rsqrt": _legacy.rsqrt,
    "cbrt": _shared.cbrt,
    "rcbrt": _legacy.rcbrt,
    "square": _shared.square,
    "reciprocal": _shared.reciprocal,
    "relu": _shared.relu,
    "sigmoid": _shared.sigmoid,
    "softmax": _shared.softmax,
    "log_softmax": _shared.log_softmax,
    "softmin": _shared.softmin,
    "mish": _shared.mish,
    "squeeze": _shared.squeeze,
    "broadcast_to": _legacy.broadcast_to,
    "broadcast_like": _legacy.broadcast_like,
    "reshape_like": _legacy.reshape_like,
    "split": _functions.split,
    "split_v2": _extra.split_v2,
    "take": _functions.take,
    "tostype": tostype,
}
