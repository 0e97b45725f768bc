"""``mx.sym.npx.image``: the image operators as NumPy-mode symbol functions (``image.resize`` writes ``_npx__image_resize``)."""
from __future__ import annotations

from typing import Any

from ._generated import PrefixedNamespace, prefixed_names

# graphs record MXNet 2's npx spelling (_npx__image_resize), an alias of the _image_* op
_OPS = PrefixedNamespace("_npx__image_", __name__, legacy=False,
                         legacy_ops={name: f"_npx__image_{name}" for name in prefixed_names("_npx__image_")})


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
