"""Bulk execution's policy: the settings ``MXNET_EXEC_BULK_EXEC_*`` give (changed by
``engine.set_imperative_bulk``) and :class:`Sightings`, which says when a structure seen
op by op often enough compiles into one program.  Apart from ``bulk.py`` because autograd's
regions of imperative ops follow the same policy.
"""
from __future__ import annotations

import os
from typing import Any

from ..base import MXNetValueError

__all__ = ["Sightings"]


def _env_int(name: str, default: int, minimum: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise MXNetValueError(f"{name}={text!r}: expected an integer >= {minimum}")
    return value


_settings = {
    "enabled": bool(_env_int("MXNET_EXEC_BULK_EXEC_IMPERATIVE", 1, 0)),
    "max_nodes": _env_int("MXNET_EXEC_BULK_EXEC_MAX_NODE_IMPERATIVE", 64, 1),
    "compile_after": _env_int("MXNET_EXEC_BULK_EXEC_COMPILE_AFTER", 2, 1),
}


class Sightings:
    """How often each structure has run op by op: it compiles into one program once it is seen the
    ``compile_after``-th time (``MXNET_EXEC_BULK_EXEC_COMPILE_AFTER``).  Used by bulk segments and
    by autograd's regions of imperative ops."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: dict = {}

    def ready(self, key: Any) -> bool:
        """Whether this sighting of ``key`` should compile (it is not counted: see :meth:`note`)."""
        return self.counts.get(key, 0) + 1 >= _settings["compile_after"]

    def op_by_op(self, key: Any) -> bool:
        """Whether this sighting of ``key`` still runs op by op (then it is noted); False: compile it."""
        if self.ready(key):
            return False
        self.note(key)
        return True

    def note(self, key: Any) -> None:
        """``key`` ran op by op once more."""
        counts = self.counts
        if len(counts) > 4096:
            counts.clear()
        counts[key] = counts.get(key, 0) + 1

    def clear(self) -> None:
        self.counts.clear()
