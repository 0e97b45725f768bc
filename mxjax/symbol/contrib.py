"""``mx.sym.contrib``: the ``_contrib_*`` ops (``contrib.box_iou`` writes ``_contrib_box_iou``) and the
symbolic control flow ``foreach``, ``while_loop`` and ``cond``."""
from __future__ import annotations

from typing import Any

from ._generated import PrefixedNamespace
from .control_flow import cond, foreach, while_loop  # noqa: F401

_OPS = PrefixedNamespace("_contrib_", __name__)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return sorted([*_OPS.dir(), "cond", "foreach", "while_loop"])
