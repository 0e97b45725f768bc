"""``mx.attribute``: ``AttrScope``, string attributes attached to every Symbol created in a scope.

``with mx.AttrScope(ctx_group='dev1', lr_mult='0.1'):`` makes symbol creation merge these
attributes into the node's own (the node's explicit ``attr=`` wins); nested scopes add to the
outer one.  The scope is a context variable, so threads and async tasks do not share it.
"""
from __future__ import annotations

import contextvars
from collections import defaultdict
from typing import Any

from .base import string_types

__all__ = ["AttrScope", "current", "string_types"]


class AttrScope:
    """Attributes (strings) to set on every symbol created inside ``with AttrScope(**kwargs):``."""

    _subgraph_names: defaultdict = defaultdict(int)

    def __init__(self, **kwargs: str) -> None:
        for value in kwargs.values():
            if not isinstance(value, string_types):
                raise ValueError("Attributes need to be string")
        self._attr = kwargs
        self._old_scope: AttrScope | None = None

    def get(self, attr: dict | None) -> dict:
        """The scope's attributes updated with ``attr`` (the symbol's own), as a new dict."""
        if not self._attr:
            return dict(attr) if attr else {}
        merged = self._attr.copy()
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self) -> "AttrScope":
        outer = _current.get()
        merged = outer._attr.copy()
        merged.update(self._attr)
        self._attr = merged
        self._old_scope = outer
        _current.set(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._old_scope is not None
        _current.set(self._old_scope)


_current: contextvars.ContextVar = contextvars.ContextVar("mxjax_attr_scope", default=AttrScope())


def current() -> AttrScope:
    """The innermost active AttrScope (an empty one outside any ``with``)."""
    return _current.get()
