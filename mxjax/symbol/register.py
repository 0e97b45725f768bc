"""``mx.sym.register``: how op functions get into the ``mx.sym`` namespaces.

MXNet generates one Python function per backend op at import time and sets it on
``mx.sym``, ``mx.sym.contrib``, ``mx.sym._internal``... by the op's name prefix.
mxjax binds the same functions from its op registry on first use (``_generated``),
so an op registered later (``mx.operator.register_op``, ``mx.library.load``) appears
in ``mx.sym`` at once.  ``_make_symbol_function`` is the per-op builder both use.
"""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from ..base import MXNetValueError
from ..operator import OPS, OpDef
from ..operator.legacy import legacy_op_name
from .symbol import Symbol, symbol_function

__all__: list[str] = []


def _make_symbol_function(handle: OpDef | str, name: str, func_name: str) -> Callable[..., Any]:
    """The symbol function of the op ``handle`` (an OpDef or a registered op name), called
    ``func_name`` (1.x semantics, ``name=``/``attr=`` keywords); ``name`` is the op's name."""
    op = handle if isinstance(handle, OpDef) else OPS.get(legacy_op_name(handle))
    if op is None:
        raise MXNetValueError(f"_make_symbol_function: no registered op {handle!r} (for {name!r})")
    front = make_function(op, name=func_name, out_cls=Symbol, legacy=True, sequence_input=False,
                          module="mxjax.symbol")
    function = symbol_function(front, legacy=True)
    function.__module__ = "mxjax.symbol"
    return function
