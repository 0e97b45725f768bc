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


def _weak(x: Any) -> bool:
    """Whether ``x`` is weakly typed (a Python scalar inside a trace)."""
    aval = getattr(x, "aval", None)
    return bool(getattr(aval, "weak_type", getattr(x, "weak_type", False)))


def resolve_dtype(dtype: Any, fallback: Any = None) -> Any:
    """An explicit dtype, else ``fallback``, else the default float dtype."""
    if dtype is not None:
        return jnp.dtype(dtype)
    return jnp.dtype(fallback) if fallback is not None else default_float()
