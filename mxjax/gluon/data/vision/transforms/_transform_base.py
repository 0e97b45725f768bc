"""Shared base of the image transforms in ``mx.gluon.data.vision.transforms``: the accepted input
layouts, input and size checks, and ``_ImageTransform``, the HybridBlock that transforms its first
input and passes the rest through.

Separate so that the geometric transforms (``image.py``) and the colour transforms
(``_color_transforms.py``) build on it without importing each other.
"""
from __future__ import annotations

from typing import Any

from ..... import _deferred_compute as dc
from ....._ndarray import NDArray
from .....base import MXNetTypeError, MXNetValueError, numeric_types
from ....block import HybridBlock

_HWC = ((3, 4), "(H, W, C) or (N, H, W, C)")
_HWC_ONLY = ((3,), "(H, W, C)")
_CHW = ((3, 4), "(C, H, W) or (N, C, H, W)")


def _append_return(*outputs: Any) -> Any:
    """One output as itself, several as a tuple (the transformed image first), none as None."""
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _check_input(name: str, x: Any, layout: tuple) -> None:
    """Raise naming the transform unless ``x`` is an array of one of the accepted ranks."""
    ndims, wanted = layout
    if not isinstance(x, NDArray):
        raise MXNetTypeError(f"{name}: expected an mx.np.ndarray image of shape {wanted}, "
                             f"got {type(x).__name__}")
    if x.ndim not in ndims:
        raise MXNetValueError(f"{name}: expected an image of shape {wanted}, got shape {tuple(x.shape)}")


def _width_height(name: str, size: Any, allow_single: bool = False) -> tuple:
    """``size`` (an int, or (width, height)) as a validated tuple; a bare int gives a square
    unless ``allow_single`` keeps it one element (Resize's short-edge mode)."""
    if isinstance(size, numeric_types):
        size = (size,) if allow_single else (size, size)
    try:
        dims = tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise MXNetValueError(f"{name}: size must be an int or a (width, height) tuple, got {size!r}") from None
    if len(dims) not in ((1, 2) if allow_single else (2,)) or any(d <= 0 for d in dims):
        raise MXNetValueError(f"{name}: size must be a positive int or a (width, height) tuple of "
                              f"positive ints, got {size!r}")
    return dims


class _ImageTransform(HybridBlock):
    """Base of the hybridizable transforms: ``forward(x, *extra)`` maps ``x`` with ``_apply`` and
    returns ``extra`` untouched.  Hybridized, only ``x`` goes through the compiled program, so
    extra inputs of any type (Python ints, strings) pass through; MXNet 2.0 rejects non-array
    extras of a hybridized block and re-traces when their number changes."""

    _layout = _HWC

    def _apply(self, x: Any) -> Any:
        raise NotImplementedError

    def forward(self, x: Any, *args: Any) -> Any:
        _check_input(type(self).__name__, x, self._layout)
        return _append_return(self._apply(x), *args)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) > 1 and self._active and not kwargs and not dc.is_deferred_compute():
            return _append_return(super()._call(args[0]), *args[1:])
        return super()._call(*args, **kwargs)
