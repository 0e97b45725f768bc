"""``npx.foreach``, ``npx.while_loop`` and ``npx.cond``: MXNet's control flow, imperative or compiled.

The inputs choose how a call runs:

* plain arrays (also under ``autograd.record()``): a Python loop calling the user's
  functions, so autograd records every op, as MXNet's imperative versions do;
* deferred compute (a hybridized block being traced): each user function is traced
  into a sub-graph on placeholder arrays, and ONE node of ``_foreach`` /
  ``_while_loop`` / ``_cond`` is recorded, in MXNet's layout (its parameters and
  ``*_locs``, the sub-graphs as the node's ``subgraphs``), so it exports to symbol
  JSON and reads back.  Arrays from outside that the function reads (a Dense
  layer's weight) become extra inputs of the node, free variables;
* JAX tracers (under ``jax.jit``): the user functions run on tracers inside the
  op's ``lax.scan`` / ``lax.while_loop`` / ``lax.cond``.

Data, states and outputs may be arrays or nested lists of arrays; results come back
in the structure the user functions return, as MXNet regroups them.
"""
from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config
from .._deferred_compute import context as _dc_context, is_deferred_compute, set_variable
from ..graph.body import CONSTANT, encode_constant, graph_body
from ..graph.ir import Entry, Node, symbol_class, topo_order
from .._node_attrs import creation_attrs
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from .._ndarray import NDArray
from .._invoke import current_handler, invoke, reset_handler, set_handler, wrap_outputs
from ..graph.lazy import Lazy
from ..operator import OpDef, get_op
from ..operator.control_flow import SUBGRAPHS, Subgraph
from ..operator.naming import json_name

__all__ = ["foreach", "while_loop", "cond"]

_EAGER, _GRAPH, _JAX = "eager", "graph", "jax"


# ----------------------------------------------------------------------------- structures

def _flatten(value: Any, what: str, op: str) -> tuple[list, Any]:
    """``(arrays, fmt)``: fmt is None for one array, else the list of its items' fmts."""
    if isinstance(value, NDArray):
        return [value], None
    if isinstance(value, (list, tuple)):
        flat, fmt = [], []
        for item in value:
            items, item_fmt = _flatten(item, what, op)
            flat.extend(items)
            fmt.append(item_fmt)
        return flat, fmt
    raise MXNetTypeError(f"{op}: {what} must be an array or a (nested) list of arrays, got {type(value).__name__}")


def _regroup(flat: list, fmt: Any) -> Any:
    items = iter(flat)

    def build(f: Any) -> Any:
        return next(items) if f is None else [build(sub) for sub in f]
    return build(fmt)


def _aval(x: NDArray) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(x._data.shape), x._data.dtype)


def _describe(avals: list, fmt: Any) -> str:
    text = [f"{tuple(a.shape)} {onp.dtype(a.dtype).name}" for a in avals]
    return str(_regroup(text, fmt)).replace("'", "")


def _check_like(op: str, what: str, arrays: list, fmt: Any, want: list, want_fmt: Any, reference: str) -> None:
    got = [_aval(x) for x in arrays]
    same = fmt == want_fmt and all(g.shape == w.shape and g.dtype == w.dtype for g, w in zip(got, want))
    if not same:
        raise MXNetValueError(f"{op}: {what} must have the structure, shapes and dtypes of {reference}: "
                              f"got {_describe(got, fmt)}, expected {_describe(want, want_fmt)}")


def _callable(fn: Any, op: str, role: str) -> None:
    if not callable(fn):
        raise MXNetTypeError(f"{op}: {role} must be a function, got {type(fn).__name__}")


def _pair(result: Any, op: str, role: str) -> tuple:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise MXNetValueError(f"{op}: {role} must return a pair (outputs, new states), got {type(result).__name__}"
                              + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
    return result[0], result[1]


def _condition(value: Any, op: str, role: str) -> Any:
    """A condition result: a size-1 array (returned as is) or a Python truth value (returned as bool)."""
    if isinstance(value, NDArray):
        if value.size != 1:
            raise MXNetValueError(f"{op}: {role} must give a single value (size-1 array), got shape {value.shape}")
        return value
    if isinstance(value, (bool, int, float, onp.bool_, onp.number)):
        return bool(value)
    raise MXNetTypeError(f"{op}: {role} must give a size-1 array or a bool, got {type(value).__name__}")


def _truth(value: Any) -> bool:
    return value if isinstance(value, bool) else bool(value.asnumpy().reshape(()))


def _mode(arrays: list) -> str:
    if is_deferred_compute():
        return _GRAPH
    if any(isinstance(x._data, jax.core.Tracer) for x in arrays if isinstance(x, NDArray)):
        return _JAX
    return _EAGER


def _stack(rows: list, cls: type) -> list:
    """Per output position, the rows' arrays stacked along a new axis 0 (recorded by autograd)."""
    op = get_op("stack")
    return [invoke(op, list(items), {"axis": 0}, cls) for items in zip(*rows)]


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


# ----------------------------------------------------------------------------- foreach

@_config.with_x64
def foreach(body: Callable, data: Any, init_states: Any, name: str = "foreach") -> tuple:
    """Run ``body`` over axis 0 of ``data``: ``out, states = body(data[i], states)`` for each i.

    ``data`` and ``init_states`` are arrays or (nested) lists of arrays; the body gets
    slices and states in the same structure and must return new states in the
    structure, shapes and dtypes of ``init_states``.  Returns ``(outputs, states)``:
    the body's outputs stacked along axis 0, and the final states.
    """
    op = "foreach"
    _callable(body, op, "body")
    flat_data, data_fmt = _flatten(data, "data", op)
    flat_states, state_fmt = _flatten(init_states, "init_states", op)
    if not flat_data:
        raise MXNetValueError("foreach: data must hold at least one array")
    if any(x.ndim == 0 for x in flat_data) or len({x.shape[0] for x in flat_data}) != 1:
        raise MXNetValueError(f"foreach: the data arrays must share their length along axis 0, got shapes "
                              f"{[x.shape for x in flat_data]}")
    cls = type(flat_data[0])
    state_avals = [_aval(s) for s in flat_states]
    num_data = len(flat_data)

    def step(arrays: list) -> tuple[list, tuple]:
        """One body call on flat (slices + states): flat (outputs + new states), (num outputs, fmt)."""
        result = body(_regroup(arrays[:num_data], data_fmt), _regroup(arrays[num_data:], state_fmt))
        out, new_states = _pair(result, op, "body")
        outs, out_fmt = _flatten(out, "the body's outputs", op)
        new, new_fmt = _flatten(new_states, "the body's new states", op)
        _check_like(op, "the body's new states", new, new_fmt, state_avals, state_fmt, "init_states")
        return outs + new, (len(outs), out_fmt)

    slice_avals = [jax.ShapeDtypeStruct(x.shape[1:], x._data.dtype) for x in flat_data]
    mode = _mode(flat_data + flat_states)
    if mode == _EAGER:
        outs, states = _foreach_eager(step, flat_data, flat_states, slice_avals + state_avals, cls)
    else:
        tracer = _Tracer(op, mode, cls)
        data_names = [f"foreach_data{i}" for i in range(num_data)]
        state_names = [f"foreach_state{i}" for i in range(len(flat_states))]
        graph, _, (num_out, out_fmt) = tracer.trace(step, slice_avals + state_avals, data_names + state_names,
                                                    "foreach_body", anchor=True)
        params = {"num_outputs": graph.num_outputs, "num_out_data": num_out,
                  "in_data_locs": _locs_in(graph, data_names), "in_state_locs": _locs_in(graph, state_names),
                  "remain_locs": _locs_in(graph, tracer.free_names), SUBGRAPHS: (graph,)}
        results = tracer.run(get_op("_foreach"), [*flat_data, *flat_states], params)
        outs, states = (results[:num_out], out_fmt), results[num_out:]
    return _regroup(*outs), _regroup(states, state_fmt)


def _add_row(op: str, what: str, rows: list, first: tuple | None, outs: list, out_fmt: Any) -> tuple:
    """Append one step's outputs to ``rows``, checked against the first step's (avals, format); returns
    the first step's (avals, format)."""
    if first is None:
        first = ([_aval(o) for o in outs], out_fmt)
    else:
        _check_like(op, what, outs, out_fmt, *first, "the first step's outputs")
    rows.append(outs)
    return first


def _foreach_eager(step: Callable, data: list, states: list, avals: list, cls: type) -> tuple:
    rows, first = [], None
    for i in range(data[0].shape[0]):
        result, (num_out, out_fmt) = step([x[i] for x in data] + states)
        outs, states = result[:num_out], result[num_out:]
        first = _add_row("foreach", "the body's outputs", rows, first, outs, out_fmt)
    if first is None:  # no steps: the outputs' shapes from a trace of the body
        out_avals, (num_out, out_fmt) = _shapes_of("foreach", cls, step, avals)
        stacked = [cls._wrap(jnp.zeros((0, *a.shape), a.dtype)) for a in out_avals[:num_out]]
        return (stacked, out_fmt), states
    return (_stack(rows, cls) if rows[0] else [], first[1]), states


# ----------------------------------------------------------------------------- while_loop

@_config.with_x64
def while_loop(cond: Callable, func: Callable, loop_vars: Any, max_iterations: Any = None,
               name: str = "while_loop") -> tuple:
    """``while cond(*loop_vars): step_output, loop_vars = func(*loop_vars)``, at most ``max_iterations`` times.

    Returns ``(outputs, final_loop_vars)``: each step output stacked along axis 0 and
    padded with zeros to ``max_iterations`` rows, and the final loop variables as a
    list.  The padding is MXNet's, imperative and hybridized alike (its operator
    allocates ``max_iterations`` rows, "due to lack of dynamic shape inference"), so
    the shape never depends on the data; rows past the last step are zero.  A
    condition still true after ``max_iterations`` steps is an error (MXNet stops
    silently).
    """
    op = "while_loop"
    _callable(cond, op, "cond")
    _callable(func, op, "func")
    max_iterations = _max_iterations(max_iterations)
    if isinstance(loop_vars, NDArray):
        loop_vars = [loop_vars]
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise MXNetValueError("while_loop: loop_vars must be an array or a non-empty list of arrays")
    flat_vars, var_fmt = _flatten(list(loop_vars), "loop_vars", op)
    cls = type(flat_vars[0])
    var_avals = [_aval(v) for v in flat_vars]

    def test(arrays: list) -> tuple[list, None]:
        value = _condition(cond(*_regroup(arrays, var_fmt)), op, "cond")
        if isinstance(value, bool):
            value = cls._wrap(jnp.asarray(value))
        return [value], None

    def step(arrays: list) -> tuple[list, tuple]:
        out, new_vars = _pair(func(*_regroup(arrays, var_fmt)), op, "func")
        out = [] if out is None else out
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else [] if new_vars is None else list(new_vars)
        outs, out_fmt = _flatten(out, "func's step outputs", op)
        new, new_fmt = _flatten(new_vars, "func's new loop_vars", op)
        _check_like(op, "func's new loop_vars", new, new_fmt, var_avals, var_fmt, "loop_vars")
        return outs + new, (len(outs), out_fmt)

    mode = _mode(flat_vars)
    if mode == _EAGER:
        return _while_eager(test, step, flat_vars, var_fmt, var_avals, max_iterations, cls)
    tracer = _Tracer(op, mode, cls)
    names = [f"while_loop_var{i}" for i in range(len(flat_vars))]
    cond_graph, _, _ = tracer.trace(test, var_avals, names, "while_loop_cond")
    func_graph, _, (num_out, out_fmt) = tracer.trace(step, var_avals, names, "while_loop_func", anchor=True)
    node_names = names + tracer.free_names
    params = {"num_outputs": func_graph.num_outputs, "num_out_data": num_out, "max_iterations": max_iterations,
              "cond_input_locs": _locs_of(cond_graph, node_names), "func_input_locs": _locs_of(func_graph, node_names),
              "func_var_locs": _locs_in(func_graph, names), SUBGRAPHS: (cond_graph, func_graph)}
    results = tracer.run(get_op("_while_loop"), flat_vars, params)
    final = results[num_out:num_out + len(flat_vars)]
    return _regroup(results[:num_out], out_fmt), _regroup(final, var_fmt)


def _max_iterations(value: Any) -> int:
    if value is None:
        raise MXNetValueError("while_loop: max_iterations is required (outputs are padded to max_iterations rows)")
    if isinstance(value, NDArray):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float, onp.number)) or int(value) != value:
        raise MXNetValueError(f"while_loop: max_iterations must be a positive integer, got {value!r}")
    if value <= 0:
        raise MXNetValueError(f"while_loop: max_iterations must be a positive integer, got {value}")
    return int(value)


def _while_eager(test: Callable, step: Callable, values: list, var_fmt: Any, var_avals: list,
                 max_iterations: int, cls: type) -> tuple:
    rows, first = [], None
    while len(rows) < max_iterations and _truth(test(values)[0][0]):
        result, (num_out, out_fmt) = step(values)
        outs, values = result[:num_out], result[num_out:]
        first = _add_row("while_loop", "func's step outputs", rows, first, outs, out_fmt)
    if len(rows) == max_iterations and _truth(test(values)[0][0]):
        raise MXNetError(f"while_loop: the loop condition is still true after max_iterations={max_iterations} "
                         "iterations; raise max_iterations or fix the condition")
    if first is None:  # no steps: the outputs' shapes from a trace of func
        out_avals, (num_out, out_fmt) = _shapes_of("while_loop", cls, step, var_avals)
        first = (out_avals[:num_out], out_fmt)
    padded = []
    stacked = _stack(rows, cls) if rows and rows[0] else [None] * len(first[0])
    for aval, rows_stacked in zip(first[0], stacked):
        pad = cls._wrap(jnp.zeros((max_iterations - len(rows), *aval.shape), aval.dtype))
        if rows_stacked is None:
            padded.append(pad)
        elif len(rows) == max_iterations:
            padded.append(rows_stacked)
        else:
            padded.append(invoke(get_op("concatenate"), [rows_stacked, pad], {"axis": 0}, cls))
    return _regroup(padded, first[1]), _regroup(values, var_fmt)


# ----------------------------------------------------------------------------- cond

@_config.with_x64
def cond(pred: Any, then_func: Callable, else_func: Callable, inputs: Any = None, name: str = "cond") -> Any:
    """``then_func(*inputs)`` if ``pred`` holds, else ``else_func(*inputs)``.

    ``pred`` is a function of the inputs (MXNet 2) or a size-1 array (MXNet 1.x, whose
    branches take no arguments: leave ``inputs`` out).  Compiled, both branches must
    return the same structure, shapes and dtypes.
    """
    op = "cond"
    _callable(then_func, op, "then_func")
    _callable(else_func, op, "else_func")
    args = [] if inputs is None else [inputs] if isinstance(inputs, NDArray) else inputs
    if not isinstance(args, (list, tuple)):
        raise MXNetTypeError(f"cond: inputs must be an array or a list of arrays, got {type(inputs).__name__}")
    flat_in, in_fmt = _flatten(list(args), "inputs", op)
    flag = _condition(pred(*args) if callable(pred) else pred, op, "pred")

    def branch(fn: Callable) -> Callable:
        def run(arrays: list) -> tuple[list, Any]:
            return _flatten(fn(*_regroup(arrays, in_fmt)), "a branch's outputs", op)
        return run

    mode = _mode(flat_in + ([flag] if isinstance(flag, NDArray) else []))
    if isinstance(flag, bool) or mode == _EAGER:  # a known condition: run the chosen branch only
        return _regroup(*branch(then_func if _truth(flag) else else_func)(flat_in))
    cls = type(flat_in[0]) if flat_in else type(flag)
    tracer = _Tracer(op, mode, cls)
    avals = [_aval(x) for x in flat_in]
    names = [f"cond_input{i}" for i in range(len(flat_in))]
    tracer.reserve(["cond_pred"])
    then_graph, then_avals, then_fmt = tracer.trace(branch(then_func), avals, names, "cond_then")
    else_graph, else_avals, else_fmt = tracer.trace(branch(else_func), avals, names, "cond_else")
    same = then_fmt == else_fmt and [(a.shape, a.dtype) for a in then_avals] == [(a.shape, a.dtype) for a in else_avals]
    if not same:
        raise MXNetValueError(f"cond: then_func and else_func must return the same structure, shapes and dtypes: "
                              f"then gives {_describe(then_avals, then_fmt)}, else gives "
                              f"{_describe(else_avals, else_fmt)}")
    node_names = ["cond_pred", *names, *tracer.free_names]
    params = {"num_outputs": then_graph.num_outputs, "cond_input_locs": (0,),
              "then_input_locs": _locs_of(then_graph, node_names), "else_input_locs": _locs_of(else_graph, node_names),
              SUBGRAPHS: (tracer.identity("cond_pred"), then_graph, else_graph)}
    results = tracer.run(get_op("_cond"), [flag, *flat_in], params)
    return _regroup(results, then_fmt)
