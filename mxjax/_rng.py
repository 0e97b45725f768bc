"""The seeded stream of PRNG keys behind every random op (``mx.random.seed``).

MXNet's random ops draw from a stateful generator; JAX needs explicit keys.  This
module keeps one key and splits a fresh subkey per random op, under a lock, so a
given seed and op sequence always gives the same numbers.
"""
from __future__ import annotations

import threading
from typing import Any

import jax
import numpy as onp

__all__ = ["seed", "next_key", "get_state", "set_state"]

_lock = threading.Lock()
_key: Any = None
_split = jax.jit(lambda k: tuple(jax.random.split(k)))


def seed(seed_state: int, device: Any = "all") -> None:
    """Restart the stream from ``seed_state`` (``device`` is accepted for MXNet compatibility)."""
    global _key
    if not isinstance(seed_state, (int, onp.integer)):
        raise TypeError(f"seed must be an integer, got {type(seed_state).__name__}")
    with _lock:
        _key = jax.random.PRNGKey(int(seed_state) & 0xFFFFFFFFFFFFFFFF)


def next_key() -> jax.Array:
    """A fresh key (a uint32[2] array), advancing the stream."""
    global _key
    with _lock:
        if _key is None:
            _key = jax.random.PRNGKey(onp.random.SeedSequence().entropy & 0xFFFFFFFF)
        _key, sub = _split(_key)
    return sub


def get_state() -> Any:
    return _key


def set_state(key: Any) -> None:
    global _key
    with _lock:
        _key = key
