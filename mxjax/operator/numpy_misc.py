"""NumPy functions MXNet 2.0 runs on host NumPy, here as real ops: choose, i0, unwrap, packbits,
unpackbits, msort, in1d, tril_indices_from, triu_indices_from.

Result dtypes are NumPy's (what MXNet's fallback returns), decided from input dtypes at
trace time.  Value errors XLA cannot raise (an out-of-range ``choose`` index) are checked on
concrete inputs in imperative mode (``check=``); under a trace the op clips instead.
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetTypeError, MXNetValueError
from .numpy_poly import numpy_float
from .registry import defop


def _check_choose(a, choices, *, mode: str = "raise") -> None:
    if mode == "raise":
        values = onp.asarray(a)
        count = onp.shape(choices)[0] if onp.ndim(choices) else 0
        if values.size and (values.min() < 0 or values.max() >= count):
            raise MXNetValueError(f"choose: invalid entry in choice array: indices must lie in [0, {count}), "
                                  f"got values in [{values.min()}, {values.max()}]")


@defop("choose", aliases=("_npi_choose",), check=_check_choose)
def choose(a, choices, *, mode: str = "raise"):
    """Pick ``choices[a[i]][i]`` for each index of the broadcast of ``a`` with the choices (first axis of
    ``choices`` enumerates them).  mode 'raise' (out-of-range index is an error; clipped inside a
    compiled program), 'wrap' (modulo) or 'clip'."""
    if mode not in ("raise", "wrap", "clip"):
        raise MXNetValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if not jnp.issubdtype(jnp.result_type(a), jnp.integer):
        raise MXNetTypeError(f"choose: index array a must be of an integer dtype, got {jnp.result_type(a)} "
                             "(cast it with astype('int64'))")
    if jnp.ndim(choices) == 0:
        raise MXNetValueError("choose: choices must have at least one dimension (the list of choices)")
    return jnp.choose(a, choices, mode="clip" if mode == "raise" else mode)


@defop("i0", aliases=("_npi_i0",))
def i0(x):
    """Modified Bessel function of the first kind, order 0 (integers give float64, as in NumPy)."""
    if jnp.issubdtype(jnp.result_type(x), jnp.complexfloating):
        raise MXNetTypeError("i0: complex input is not supported")
    return jnp.i0(x.astype(numpy_float(x)))


@defop("unwrap", aliases=("_npi_unwrap",))
def unwrap(p, *, discont: float | None = None, axis: int = -1, period: float = 2 * math.pi):
    """Unwrap a phase signal: differences larger than ``max(discont, period/2)`` along ``axis`` are
    replaced by their complement modulo ``period``."""
    if p.ndim == 0 or not -p.ndim <= axis < p.ndim:
        raise MXNetValueError(f"unwrap: axis {axis} is out of bounds for an array of shape {p.shape}")
    dtype = numpy_float(p)
    return jnp.unwrap(p.astype(dtype), discont, axis, period=period).astype(dtype)


def _bitorder(op: str, bitorder: str) -> None:
    if bitorder not in ("big", "little"):
        raise MXNetValueError(f"{op}: bitorder must be 'big' or 'little', got {bitorder!r}")


@defop("packbits", aliases=("_npi_packbits",))
def packbits(a, *, axis: int | None = None, bitorder: str = "big"):
    """Pack the truth values of ``a`` into the bits of uint8, along ``axis`` (flattened if None)."""
    if not (jnp.issubdtype(a.dtype, jnp.integer) or a.dtype == jnp.bool_):
        raise MXNetTypeError(f"packbits: expected an input array of integer or boolean data type, got {a.dtype}")
    _bitorder("packbits", bitorder)
    if axis is not None and not -max(a.ndim, 1) <= axis < max(a.ndim, 1):
        raise MXNetValueError(f"packbits: axis {axis} is out of bounds for an array of shape {a.shape}")
    return jnp.packbits(a, axis, bitorder)


@defop("unpackbits", aliases=("_npi_unpackbits",))
def unpackbits(a, *, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    """Unpack the bits of a uint8 array along ``axis`` (flattened if None); ``count`` keeps that many."""
    if a.dtype != jnp.uint8:
        raise MXNetTypeError(f"unpackbits: expected an input array of unsigned byte data type, got {a.dtype}")
    _bitorder("unpackbits", bitorder)
    if axis is not None and not -max(a.ndim, 1) <= axis < max(a.ndim, 1):
        raise MXNetValueError(f"unpackbits: axis {axis} is out of bounds for an array of shape {a.shape}")
    return jnp.unpackbits(a, axis, count, bitorder)


@defop("msort", aliases=("_npi_msort",))
def msort(a):
    """A copy of ``a`` sorted along its first axis."""
    if a.ndim == 0:
        raise MXNetValueError("msort: axis 0 is out of bounds for a 0-d array")
    return jnp.sort(a, axis=0)


@defop("in1d", aliases=("_npi_in1d",))
def in1d(ar1, ar2, *, assume_unique: bool = False, invert: bool = False):
    """Whether each element of ``ar1`` (flattened) is in ``ar2``: a 1-D bool array."""
    return jnp.isin(jnp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert)


def _indices_from(op: str, fn, arr, k: int):
    if arr.ndim != 2:
        raise MXNetValueError(f"{op}: input array must be 2-d, got shape {arr.shape}")
    return tuple(i.astype(jnp.int64) for i in fn(arr, k))


@defop("tril_indices_from", aliases=("_npi_tril_indices_from",), num_outputs=2, differentiable=False)
def tril_indices_from(arr, *, k: int = 0):
    """Row and column indices (int64) of the lower triangle of the 2-D ``arr`` (diagonal offset k)."""
    return _indices_from("tril_indices_from", jnp.tril_indices_from, arr, k)


@defop("triu_indices_from", aliases=("_npi_triu_indices_from",), num_outputs=2, differentiable=False)
def triu_indices_from(arr, *, k: int = 0):
    """Row and column indices (int64) of the upper triangle of the 2-D ``arr`` (diagonal offset k)."""
    return _indices_from("triu_indices_from", jnp.triu_indices_from, arr, k)
