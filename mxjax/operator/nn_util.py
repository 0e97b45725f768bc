"""Checks and small helpers shared by the neural-network ops (``nn*.py``).

Shapes are static under ``jax.jit``, so every check here runs at trace time and
raises before XLA sees the op; the message names the op, the shapes and what
MXNet expects, as MXNet's shape-inference errors do.
"""
from __future__ import annotations

from typing import Any, Sequence

import jax.numpy as jnp

from ..base import MXNetTypeError, MXNetValueError
from ._dtypes import default_float


def fail(op: str, message: str) -> None:
    """Raise the shape/value error of ``op``."""
    raise MXNetValueError(f"{op}: {message}")


def check_choice(op: str, name: str, value: Any, choices: Sequence[str]) -> None:
    if value not in choices:
        fail(op, f"{name}={value!r} is not supported; expected one of {', '.join(map(repr, choices))}")


def check_shape(op: str, what: str, x: Any, expected: tuple, context: str = "") -> None:
    """Raise unless ``x`` (an array) has exactly ``expected`` shape."""
    if tuple(x.shape) != tuple(expected):
        extra = f" ({context})" if context else ""
        fail(op, f"{what} has shape {tuple(x.shape)} but {tuple(expected)} is expected{extra}")


def norm_axis(op: str, axis: int, ndim: int) -> int:
    """``axis`` in ``[0, ndim)``; negative counts from the end."""
    if not -ndim <= axis < ndim:
        fail(op, f"axis {axis} is out of bounds for an input with {ndim} dimensions")
    return axis % ndim


def float_input(op: str, x: Any) -> Any:
    """A float array: integer/bool input becomes the default float dtype (MXNet's float32)."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise MXNetTypeError(f"{op}: complex input ({x.dtype}) is not supported")
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x.astype(default_float())
    return x


def acc_dtype(dtype: Any) -> Any:
    """Accumulation dtype of a normalization: float32 for 16-bit floats, as MXNet's AccReal."""
    dtype = jnp.dtype(dtype)
    return jnp.dtype(jnp.float32) if dtype.itemsize < 4 else dtype


def spatial_tuple(op: str, name: str, value: Any, ndim: int, default: int) -> tuple:
    """A per-spatial-dimension tuple (``stride``, ``pad``...): empty means ``default`` everywhere."""
    if value is None or value == ():
        return (default,) * ndim
    value = tuple(int(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))
    if len(value) == 1 and ndim > 1:
        value = value * ndim
    if len(value) != ndim:
        fail(op, f"{name}={value} must have {ndim} entries, one per spatial dimension of the kernel")
    return value


# Layout names MXNet accepts, by number of spatial dimensions: (channel-first, channel-last).
LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def resolve_layout(op: str, layout: str | None, nspatial: int) -> tuple[str, bool]:
    """The layout string and whether it is channel-last."""
    if nspatial not in LAYOUTS:
        fail(op, f"{nspatial}-D spatial input is not supported; expected 1, 2 or 3 spatial dimensions")
    first, last = LAYOUTS[nspatial]
    if layout is None or layout == "None" or layout == "":
        return first, False
    if layout not in (first, last):
        fail(op, f"layout {layout!r} does not fit a {nspatial}-D input; expected {first!r} or {last!r}")
    return layout, layout == last


def to_channel_first(x: Any, channel_last: bool) -> Any:
    return jnp.moveaxis(x, -1, 1) if channel_last else x


def from_channel_first(x: Any, channel_last: bool) -> Any:
    return jnp.moveaxis(x, 1, -1) if channel_last else x
