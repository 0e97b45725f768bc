"""``mx.sym.image``: the image operators as symbol functions (``image.resize`` writes ``_image_resize``)."""
from __future__ import annotations

from typing import Any

from ._generated import PrefixedNamespace

_OPS = PrefixedNamespace("_image_", __name__)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
