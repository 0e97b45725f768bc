"""``mx.sym.npx``: MXNet 2's NumPy-extension ops as symbol functions (``npx.relu`` writes ``_npx_relu``).

Names are the ``_npx_*`` ops of the registry plus every ``mx.npx`` operator bound
straight to one op, which lends its exact signature (``npx.activation(data, act_type)``);
npx spells some inputs as ``x``/``a``/``b`` where the op says ``data``/``lhs``/``rhs``.
Python scalars follow NumPy semantics, as in MXNet 2.
"""
from __future__ import annotations

from typing import Any

from .. import numpy_extension as _npx
from ._generated import PrefixedNamespace

# the mx.npx functions that are one op bound by make_function (hand-written ones read run-time
# state such as the training flag and are bound afresh from their op instead)
_FRONTS = {name: getattr(_npx, name) for name in _npx.__all__
           if hasattr(getattr(_npx, name), "op") and hasattr(getattr(_npx, name), "positional")}
_OPS = PrefixedNamespace("_npx_", __name__, keywords={"x": "data", "a": "lhs", "b": "rhs"}, fronts=_FRONTS,
                         legacy=False)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
