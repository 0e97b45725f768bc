"""MXNet's dtype rules where they differ from JAX's 64-bit mode, applied at trace time.

JAX (with x64 on) promotes integers to float64; MXNet promotes them to its
default float dtype, float32 unless ``npx.set_np(dtype=True)``.  The registry
drops its jit caches when that default changes, so reading it here is safe.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as onp

from .. import _config


def default_float() -> onp.dtype:
    return _config.default_float_dtype()


def to_float(x: Any) -> Any:
    """Cast integer/bool input to the default float dtype (for sqrt, exp, mean, true division...)."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x.astype(default_float())
    return x


def fix_float(out: Any, *inputs: Any) -> Any:
    """Undo JAX's float64 promotion when no input was a (non-weak) float64 array."""
    if getattr(out, "dtype", None) != jnp.float64 or default_float() == onp.float64:
        return out
    for x in inputs:
        if getattr(x, "dtype", None) == jnp.float64 and not _weak(x):
            return out
        if isinstance(x, onp.ndarray) and x.dtype == onp.float64:
            return out
    return out.astype(default_float())


def float_for(x: Any) -> Any:
    """Cast integer/bool input to the float dtype NumPy picks for a float function (``sqrt``,
    ``exp``...): float16 for 1-byte input, float32 for 2-byte, else the default float dtype."""
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    size = x.dtype.itemsize
    return x.astype(jnp.float16 if size == 1 else jnp.float32 if size == 2 else default_float())


# kinds of binary op for :func:`binary_dtype`
ARITH = "arith"        # + - * // % **: a bool array with a Python int gives int64, as in MXNet 2.0
DIVIDE = "divide"      # true division: integer operands give the default float dtype
PLAIN = "plain"        # maximum, minimum...: NumPy promotion


def binary_dtype(kind: str, x1: Any, x2: Any) -> Any:
    """MXNet 2.0's result dtype of ``x1 <op> x2`` under NumPy semantics (decided at trace time).

    Arrays promote as JAX's lattice (int with float16 gives float16, int8 with uint8 int16).
    A Python scalar (weakly typed) never widens a float array; a Python int keeps an integer
    array's dtype (a bool array's becomes int64 in arithmetic), a Python float turns an integer
    or bool array into float64.
    """
    w1, w2 = _weak(x1), _weak(x2)
    d1, d2 = _dtype(x1), _dtype(x2)
    if w1 and w2:
        out = jnp.result_type(x1, x2)
    elif w1 or w2:
        array, scalar = (d2, d1) if w1 else (d1, d2)
        if jnp.issubdtype(array, jnp.inexact):
            out = array
        elif jnp.issubdtype(scalar, jnp.inexact):
            out = jnp.dtype(jnp.float64) if kind != DIVIDE else array
        else:
            out = jnp.dtype(jnp.int64) if array == jnp.bool_ and kind == ARITH else array
    else:
        out = jnp.promote_types(d1, d2)
    if kind == DIVIDE and not jnp.issubdtype(out, jnp.inexact):
        out = default_float()
    return jnp.dtype(out)


def _dtype(x: Any) -> Any:
    if isinstance(x, bool):
        return jnp.dtype(jnp.bool_)
    if isinstance(x, int):
        return jnp.dtype(jnp.int64)
    if isinstance(x, float):
        return jnp.dtype(jnp.float64)
    if isinstance(x, complex):
        return jnp.dtype(jnp.complex128)
    return jnp.dtype(x.dtype)


def _weak(x: Any) -> bool:
    """Whether ``x`` is weakly typed (a Python int/float scalar, inside a trace or not)."""
    if isinstance(x, (int, float, complex)) and not isinstance(x, bool):
        return True
    aval = getattr(x, "aval", None)
    return bool(getattr(aval, "weak_type", getattr(x, "weak_type", False)))


def resolve_dtype(dtype: Any, fallback: Any = None) -> Any:
    """An explicit dtype, else ``fallback``, else the default float dtype."""
    if dtype is not None:
        return jnp.dtype(dtype)
    return jnp.dtype(fallback) if fallback is not None else default_float()
