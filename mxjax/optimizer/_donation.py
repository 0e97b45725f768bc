"""Which weight buffers an update may donate: none that another live thread may still read.

The fused update donates the old weight buffers to XLA.  A thread running inference on the
same parameters reads those buffers without any lock; if one is donated between its read and
its dispatch, XLA fails with "Buffer has been deleted or donated".  So parameters note each
thread that reads them (``note_reader``, on a thread's first read), and an update donates only
when no live thread other than the updating one has read its weights.  The first-read
registration and the check + donating dispatch + buffer swap (``LOCK``) exclude each other: a
thread starting to read during an update waits for it and then reads the new buffers.
A single training thread (with a DataLoader's threads, which read no parameters) still donates.
"""
from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Iterable

__all__ = ["LOCK", "note_reader", "readers", "shared"]

LOCK = threading.RLock()
readers: dict[int, list[threading.Thread]] = {}  # id(weight NDArray) -> the threads that read it
_refs: dict[int, weakref.ref] = {}  # id -> the array (weakly): its entry goes when it does
_threads: list[threading.Thread] = []  # every thread that read any parameter (pruned when dead)


def _forget(key: int, ref: weakref.ref) -> None:
    """An array read by parameters' readers was freed: drop its entry (its id may be reused)."""
    if _refs.get(key) is ref:
        del _refs[key]
        readers.pop(key, None)


def note_reader(array: Any) -> None:
    """Record that the current thread reads ``array`` (a parameter's NDArray); call under ``LOCK``."""
    me = threading.current_thread()
    key = id(array)
    found = readers.get(key)
    if found is None:
        found = readers[key] = []
        _refs[key] = weakref.ref(array, functools.partial(_forget, key))
    if me not in found:
        found.append(me)
    if me not in _threads:
        _threads.append(me)


def _others_alive() -> bool:
    """Whether a live thread other than this one has read a parameter (drops ended threads)."""
    me = threading.current_thread()
    alive = [t for t in _threads if t.is_alive()]
    if len(alive) != len(_threads):
        _threads[:] = alive
        for key, threads in list(readers.items()):
            threads[:] = [t for t in threads if t.is_alive()]
            if not threads:
                del readers[key]
                _refs.pop(key, None)
    return any(t is not me for t in alive)


def shared(weights: Iterable[Any]) -> bool:
    """Whether a live thread other than the current one has read one of ``weights``: then their
    buffers must not be donated.  (Call under ``LOCK`` to act on the answer.)"""
    with LOCK:
        if not _others_alive():  # the usual case: one training thread
            return False
        me = threading.current_thread()
        for w in weights:
            for t in readers.get(id(w), ()):
                if t is not me and t.is_alive():
                    return True
        return False
