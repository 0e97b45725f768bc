"""Gradient compression for push (MXNet's ``set_gradient_compression``): each pushed array is
quantized after adding the residual its device kept from earlier pushes of the key, and what the
quantization lost becomes the new residual.

* ``'2bit'``: ``+threshold`` where ``residual + grad >= threshold``, ``-threshold`` where it is
  ``<= -threshold``, else 0.
* ``'1bit'``: ``+1`` where ``residual + grad > threshold``, else ``-1``.

MXNet packs the quantized values into 2 (or 1) bits per value to send them; a single process
sends nothing, so only the values (and the residuals) matter here.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ..base import MXNetError

__all__ = ["parse_params", "quantize"]

_DEFAULT_THRESHOLD = 0.5


@jax.jit
def _two_bit(residual: Any, grad: Any, threshold: Any) -> tuple[Any, Any]:
    total = residual + grad
    threshold = threshold.astype(total.dtype)
    zero = jnp.zeros((), total.dtype)
    quantized = jnp.where(total >= threshold, threshold, jnp.where(total <= -threshold, -threshold, zero))
    return quantized, total - quantized


@jax.jit
def _one_bit(residual: Any, grad: Any, threshold: Any) -> tuple[Any, Any]:
    total = residual + grad
    one = jnp.ones((), total.dtype)
    quantized = jnp.where(total > threshold.astype(total.dtype), one, -one)
    return quantized, total - quantized


_QUANTIZE = {"2bit": _two_bit, "1bit": _one_bit}


def parse_params(params: dict) -> tuple[str, float]:
    """``(type, threshold)`` from a ``{'type': ..., 'threshold': ...}`` dict, with MXNet's checks."""
    if "type" not in params:
        raise MXNetError("set_gradient_compression: Required parameter type of string is not presented "
                         "(give {'type': '2bit'} or {'type': '1bit'}, optionally with 'threshold')")
    kind = str(params["type"])
    if kind not in _QUANTIZE:
        raise MXNetError(f"set_gradient_compression: Unknown type for gradient compression {kind} "
                         "(expected '2bit' or '1bit')")
    raw = params.get("threshold", _DEFAULT_THRESHOLD)
    try:
        threshold = float(raw)
    except (TypeError, ValueError):
        raise MXNetError(f"set_gradient_compression: Invalid Parameter format for threshold expect float "
                         f"but value={raw!r}") from None
    if kind == "2bit" and not threshold > 0:
        raise MXNetError(f"set_gradient_compression: threshold must be greater than 0 for two bit "
                         f"compression, got {threshold}")
    return kind, threshold


def quantize(kind: str, threshold: float, residual: Any, grad: Any) -> tuple[Any, Any]:
    """``(quantized grad, new residual)``; ``residual`` is None before the first push."""
    if residual is None:
        residual = jnp.zeros_like(grad)
    return _QUANTIZE[kind](residual, grad, jnp.asarray(threshold, jnp.float32))
