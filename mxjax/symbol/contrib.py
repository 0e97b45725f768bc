"""``mx.sym.contrib``: the ``_contrib_*`` ops (``contrib.box_iou`` writes ``_contrib_box_iou``)."""
from __future__ import annotations

from typing import Any

from ._generated import PrefixedNamespace

_OPS = PrefixedNamespace("_contrib_", __name__)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
