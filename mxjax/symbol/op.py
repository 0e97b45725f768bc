"""``mx.sym.op``: every registered op as a symbol function under its 1.x name (``op.FullyConnected``)."""
from __future__ import annotations

from typing import Any

from ._generated import legacy_function

_FUNCTIONS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    return legacy_function(name, __name__, _FUNCTIONS)
