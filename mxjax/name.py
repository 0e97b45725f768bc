"""``mx.name``: automatic names for symbol nodes (``fullyconnected0``, ``_plus1``).

A ``NameManager`` holds one counter per hint; ``with mx.name.NameManager():``
starts fresh counters for a scope (MXNet numbers names per process otherwise),
and ``Prefix(prefix)`` also prepends a prefix to every name it hands out.
"""
from __future__ import annotations

import contextvars
from typing import Any

__all__ = ["NameManager", "Prefix", "current"]

_current: contextvars.ContextVar = contextvars.ContextVar("mxjax_name_manager", default=None)


class NameManager:
    """Numbers automatic names per hint; usable as a context manager."""

    def __init__(self) -> None:
        self._counters: dict[str, int] = {}
        self._tokens: list = []

    def get(self, name: str | None, hint: str) -> str:
        """``name`` if given, else ``<hint><counter>``."""
        if name:
            return name
        count = self._counters.get(hint, 0)
        self._counters[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self) -> "NameManager":
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, *exc: Any) -> None:
        _current.reset(self._tokens.pop())


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every automatic name."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        """``prefix + name``, or ``prefix + <hint><counter>`` (MXNet prefixes explicit names too)."""
        return self._prefix + super().get(name, hint)


_DEFAULT = NameManager()


def current() -> NameManager:
    """The innermost active NameManager (a process-wide one outside any ``with``)."""
    manager = _current.get()
    return manager if manager is not None else _DEFAULT
