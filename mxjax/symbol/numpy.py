"""``mx.sym.np``: NumPy-named symbol functions (NumPy semantics), generated from the registry."""
from __future__ import annotations

from typing import Any

from .._frontend import make_function
from ..operator import OPS
from .symbol import Symbol, symbol_function

_FUNCTIONS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    function = _FUNCTIONS.get(name)
    if function is None:
        op = OPS.get(name)
        if op is None or name.startswith("__"):
            raise AttributeError(f"module 'mxjax.symbol.numpy' has no attribute {name!r}")
        front = make_function(op, name=name, out_cls=Symbol, module="mxjax.symbol.numpy")
        function = _FUNCTIONS[name] = symbol_function(front, legacy=False)
    return function
