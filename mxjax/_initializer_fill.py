"""Writing initial values into the target NDArray, for ``mx.init``'s initializers.

Every initializer ends in ``_fill`` (broadcast, cast to the target's dtype, write in
place) and the random ones draw through ``_random_into`` / ``_orthogonal`` from the
``mx.random.seed`` stream.  Kept apart from the initializer classes, which only decide
what to fill.
"""
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from . import _config, _rng
from .base import MXNetTypeError, MXNetValueError
from ._ndarray import NDArray, device_copy


# -- writing into the target array ----------------------------------------------------------------
def _target(arr: Any, who: str) -> jax.Array:
    if not isinstance(arr, NDArray):
        raise MXNetTypeError(f"{who}: the array to initialize must be an NDArray, got {type(arr).__name__}")
    return arr.to_jax()


@_config.with_x64  # float64 parameters are filled as float64
def _fill(arr: NDArray, values: Any, who: str) -> None:
    """Write ``values`` (broadcast to ``arr``'s shape, cast to its dtype) into ``arr`` in place."""
    target = _target(arr, who)
    data = device_copy(values.to_jax() if isinstance(values, NDArray) else values, target.dtype)
    if data.shape != target.shape:
        try:
            data = jnp.broadcast_to(data, target.shape)
        except ValueError:
            raise MXNetValueError(f"{who}: values of shape {tuple(data.shape)} cannot fill an array of shape "
                                  f"{tuple(target.shape)}") from None
    sharding = getattr(target, "sharding", None)
    arr._write(jax.device_put(data, sharding) if sharding is not None else data)


def _host_rng(key: jax.Array) -> onp.random.Generator:
    """A NumPy generator seeded from ``key`` (the ``mx.random.seed`` stream): initial values are
    drawn on the host, where a new weight shape costs no compilation (a JAX draw compiled one
    program per shape: 29 of them, 11-13 s, for resnet18_v1's ``initialize()``)."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return onp.random.default_rng([int(v) for v in onp.asarray(key).ravel()])


@functools.partial(jax.jit, static_argnames=("shape", "normal"))
def _orthogonal(key: jax.Array, *, shape: tuple, normal: bool) -> jax.Array:
    # MXNet: SVD of a (nout, nin) random matrix; keep whichever factor has that shape
    f32 = jnp.float32
    tmp = jax.random.normal(key, shape, f32) if normal else jax.random.uniform(key, shape, f32, -1.0, 1.0)
    u, _, v = jnp.linalg.svd(tmp, full_matrices=False)
    return u if u.shape == tmp.shape else v


@_config.with_x64
def _random_into(arr: NDArray, normal: bool, scale: float, who: str) -> None:
    """Fill with N(0, scale²) or U[-scale, scale) samples, drawn in the target's float dtype (float32 for
    an integer target, cast on writing)."""
    dtype = _target(arr, who).dtype
    dtype = dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.dtype("float32")
    rng = _host_rng(_rng.next_key())
    drawn = onp.float64 if dtype == jnp.float64 else onp.float32  # (float16/bfloat16: drawn as float32,
    # cast by _fill)
    if normal:
        values = rng.standard_normal(arr.shape, dtype=drawn) * drawn(scale)
    else:
        values = rng.random(arr.shape, dtype=drawn) * drawn(2 * scale) - drawn(scale)
    _fill(arr, values, who)


def _jsonable(value: Any) -> Any:
    """Array-valued arguments (Constant's value) are written as nested lists."""
    return onp.asarray(value).tolist() if isinstance(value, (NDArray, onp.ndarray, onp.generic)) else value
