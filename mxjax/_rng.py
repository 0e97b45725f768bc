"""The seeded stream of PRNG keys behind every random op (``mx.random.seed``).

MXNet's random ops draw from a stateful generator whose state is one engine
variable, so draws and re-seeds happen in push order.  JAX needs explicit keys:
this module keeps one key, guarded by the engine variable ``RNG_VAR``.  A seed is
an engine write to it; each random op's front-end draws a fresh subkey (a
read-modify-write of the state) in program order, after any pending write, so a
given seed and op sequence always gives the same numbers.  Draws take a lock
instead of a thread hop: the engine var only has work pending around a seed.
"""
from __future__ import annotations

import threading
from typing import Any

import jax
import numpy as onp

from . import _config, engine

__all__ = ["seed", "next_key", "get_state", "set_state"]

_lock = threading.Lock()
_key: Any = None
_split = jax.jit(lambda k: tuple(jax.random.split(k)))  # called in the 64-bit scope: one trace
RNG_VAR = engine.new_variable()


@_config.with_x64
def seed(seed_state: int, device: Any = "all") -> None:
    """Restart the stream from ``seed_state`` (``device`` is accepted for MXNet compatibility)."""
    if not isinstance(seed_state, (int, onp.integer)):
        raise TypeError(f"seed must be an integer, got {type(seed_state).__name__}")
    set_state(jax.random.PRNGKey(int(seed_state) & 0xFFFFFFFFFFFFFFFF))


@_config.with_x64
def next_key() -> jax.Array:
    """A fresh key (a uint32[2] array), advancing the stream."""
    global _key
    if RNG_VAR.pending or RNG_VAR.exception is not None:
        engine.wait_for_variable(RNG_VAR)
    with _lock:
        if _key is None:
            _key = jax.random.PRNGKey(onp.random.SeedSequence().entropy & 0xFFFFFFFF)
        _key, sub = _split(_key)
    return sub


def get_state() -> Any:
    return _key


def set_state(key: Any) -> None:
    """Replace the generator state: an engine write to ``RNG_VAR``, ordered after pending host work on it."""
    def write() -> None:
        global _key
        with _lock:
            _key = key
    engine.push_sync(write, mutate_vars=[RNG_VAR], name="seed")
    engine.wait_for_variable(RNG_VAR)
