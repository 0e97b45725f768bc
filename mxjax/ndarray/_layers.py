"""``mx.nd`` layers whose behaviour depends on training mode: ``Dropout``, ``BatchNorm``, ``LeakyReLU``.

They share ``mx.npx``'s Python-level handling (training flag from ``autograd``, in-place
update of BatchNorm's moving statistics, random RReLU slopes) and return the legacy
``NDArray`` (same buffer and autograd record, rewrapped).
"""
from __future__ import annotations

from typing import Any, Callable

from .._ndarray import NDArray
from ..graph.lazy import Lazy
from ..numpy_extension import _nn as _npx
from ..operator import get_op

__all__ = ["Dropout", "BatchNorm", "LeakyReLU"]


def as_legacy(result: Any) -> Any:
    """The same array(s) as legacy NDArrays (shares the buffer, engine var and autograd record)."""
    if isinstance(result, (tuple, list)):
        return type(result)(as_legacy(r) for r in result)
    if type(result) is NDArray or not isinstance(result, NDArray):
        return result
    legacy = NDArray._wrap(result._data)
    legacy._var, legacy._ag = result._var, result._ag
    if isinstance(legacy._var, Lazy):
        legacy._var.share(legacy)
    return legacy


def _legacy_layer(fn: Callable, name: str, rename: dict[str, str], doc: str) -> Callable:
    renames = tuple(rename.items())

    def function(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("attr", None)
        for old, new in renames:
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        result = fn(*args, **kwargs)
        return result if kwargs.get("out") is not None else as_legacy(result)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    function.__module__ = "mxjax.ndarray"
    function.op = get_op(name)  # type: ignore[attr-defined]
    return function


Dropout = _legacy_layer(
    _npx.dropout, "Dropout", {},
    "Dropout(data, p=0.5, mode='training', axes=(), cudnn_off=False): zero elements with probability p\n"
    "and scale the rest by 1/(1-p) in training (autograd.record()) or always with mode='always'.")
BatchNorm = _legacy_layer(
    _npx.batch_norm, "BatchNorm", {"data": "x", "moving_mean": "running_mean", "moving_var": "running_var"},
    "BatchNorm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True, ...):\n"
    "batch statistics in training (moving statistics updated in place), moving statistics otherwise.")
LeakyReLU = _legacy_layer(
    _npx.leaky_relu, "LeakyReLU", {},
    "LeakyReLU(data, gamma=None, act_type='leaky', slope=0.25, lower_bound=0.125, upper_bound=0.334):\n"
    "leaky/prelu/elu/selu/gelu/rrelu activations (rrelu draws random slopes in training).")
