"""The protocol of a value not computed yet: what an array's ``_var`` holds while it is lazy.

An array whose ``_var`` is a :class:`Lazy` has only its shape and dtype (its ``_data`` is a
``jax.ShapeDtypeStruct``); reading it calls ``compute``.  The kinds are: an imperative op
held back in a bulk segment (``graph.bulk``), an op under deferred compute, a node of an
autograd region deferred until its region runs, and a gradient its backward has not
produced yet.  ``pending`` is always true, so the imperative fast path sends an array
with any of them down its slow path, which computes it first.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Lazy"]


class Lazy:
    """The ``_var`` of an array whose value is not computed yet.  ``compute(array)`` returns it."""

    __slots__ = ()
    pending = 1
    exception = None

    def compute(self, array: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must say how its value is computed")

    def device(self, array: Any) -> Any:
        """The JAX device the value will be computed on, without computing it; None if unknown
        (the array then reports the current device)."""
        return None

    def share(self, array: Any) -> None:
        """``array`` now holds this same lazy value too (a view as another array class).  Kinds
        that compute only the values someone still holds are told here; the others need not."""
