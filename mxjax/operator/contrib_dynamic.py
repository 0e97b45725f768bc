"""MXNet's ``dynamic_reshape``: ``Reshape`` with the target shape given as an array.

The output shape depends on the shape array's values, so the op is dynamic-shape
(it runs on concrete arrays; hybridized blocks run it between compiled segments).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetError, MXNetValueError
from ._reshape import legacy_shape
from .nn_util import fail
from .registry import defop, dynamic_shape_error


@defop("_contrib_dynamic_reshape", aliases=("dynamic_reshape",), dynamic_shape=True)
def dynamic_reshape(data, shape):
    """``data`` reshaped to the shape held by the 1-D array ``shape`` with legacy ``Reshape``'s codes
    (0 copy, -1 infer, -2 rest, -3 merge two, -4 split); float entries truncate toward zero.
    Differentiable with respect to ``data``."""
    op = "dynamic_reshape"
    if jnp.ndim(shape) != 1:
        fail(op, f"shape must be a 1-D array, got an array of shape {jnp.shape(shape)}")
    if isinstance(shape, jax.core.Tracer):
        raise dynamic_shape_error("_contrib_dynamic_reshape", "its shape array")
    spec = tuple(int(v) for v in onp.trunc(onp.asarray(shape)).astype(onp.int64))
    try:
        target = legacy_shape(tuple(data.shape), spec)
    except MXNetError as err:
        raise MXNetValueError(f"{op}: {err}") from None
    return jnp.reshape(data, target)
