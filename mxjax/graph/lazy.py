"""The protocol of a value not computed yet: what an array's ``_var`` holds while it is lazy.

An array whose ``_var`` is a :class:`Lazy` has only its shape and dtype (its ``_data`` is a
``jax.ShapeDtypeStruct``); reading it calls ``compute``.  The value of a recorded graph not run
yet is a :class:`Pending`, whichever graph holds it: an imperative op held back in a bulk
segment (``graph.bulk``) or a node of an autograd region (``_tape.plan``).  The other kinds are
an op under deferred compute and a gradient its backward has not produced yet.  ``pending`` is
always true, so the imperative fast path sends an array with any of them down its slow path,
which computes it first.
"""
from __future__ import annotations

import weakref
from typing import Any

from ..base import MXNetError

__all__ = ["Lazy", "Pending"]


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


class Pending(Lazy):
    """Output ``index`` of a recorded graph not run yet: ``segment`` runs it (a bulk ``Segment``, or
    an autograd region, ``_tape.plan.Plan``: ``index`` is the output's position among the graph's
    outputs, as its wiring refers to it) and sets ``value`` (``error`` if its op failed).  ``owner``
    (and ``sharers``, views made since) are weak references to the arrays holding it: a graph
    computes only the values an array still holds.  ``source``: in a bulk segment, where its op's
    first array input is (a leaf's ref, or the index of a value of the segment), for its device;
    None in a region (whose values are where the values it takes from outside are).  ``aval``: its
    abstract value in a bulk segment (None in a region).  Made without ``__init__`` by the
    recorders (C and Python), which set every slot."""

    __slots__ = ("segment", "index", "aval", "value", "error", "owner", "sharers", "source", "__weakref__")

    @classmethod
    def held_by(cls, array: Any, segment: Any, index: int, aval: Any, source: Any) -> "Pending":
        """A new value not computed yet, made ``array``'s (its ``_var``), as both Python recorders
        make one (the C ones set the same slots)."""
        handle = object.__new__(cls)
        handle.segment, handle.index, handle.aval, handle.source = segment, index, aval, source
        handle.value = handle.error = handle.sharers = None
        handle.owner = weakref.ref(array)
        array._var = handle
        return handle

    def compute(self, array: Any) -> Any:
        segment = self.segment
        while self.value is None and self.error is None:
            segment.run()
            if self.segment is segment:
                break
            segment = self.segment  # handed over to another graph meanwhile (``Segment.hand_over``)
        if self.error is not None:
            raise self.error
        value = self.value
        if value is None:  # a graph computes what an array holds: nothing should get here
            raise MXNetError(f"internal: a value of {type(self.segment).__name__} was not computed by its program")
        return value

    def share(self, array: Any) -> None:
        if self.value is None:
            self.sharers = (self.sharers or ()) + (weakref.ref(array),)

    def held(self) -> bool:
        """Whether an array still holds this value (else it need not be computed)."""
        if self.owner() is not None:
            return True
        return self.sharers is not None and any(ref() is not None for ref in self.sharers)

    def device(self, array: Any) -> Any:
        value = self.value
        if value is not None:
            return next(iter(value.devices()))
        return self.segment.device_of(self)
