"""Symbol methods that read the whole graph: ``debug_str``, ``get_inputs``, ``has_dynamic_shape_op``.

Kept out of ``symbol.py`` (which holds the core handle); ``install`` puts them on
``Symbol`` when ``mx.sym`` is imported.
"""
from __future__ import annotations

from typing import Any, Callable

from ..base import encode_attr
from .interpret import CONSTANTS, node_op
from .symbol import Symbol


def debug_str(self: Symbol) -> str:
    """A text listing of the graph in MXNet's layout: the outputs, then each variable and op
    node in topological order with its inputs and attributes (parameters included)."""
    lines = ["Symbol Outputs:"]
    lines += [f"\toutput[{i}]={node.name}({index})" for i, (node, index) in enumerate(self._outputs)]
    for node in self._nodes():
        if node.is_variable:
            lines.append(f"Variable:{node.name}")
            continue
        lines += ["-" * 20, f"Op:{node.op}, Name={node.name}", "Inputs:"]
        for slot, (source, index) in enumerate(node.inputs):
            version = " version=0" if source.is_variable else ""
            lines.append(f"\targ[{slot}]={source.name}({index}){version}")
        attrs = {**node.attrs, **{k: encode_attr(v) for k, v in node.params.items() if k != CONSTANTS}}
        if attrs:
            lines.append("Attrs:")
            lines += [f"\t{key}={attrs[key]}" for key in sorted(attrs)]
    return "\n".join(lines) + "\n"


def get_inputs(self: Symbol) -> Symbol:
    """A group of this graph's input variables (arguments and auxiliary states), in graph order."""
    return Symbol([(node, 0) for node in self._nodes() if node.is_variable])


def has_dynamic_shape_op(self: Symbol) -> bool:
    """Whether some node's output shape depends on input values (``boolean_mask``, ``nonzero``...)."""
    return any(not node.is_variable and node_op(node).dynamic_shape for node in self._nodes())


METHODS: dict[str, Callable[..., Any]] = {
    "debug_str": debug_str, "get_inputs": get_inputs, "has_dynamic_shape_op": has_dynamic_shape_op}


def install() -> None:
    """Put the methods on ``Symbol`` (methods the class defines itself win)."""
    for name, method in METHODS.items():
        if name not in Symbol.__dict__:
            setattr(Symbol, name, method)
