"""Waiting for a ``jax.Array``'s value on the host: poll it briefly, then block.

XLA:CPU runs a program on a worker thread; a caller blocked in ``block_until_ready`` sleeps, and
waking it costs tens of microseconds on a busy or virtualised machine -- more than a small
program takes (measured: a 20-op program on (100,) arrays read 74 us after its call when
blocking, 19 us when polling ``is_ready``).  So a read first polls for up to ``SPIN_S``, yielding
its core between polls (where threads outnumber cores the worker may need it; the poll keeps its
speed: 19.0 us); a program still running then is a long one, and the next ``BACKOFF`` reads
block at once, so long programs lose at most a sliver of a core to polling.
"""
from __future__ import annotations

import os
import time
from typing import Any

import jax

__all__ = ["wait"]

SPIN_S = 100e-6
BACKOFF = 16
_skip = [0]  # reads left that block without polling (a shared counter: a lost update costs nothing)
_clock = time.perf_counter
_yield = getattr(os, "sched_yield", lambda: None)  # (not on Windows: polls without yielding there)


def wait(data: Any) -> None:
    """Return once ``data`` (a ``jax.Array``, or a pytree of them) is computed; raises its error."""
    block = getattr(data, "block_until_ready", None)  # a jax.Array's own method: the cheap way
    if block is None:
        jax.block_until_ready(data)
        return
    if _skip[0]:
        _skip[0] -= 1
    else:
        is_ready = data.is_ready
        if not is_ready():
            end = _clock() + SPIN_S
            while not is_ready():
                if _clock() > end:
                    _skip[0] = BACKOFF
                    break
                _yield()
    block()
