"""``mx.sym`` / ``mx.symbol``: symbolic graphs, MXNet symbol JSON, shape inference and executors.

Every registered op is a symbol function, generated from the registry on first
use (``mx.sym.FullyConnected``, ``mx.sym.broadcast_add``, ``mx.sym.sum`` with 1.x
semantics); ``mx.sym.np`` offers the NumPy-named ops the same way.
"""
from __future__ import annotations

from typing import Any

from .._frontend import make_function
from ..operator import OPS
from ..operator.legacy import legacy_op_name
from . import numpy as np  # noqa: F401
from .executor import Executor
from .from_jax import from_jax
from ._json import fromjson, load, load_json
from .symbol import Group, Symbol, Variable, symbol_function, var

__all__ = ["Symbol", "Executor", "var", "Variable", "Group", "load", "fromjson", "load_json", "np", "from_jax"]

_FUNCTIONS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """``mx.sym.<op>``: the symbolic function of a registered op (1.x names and semantics)."""
    function = _FUNCTIONS.get(name)
    if function is None:
        op = OPS.get(legacy_op_name(name))
        if op is None or name.startswith("__"):
            raise AttributeError(f"module 'mxjax.symbol' has no attribute {name!r}")
        front = make_function(op, name=name, out_cls=Symbol, legacy=True, sequence_input=False,
                              module="mxjax.symbol")
        function = _FUNCTIONS[name] = symbol_function(front, legacy=True)
    return function
