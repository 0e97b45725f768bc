"""Values derived from an array -- a weight relaid or packed for a convolution -- kept while
the array lives: :func:`derived`.

A jax array never changes, so a copy derived from it stays right for as long as it lives; a
parameter's new value (``set_data``, a ``Trainer`` step) is a new array, derived anew.  An
entry goes when its array does (a weak reference), so a later array that reuses the id never
finds a stale copy, and no copy outlives its source.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Hashable

__all__ = ["derived"]

_kept: dict = {}  # (id(source), key) -> (weak reference to the source, derived value)


def derived(source: Any, key: Hashable, make: Callable[[Any], Any]) -> Any:
    """``make(source)``, computed once per live ``source`` and ``key``."""
    entry = (id(source), key)
    kept = _kept.get(entry)
    if kept is None or kept[0]() is not source:
        def forget(ref: weakref.ref, entry: tuple = entry) -> None:
            if _kept.get(entry, (None,))[0] is ref:
                del _kept[entry]
        kept = _kept[entry] = (weakref.ref(source, forget), make(source))
    return kept[1]
