"""Tracing the user functions of ``npx.foreach`` / ``npx.while_loop`` / ``npx.cond`` into sub-graphs.

In graph mode (deferred compute) each function is recorded on placeholder arrays and
the nodes its outputs need are cut out into a :class:`Subgraph`, outside arrays becoming
free variables or baked-in constants; under ``jax.jit`` the function is wrapped to run
on tracers.  Separate from the public functions, which only call :class:`_Tracer`.
"""
from __future__ import annotations

from typing import Any, Callable

import jax

from .. import _config
from .._deferred_compute import context as _dc_context, set_variable
from ..graph.body import CONSTANT, encode_constant, graph_body
from ..graph.ir import Entry, Node, symbol_class, topo_order
from .._node_attrs import creation_attrs
from ..base import MXNetError
from .._ndarray import NDArray
from .._invoke import current_handler, invoke, reset_handler, set_handler, wrap_outputs
from ..graph.lazy import Lazy
from ..operator import OpDef, get_op
from ..operator.control_flow import SUBGRAPHS, Subgraph
from ..operator.naming import json_name
from ._control_flow_structure import _GRAPH, _JAX, _aval


# ----------------------------------------------------------------------------- tracing

def _variable(name: str) -> Any:
    """A variable Symbol named ``name`` with the enclosing ``AttrScope``'s attributes, as ``mx.sym.var``
    makes it; the class is the one the symbol layer registered with the IR (it sits above npx)."""
    return symbol_class()([(Node("null", name, attrs=creation_attrs(None)), 0)])


class _NoValue(Lazy):
    """The ``_var`` of a placeholder: a sub-graph input, which has no value to read."""

    def __init__(self, op: str) -> None:
        self.op = op

    def compute(self, array: NDArray) -> Any:
        raise MXNetError(f"{self.op}: the values of the loop's arrays cannot be read (asnumpy, item, bool, "
                         "print) while it is traced into a hybridized graph")


class _Spy:
    """Wraps the recorder of a sub-graph trace: notes the nodes recorded and the arrays ops read."""

    def __init__(self, recorder: Any, op: str) -> None:
        self.recorder, self.op = recorder, op
        self.created: list[Node] = []     # in creation order, which is topological
        self.created_ids: set[int] = set()
        self.arrays: dict[tuple, NDArray] = {}  # (id(node), index) -> an array with that entry

    def invoke(self, op: OpDef, inputs: Any, params: dict | None, out_cls: type | None) -> Any:
        if op.dynamic_shape:
            raise MXNetError(f"{self.op}: {op.name} has an output shape that depends on values, so it cannot "
                             f"run inside a {self.op} of a hybridized block; run it outside the loop")
        if op.needs_key:
            raise MXNetError(f"{self.op}: the random operator {op.name} cannot run inside a {self.op} of a "
                             "hybridized block; draw the random numbers outside and pass them in")
        results = self.recorder.invoke(op, inputs, params, out_cls)
        for x in inputs:
            if isinstance(x, NDArray) and x._dc is not None:
                self.arrays[(id(x._dc.node), x._dc.index)] = x
        node = (results[0] if isinstance(results, tuple) else results)._dc.node
        if id(node) not in self.created_ids:
            self.created_ids.add(id(node))
            self.created.append(node)
        return results

    def on_write(self, array: NDArray) -> None:
        self.recorder.on_write(array)


class _Tracer:
    """Turns the user functions of one control-flow call into :class:`Subgraph` parameters.

    ``trace(fn, avals, names)`` calls ``fn(placeholders) -> (flat arrays, info)``;
    the Subgraph's ``inputs`` name its arguments.  In graph mode, outside arrays the
    functions read are collected in ``free`` (shared by all functions of the call,
    named ``free_names``) and plain arrays become constants of the sub-graph; the
    node's inputs are the call's own arrays, then ``free``.
    """

    def __init__(self, op: str, mode: str, cls: type) -> None:
        self.op, self.mode, self.cls = op, mode, cls
        self.free: list[NDArray] = []
        self.free_names: list[str] = []
        self._free_index: dict[tuple, str] = {}
        self._consts: dict[int, tuple] = {}  # id(array) -> (name, value, encoded value)
        self._taken: set[str] = set()        # names in the call's sub-graphs: placeholders, free, constants

    def reserve(self, names: list[str]) -> None:
        self._taken.update(names)

    def trace(self, fn: Callable, avals: list, names: list[str], label: str,
              anchor: bool = False) -> tuple[Subgraph, list, Any]:
        """``(Subgraph, output avals, info)``; ``anchor`` keeps every placeholder an input of the
        sub-graph even when the function ignores it (MXNet wants each loop state among the inputs)."""
        self.reserve(names)
        if self.mode == _GRAPH:
            return self._trace_graph(fn, avals, names, label, anchor)
        return self._trace_jax(fn, avals, names, label)

    def identity(self, name: str) -> Subgraph:
        """A sub-graph returning its one input (cond's pred, computed outside the node)."""
        if self.mode != _GRAPH:
            return Subgraph(lambda x: (x,), 1, name, (name,))
        node = Node(json_name(get_op("copy")), f"{name}_output", inputs=[(Node("null", name), 0)])
        return graph_body([(node, 0)], name)

    def run(self, op: OpDef, inputs: list, params: dict) -> list:
        """The op on the inputs and the free variables: a recorded node, or (JAX mode) traced inline."""
        inputs = [*inputs, *self.free]
        graphs = params[SUBGRAPHS]
        params = {"num_args": len(graphs) + len(inputs), **params}
        if self.mode == _GRAPH:
            out = invoke(op, inputs, params, self.cls)
            first = out[0] if isinstance(out, tuple) else out
            first._dc.node.subgraphs = [g.graph for g in graphs]  # written to symbol JSON as MXNet does
        else:
            out = wrap_outputs(op.compute(*(x.to_jax() for x in inputs), **params), self.cls)
        return list(out) if isinstance(out, tuple) else [out]

    # -- JAX tracers: the user function runs on wrapped tracers --------------------------------
    def _trace_jax(self, fn: Callable, avals: list, names: list[str], label: str) -> tuple[Subgraph, list, Any]:
        info: list = []

        def pure(*arrays: Any) -> tuple:
            token = set_handler(None)  # plain execution on tracers: no autograd, no recording
            try:
                flat, extra = fn([self.cls._wrap(a) for a in arrays])
            finally:
                reset_handler(token)
            info[:] = [extra]
            return tuple(x.to_jax() for x in flat)

        out = jax.eval_shape(pure, *avals)
        return Subgraph(pure, len(out), label, tuple(names)), list(out), info[0]

    # -- deferred compute: record a sub-graph and cut it out -------------------------------------
    def _trace_graph(self, fn: Callable, avals: list, names: list[str], label: str,
                     anchor: bool) -> tuple[Subgraph, list, Any]:
        holders = [self.cls._wrap(aval) for aval in avals]
        with _dc_context():
            for holder in holders:
                holder._var = _NoValue(self.op)  # reading it (or what is computed from it) says why it fails
            set_variable(holders, [_variable(name) for name in names])
            spy = _Spy(current_handler(), self.op)
            token = set_handler(spy)
            try:
                flat, extra = fn(holders)
            finally:
                reset_handler(token)
        consts: dict[str, Any] = {}
        outputs = _Cut(self, spy, [h._dc.node for h in holders], consts).outputs(flat, label, anchor)
        body = graph_body(outputs, label, _config.is_training(), consts)
        return body, [_aval(x) for x in flat], extra

    def free_name(self, node: Node, index: int, array: NDArray) -> str:
        """The sub-graph variable for an outside graph entry: the outer variable's name where free."""
        key = (id(node), index)
        name = self._free_index.get(key)
        if name is None:
            name = self._free_index[key] = self._fresh(node.name if node.is_variable else None, f"{self.op}_free")
            self.free.append(array)
            self.free_names.append(name)
        return name

    def const(self, array: NDArray) -> tuple:
        """``(name, value, encoded value)`` of a plain array the functions read (baked into the sub-graph)."""
        found = self._consts.get(id(array))
        if found is None:
            value = array.to_jax()
            found = self._consts[id(array)] = (self._fresh(None, f"{self.op}_const"), value, encode_constant(value))
        return found

    def _fresh(self, preferred: str | None, base: str) -> str:
        """``preferred`` if no sub-graph of the call uses it yet, else the first free ``<base><k>``."""
        name, k = preferred, 0
        while name is None or name in self._taken:
            name, k = f"{base}{k}", k + 1
        self._taken.add(name)
        return name


class _Cut:
    """Copies the nodes one trace recorded that its outputs need; outside entries become variables."""

    def __init__(self, tracer: _Tracer, spy: _Spy, holders: list[Node], consts: dict) -> None:
        self.tracer, self.spy, self.consts = tracer, spy, consts
        self.holders = holders
        self.holder_ids = {id(h) for h in holders}
        self.copies: dict[int, Node] = {}
        self.variables: dict[str, Node] = {}  # one variable node per name in this sub-graph

    def outputs(self, flat: list, label: str, anchor: bool) -> list[Entry]:
        spy = self.spy
        needed: set[int] = set()
        stack = [x._dc.node for x in flat if x._dc is not None]
        while stack:
            node = stack.pop()
            if id(node) in spy.created_ids and id(node) not in needed:
                needed.add(id(node))
                stack.extend(n for n, _ in node.inputs)
        for node in spy.created:
            if id(node) in needed:
                copy = Node(node.op, node.name, node.params, node.attrs, num_outputs=node.num_outputs)
                copy.subgraphs = node.subgraphs  # a loop inside the loop keeps its bodies
                copy.inputs = [self._entry(n, i, spy.arrays.get((id(n), i))) for n, i in node.inputs]
                self.copies[id(node)] = copy
        outputs = [self._entry(x._dc.node, x._dc.index, x) if x._dc is not None else self._const(x) for x in flat]
        outputs = self._distinct(outputs, label)
        if anchor and outputs:
            used = {id(n) for n in topo_order(outputs)}
            outputs[0][0].control_deps.extend(h for h in self.holders if id(h) not in used)
        return outputs

    @staticmethod
    def _distinct(outputs: list[Entry], label: str) -> list[Entry]:
        """Outputs that are variables or repeat an earlier output go through an identity node, as
        MXNet's sub-graphs do (an input cannot be an output there)."""
        copy_op, seen, result = json_name(get_op("copy")), set(), []
        for k, (node, index) in enumerate(outputs):
            if node.is_variable or (id(node), index) in seen:
                node, index = Node(copy_op, f"{label}_output{k}", inputs=[(node, index)]), 0
            seen.add((id(node), index))
            result.append((node, index))
        return result

    def _entry(self, node: Node, index: int, array: NDArray | None) -> Entry:
        if id(node) in self.holder_ids:
            return (node, index)
        if id(node) in self.copies:
            return (self.copies[id(node)], index)
        if array is None:  # every input of a recorded op passed the spy
            raise MXNetError(f"{self.tracer.op}: internal error: no array for graph entry {node.name}[{index}]")
        if node.attrs.get("__dc_unbound__"):  # a plain array, not a graph input: its value is baked in
            return self._const(array)
        return (self._variable(self.tracer.free_name(node, index, array)), 0)

    def _const(self, array: NDArray) -> Entry:
        name, value, encoded = self.tracer.const(array)
        self.consts[name] = value
        return (self._variable(name, {CONSTANT: encoded}), 0)

    def _variable(self, name: str, attrs: dict | None = None) -> Node:
        if name not in self.variables:
            self.variables[name] = Node("null", name, attrs=attrs)
        return self.variables[name]


def _locs_in(graph: Subgraph, names: list[str]) -> tuple:
    """Which input of the sub-graph each named node input feeds (-1: the sub-graph does not read it)."""
    position = {name: i for i, name in enumerate(graph.inputs)}
    return tuple(position.get(name, -1) for name in names)


def _locs_of(graph: Subgraph, names: list[str]) -> tuple:
    """For each input of the sub-graph, the node input (named in ``names``) that feeds it."""
    position = {name: i for i, name in enumerate(names)}
    return tuple(position[name] for name in graph.inputs)


def _shapes_of(op: str, cls: type, fn: Callable, avals: list) -> tuple[list, Any]:
    """Output avals and info of ``fn`` without running it (for loops that ran zero times)."""
    _, out, info = _Tracer(op, _JAX, cls).trace(fn, avals, [], op)
    return out, info
