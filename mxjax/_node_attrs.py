"""The attributes a graph node gets when it is made: the enclosing ``AttrScope``'s, under MXNet's names.

MXNet stores a few well-known attributes under hidden names (``ctx_group`` as
``__ctx_group__``).  The symbol layer and ``mx.npx``'s traced control-flow bodies
both make nodes, so this sits below them.
"""
from __future__ import annotations

from .attribute import current as _attr_scope

__all__ = ["HIDDEN_KEYS", "stored_key", "creation_attrs"]

HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage", "profiler_scope")


def stored_key(key: str) -> str:
    """The name MXNet stores an attribute under (``ctx_group`` -> ``__ctx_group__``)."""
    return f"__{key}__" if key in HIDDEN_KEYS else key


def creation_attrs(attr: dict | None) -> dict[str, str]:
    """The attributes of a node made now: the current ``AttrScope``'s, updated by ``attr``."""
    merged = _attr_scope().get(dict(attr) if attr else None) or {}
    return {stored_key(key): str(value) for key, value in merged.items()}
