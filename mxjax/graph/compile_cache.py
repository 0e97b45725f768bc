"""The process-wide bound on compiled programs: one least-recently-used list over every owner's programs.

Each compiled XLA program holds host memory (about 3 MB for a small program on
XLA:CPU, whatever its size), so a service that sees many input shapes -- an
imperative op per batch size, a hybridized block per signature -- would grow
without bound.  Owners keep what they compiled in a ``Programs`` dict (one per
op and parameters, one per hybridized block) and report it here as units: a
hybridized block's unit is one signature's program; an op's unit is its
``jax.jit`` function with every signature it compiled (so the imperative hot
path stays one dictionary read and a C++ dispatch).  When the executables
counted pass the entry limit, or their bytes the byte limit, the least recently
used units are dropped from their owners, and a later call compiles again.

A program's bytes are what it holds that grows with it: its serialized
executable (code and embedded constants).  XLA's fixed per-program overhead is
bounded by the entry limit.  Limits come from ``MXNET_COMPILE_CACHE_SIZE``
(executables, default 1024) and ``MXNET_COMPILE_CACHE_BYTES`` (default 1 GiB),
or ``set_limits`` at run time; 0 means no limit.
"""
from __future__ import annotations

import copy
import itertools
import os
import threading
import weakref
from collections import OrderedDict
from typing import Any

from ..base import MXNetValueError

__all__ = ["Programs", "lookup", "store", "set_limits", "stats", "executable_bytes"]

_DEFAULT_ENTRIES = 1024
_DEFAULT_BYTES = 1 << 30


def _env_limit(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = int(float(text))
    except ValueError:
        raise MXNetValueError(f"{name}={text!r}: expected a non-negative integer (0: no limit)") from None
    if value < 0:
        raise MXNetValueError(f"{name}={text!r}: expected a non-negative integer (0: no limit)")
    return value


class Programs(dict):
    """One owner's compiled programs: signature -> ``(program, serial)``, read through ``lookup``; the
    cache may drop any of them (LRU)."""

    __slots__ = ("__weakref__", "token", "kind")

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.token = object()  # names the owner in the cache's list (never reused, unlike an id)
        weakref.finalize(self, _forget, self.token)

    def program(self, signature: Any) -> Any:
        """The program kept for ``signature``, or None (not counted as a use)."""
        found = self.get(signature)
        return None if found is None else found[0]

    def programs(self) -> list:
        """``(signature, program)`` pairs, oldest stored first."""
        return [(signature, found[0]) for signature, found in list(self.items())]


_lock = threading.RLock()
# serial (one per stored unit: an int hashes fastest on the hot path) -> [owner token, weakref to the
# owner, key, bytes, executables]; least recently used first
_order: "OrderedDict[int, list]" = OrderedDict()
_serials = itertools.count()
_limits = {"entries": _env_limit("MXNET_COMPILE_CACHE_SIZE", _DEFAULT_ENTRIES),
           "bytes": _env_limit("MXNET_COMPILE_CACHE_BYTES", _DEFAULT_BYTES)}
_counts = {"misses": 0, "evictions": 0, "bytes": 0, "entries": 0}
hits = itertools.count()  # ``next(hits)``: a hit, counted at C speed (the imperative hot path's share)
mark_used = _order.move_to_end  # ``mark_used(serial)`` on a hit; KeyError if dropped meanwhile


def lookup(owner: Programs, key: Any) -> Any:
    """``owner``'s program for ``key`` (marked as just used), or None (a miss: compile and ``store``)."""
    found = owner.get(key)
    if found is None:
        return None
    next(hits)
    try:
        mark_used(found[1])
    except KeyError:  # dropped by another thread just now: still usable for this call
        pass
    return found[0]


def store(owner: Programs, key: Any, program: Any, nbytes: int = 0, executables: int = 1) -> Any:
    """Keep ``program`` in ``owner`` under ``key`` (replacing one stored there), counting ``executables``
    compiled and their ``nbytes``, and drop least recently used units past the limits; returns ``program``."""
    with _lock:
        previous = owner.get(key)
        if previous is not None:
            _uncount(_order.pop(previous[1], None))
        serial = next(_serials)
        owner[key] = (program, serial)
        _order[serial] = [owner.token, weakref.ref(owner), key, int(nbytes), int(executables)]
        _counts["bytes"] += int(nbytes)
        _counts["entries"] += int(executables)
        _counts["misses"] += int(executables)
        _evict(keep=serial)
    return program


def grow(owner: Programs, key: Any, nbytes: int, executables: int = 1) -> None:
    """The unit under ``key`` compiled ``executables`` more (of ``nbytes``): count them, mark it used and
    drop least recently used units past the limits (this one too, if it alone passes them)."""
    with _lock:
        found = owner.get(key)
        unit = None if found is None else _order.get(found[1])
        if unit is None:
            return
        unit[3] += int(nbytes)
        unit[4] += int(executables)
        _counts["bytes"] += int(nbytes)
        _counts["entries"] += int(executables)
        _counts["misses"] += int(executables)
        _order.move_to_end(found[1])
        _evict(keep=found[1])


def _uncount(unit: list | None) -> None:
    if unit is not None:
        _counts["bytes"] -= unit[3]
        _counts["entries"] -= unit[4]


def _over() -> bool:
    entries, nbytes = _limits["entries"], _limits["bytes"]
    return bool((entries and _counts["entries"] > entries) or (nbytes and _counts["bytes"] > nbytes))


def _evict(keep: int | None = None) -> None:
    """Drop least recently used units until within the limits.  ``keep`` (the unit just stored or grown)
    goes last, and not at all if it holds one executable: a program larger than the byte limit still runs."""
    while _order and _over():
        serial = next(iter(_order))
        if serial == keep and len(_order) > 1:
            _order.move_to_end(serial)
            continue
        if serial == keep and _order[serial][4] <= 1:
            break
        _, ref, key, _, _ = unit = _order.pop(serial)
        _uncount(unit)
        _counts["evictions"] += 1
        owner = ref()
        if owner is not None:
            owner.pop(key, None)


def _forget(token: object) -> None:
    """An owner is gone (its programs with it): drop its units from the count."""
    with _lock:
        for serial in [k for k, unit in _order.items() if unit[0] is token]:
            _uncount(_order.pop(serial))


def drop(owner: Programs) -> None:
    """Drop all of ``owner``'s programs (what they compute has changed)."""
    with _lock:
        for _, serial in list(owner.values()):
            _uncount(_order.pop(serial, None))
        owner.clear()


def set_limits(max_entries: int | None = None, max_bytes: int | None = None) -> dict:
    """Change the limits (None keeps one; 0: no limit); programs past the new ones are dropped now.
    Returns the previous limits as ``{'max_entries': ..., 'max_bytes': ...}``."""
    for name, value in (("max_entries", max_entries), ("max_bytes", max_bytes)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise MXNetValueError(f"set_compile_cache: {name} must be a non-negative integer (0: no limit), "
                                  f"got {value!r}")
    with _lock:
        previous = {"max_entries": _limits["entries"], "max_bytes": _limits["bytes"]}
        if max_entries is not None:
            _limits["entries"] = max_entries
        if max_bytes is not None:
            _limits["bytes"] = max_bytes
        _evict()
    return previous


def stats() -> dict:
    """Hits, misses and evictions since start, and the programs and bytes kept now, with the limits."""
    with _lock:
        kinds: dict[str, int] = {}
        for _, ref, _, _, executables in _order.values():
            owner = ref()
            if owner is not None:
                kinds[owner.kind] = kinds.get(owner.kind, 0) + executables
        return {"hits": _hit_count(), "misses": _counts["misses"], "evictions": _counts["evictions"],
                "entries": _counts["entries"], "bytes": _counts["bytes"], "by_kind": kinds,
                "max_entries": _limits["entries"], "max_bytes": _limits["bytes"]}


def _hit_count() -> int:
    """The hits so far, read from a copy of the counter (reading the counter itself would count one)."""
    return next(copy.copy(hits))


def executable_bytes(jitted: Any, *args: Any) -> int:
    """The serialized size of the executable ``jitted`` compiled for ``args`` (already compiled: no new
    compilation); 0 where the backend cannot say."""
    try:
        executable = jitted.lower(*args).compile().runtime_executable()
        return len(executable.client.serialize_executable(executable))
    except Exception:  # a backend without serialization: the entry limit still bounds it
        return 0
