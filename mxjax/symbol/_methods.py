"""Symbol methods beyond the core handle: whole-graph views (``debug_str``, ``get_inputs``,
``has_dynamic_shape_op``), backend rewriting (``get_backend_symbol``), the array-kind
conversions and the raw ``handle``.

Kept out of ``symbol.py`` (which holds the core handle); ``install`` puts them on
``Symbol`` when ``mx.sym`` is imported.
"""
from __future__ import annotations

from typing import Any, Callable

from ..base import MXNetError, encode_attr
from ..subgraph import get_backend, partition
from ._split import split_v2_method
from ..graph.interpret import CONSTANTS, node_op
from .symbol import Symbol, _Symbol


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


def get_backend_symbol(self: Symbol, backend: str) -> Symbol:
    """A copy with the subgraph properties registered as ``backend`` applied (``mx.subgraph``);
    MXNetError when no such backend is registered."""
    outputs = self.__deepcopy__({})._outputs
    for prop in get_backend(backend):
        outputs = partition(outputs, prop())
    return type(self)(outputs)


def gradient(self: Symbol, wrt: list[str]) -> Symbol:
    """MXNet leaves symbolic gradients unimplemented and raises; so does mxjax (use ``bind`` and
    ``Executor.backward``, or ``autograd``)."""
    raise MXNetError(f"Symbol.gradient (with respect to {list(wrt)}) is not implemented, as in MXNet; "
                     "bind the symbol and call Executor.backward, or use mx.autograd")


def as_np_ndarray(self: Symbol) -> Symbol:
    """The same graph as a symbol of NumPy semantics (``symbol._Symbol``): a new handle on the same
    outputs, whose operators build NumPy ops and whose executors give ``mx.np`` arrays."""
    return _Symbol(list(self._outputs))


def as_nd_ndarray(self: Symbol) -> Symbol:
    """The same graph as a legacy symbol; a new handle on the same outputs (see ``as_np_ndarray``)."""
    return Symbol(list(self._outputs))


def _handle(self: Symbol) -> list:
    """The symbol's output entries ``(node, index)``: ``Symbol(s.handle)`` is a new handle on them."""
    return list(self._outputs)


METHODS: dict[str, Callable[..., Any]] = {
    "debug_str": debug_str, "get_inputs": get_inputs, "has_dynamic_shape_op": has_dynamic_shape_op,
    "get_backend_symbol": get_backend_symbol, "gradient": gradient, "as_np_ndarray": as_np_ndarray,
    "as_nd_ndarray": as_nd_ndarray, "handle": property(_handle), "split_v2": split_v2_method}


def install() -> None:
    """Put the methods on ``Symbol`` (methods the class defines itself win)."""
    for name, method in METHODS.items():
        if name not in Symbol.__dict__:
            setattr(Symbol, name, method)
