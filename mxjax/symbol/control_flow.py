"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: MXNet's symbolic control flow, one node
with body sub-graphs.

``foreach`` and ``while_loop`` call their bodies once on placeholder variables (a
slice of each data symbol and the states, or the loop variables) and the symbols
they return become the node's sub-graphs; ``cond``
calls each branch inside an ``AttrScope`` that marks the nodes it makes
(``__subgraph_name__``, as MXNet marks them), and the predicate is computed outside.  What the body reads
from outside -- variables of the enclosing graph (weights) or outputs computed outside
it -- is cut out of the sub-graph: it becomes an input of the node and a variable of
the body, as MXNet's symbolic control flow does.  The node runs the registered
``_foreach`` op (``lax.scan``) in the executor and reads back from MXNet's JSON.
"""
from __future__ import annotations

from typing import Any, Callable

from ..graph.ir import Entry, Node, topo_order
from ..attribute import AttrScope
from ..base import MXNetTypeError, MXNetValueError
from ..operator.control_flow import SUBGRAPHS
from ..graph.body import graph_body
from .symbol import Symbol, _output_name, auto_name, var

__all__ = ["foreach", "while_loop", "cond"]


def _as_list(value: Any, what: str) -> tuple[list[Symbol], bool]:
    """A symbol or a list of symbols as a list, and whether it was a single symbol."""
    if isinstance(value, Symbol):
        return [value], True
    if isinstance(value, (list, tuple)) and all(isinstance(v, Symbol) for v in value):
        return list(value), False
    raise MXNetTypeError(f"foreach: {what} must be a Symbol or a list of Symbols, got {type(value).__name__}")


def _cut(outputs: list[Entry], placeholders: set[int], mark: str | None = None
         ) -> tuple[list[Entry], list[tuple[str, Entry]]]:
    """The body's outputs with every outside entry replaced by a body variable; the
    (variable name, outside entry) pairs, in first-use order.  Only the body's own nodes
    are rewired: those built from the placeholders, or op nodes carrying ``mark``."""
    inner: set[int] = set(placeholders)
    for node in topo_order(outputs):
        if any(id(source) in inner for source, _ in node.inputs) or (
                mark is not None and not node.is_variable and node.attrs.get(SUBGRAPH_NAME) == mark):
            inner.add(id(node))
    cuts: dict[tuple[int, int], tuple[str, Entry, Entry]] = {}

    def cut(entry: Entry) -> Entry:
        source, index = entry
        if id(source) in inner:
            return entry
        key = (id(source), index)
        if key not in cuts:
            name = source.name if source.is_variable else _output_name(source, index)
            cuts[key] = (name, entry, (Node("null", name, attrs=dict(source.attrs) if source.is_variable else {}), 0))
        return cuts[key][2]

    for node in topo_order(outputs):
        if id(node) in inner and not node.is_variable:
            node.inputs = [cut(entry) for entry in node.inputs]
    outputs = [cut(entry) for entry in outputs]
    return outputs, [(name, outside) for name, outside, _ in cuts.values()]


SUBGRAPH_NAME = "__subgraph_name__"


def _placeholder_name(symbol: Symbol, role: str, index: int, taken: set[str]) -> str:
    """The body variable standing for ``symbol``: ``<name>-0`` as MXNet names it, made unique."""
    base = symbol.name or f"{role}{index}"
    count = 0
    while f"{base}-{count}" in taken:
        count += 1
    taken.add(f"{base}-{count}")
    return f"{base}-{count}"


def _locs(inputs: tuple, names: list[str]) -> tuple:
    position = {name: i for i, name in enumerate(inputs)}
    return tuple(position.get(name, -1) for name in names)


def foreach(body: Callable, data: Any, init_states: Any, name: str = "foreach") -> tuple:
    """Run ``body(data_slice, states) -> (outputs, new_states)`` over axis 0 of ``data``;
    returns the outputs stacked along axis 0 and the final states, shaped as the body gave them."""
    flat_data, single_data = _as_list(data, "data")
    flat_states, single_state = _as_list(init_states, "init_states")
    node_name = auto_name("_foreach")  # MXNet names the node after its op, whatever ``name`` says
    taken: set[str] = set()
    data_names = [_placeholder_name(s, "data", i, taken) for i, s in enumerate(flat_data)]
    state_names = [_placeholder_name(s, "state", i, taken) for i, s in enumerate(flat_states)]
    data_vars = [var(n) for n in data_names]
    state_vars = [var(n) for n in state_names]
    outs, new_states = body(data_vars[0] if single_data else data_vars,
                            state_vars[0] if single_state else state_vars)
    flat_outs, single_out = _as_list(outs, "the body's outputs")
    flat_new, _ = _as_list(new_states, "the body's new states")
    if len(flat_new) != len(flat_states):
        raise MXNetValueError(f"foreach: the body returned {len(flat_new)} new states for "
                              f"{len(flat_states)} initial states")
    placeholders = {id(v._outputs[0][0]) for v in data_vars + state_vars}
    body_outputs, free = _cut([s._outputs[0] for s in flat_outs + flat_new], placeholders)
    graph = graph_body(body_outputs, f"{node_name}_body")
    inputs = [s._outputs[0] for s in flat_data + flat_states] + [outside for _, outside in free]
    params = {"num_args": len(inputs) + 1, "num_outputs": len(body_outputs), "num_out_data": len(flat_outs),
              "in_data_locs": _locs(graph.inputs, data_names), "in_state_locs": _locs(graph.inputs, state_names),
              "remain_locs": _locs(graph.inputs, [n for n, _ in free]), SUBGRAPHS: (graph,)}
    node = Node("_foreach", node_name, params=params, inputs=inputs, num_outputs=len(body_outputs))
    node.subgraphs = [body_outputs]
    results = [Symbol([(node, i)]) for i in range(len(body_outputs))]
    stacked, final = results[:len(flat_outs)], results[len(flat_outs):]
    return (stacked[0] if single_out else stacked), (final[0] if single_state else final)


def _branch(function: Callable, mark: str, what: str) -> tuple[list[Entry], list[tuple[str, Entry]], bool]:
    """Run a branch inside a scope marking its nodes; its cut outputs, cut inputs, and whether it
    returned a single symbol."""
    with AttrScope(**{SUBGRAPH_NAME: mark}):
        result = function()
    flat, single = _as_list(result, what)
    outputs, free = _cut([s._outputs[0] for s in flat], set(), mark)
    return outputs, free, single


def cond(pred: Symbol, then_func: Callable, else_func: Callable, name: str = "cond") -> Any:
    """``then_func()`` if ``pred`` (a size-1 symbol) is non-zero at run time, else ``else_func()``;
    both branches take no arguments and return the same number of symbols."""
    if not isinstance(pred, Symbol) or len(pred) != 1:
        raise MXNetTypeError(f"cond: pred must be a single-output Symbol, got {type(pred).__name__}")
    node_name = auto_name("_cond")
    count = auto_name(name)[len(name):]  # the branch marks' suffix: cond_then0, cond_else0 as MXNet's
    pred_outputs, pred_free = _cut([pred._outputs[0]], set(), None)
    then_outputs, then_free, single = _branch(then_func, f"{name}_then{count}", "then_func's result")
    else_outputs, else_free, _ = _branch(else_func, f"{name}_else{count}", "else_func's result")
    if len(then_outputs) != len(else_outputs):
        raise MXNetValueError(f"cond: then_func returned {len(then_outputs)} outputs and else_func "
                              f"{len(else_outputs)}; both branches must return as many")
    inputs: list[Entry] = []
    position: dict[tuple[int, int], int] = {}
    bodies, locs = [], []
    for role, outputs, free in (("pred", pred_outputs, pred_free), ("then", then_outputs, then_free),
                                ("else", else_outputs, else_free)):
        for _, (source, index) in free:
            if (id(source), index) not in position:
                position[(id(source), index)] = len(inputs)
                inputs.append((source, index))
        graph = graph_body(outputs, f"{node_name}_{role}")
        by_name = {n: position[(id(e[0]), e[1])] for n, e in free}
        bodies.append(graph)
        locs.append(tuple(by_name[n] for n in graph.inputs))
    params = {"num_args": len(inputs) + 3, "num_outputs": len(then_outputs), "cond_input_locs": locs[0],
              "then_input_locs": locs[1], "else_input_locs": locs[2], SUBGRAPHS: tuple(bodies)}
    node = Node("_cond", node_name, params=params, inputs=inputs, num_outputs=len(then_outputs))
    node.subgraphs = [pred_outputs, then_outputs, else_outputs]
    results = [Symbol([(node, i)]) for i in range(len(then_outputs))]
    return results[0] if single else results


def _inputs_for(entries: list[Entry], free: list[tuple[str, Entry]], position: dict) -> None:
    for _, (source, index) in free:
        if (id(source), index) not in position:
            position[(id(source), index)] = len(entries)
            entries.append((source, index))


def while_loop(cond: Callable, func: Callable, loop_vars: Any, max_iterations: int | None = None,
               name: str = "while_loop") -> tuple:
    """``while cond(*vars): outputs, vars = func(*vars)``, at most ``max_iterations`` times; returns
    the step outputs stacked along axis 0 and padded with zeros to ``max_iterations`` rows (MXNet's
    shape), and the final loop variables."""
    if max_iterations is None or int(max_iterations) < 1:
        raise MXNetValueError(f"while_loop: max_iterations must be a positive int, got {max_iterations!r}")
    flat_vars, single_var = _as_list(loop_vars, "loop_vars")
    node_name = auto_name("_while_loop")
    taken: set[str] = set()
    names = [_placeholder_name(v, "var", i, taken) for i, v in enumerate(flat_vars)]
    placeholders = [var(n) for n in names]
    args = placeholders[0] if single_var else placeholders
    test = cond(args) if single_var else cond(*args)
    result = func(args) if single_var else func(*args)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise MXNetValueError("while_loop: func must return (step outputs, new loop variables)")
    outs, new_vars = result
    flat_outs, single_out = ([], False) if outs is None or (isinstance(outs, list) and not outs) \
        else _as_list(outs, "func's step outputs")
    flat_new, _ = _as_list(new_vars, "func's new loop variables")
    if len(flat_new) != len(flat_vars):
        raise MXNetValueError(f"while_loop: func returned {len(flat_new)} new loop variables for {len(flat_vars)}")
    inner = {id(p._outputs[0][0]) for p in placeholders}
    cond_outputs, cond_free = _cut([_as_list(test, "cond's result")[0][0]._outputs[0]], inner)
    func_outputs, func_free = _cut([s._outputs[0] for s in flat_outs + flat_new], inner)
    inputs = [v._outputs[0] for v in flat_vars]
    position: dict = {}
    _inputs_for(inputs, cond_free, position)
    _inputs_for(inputs, func_free, position)
    slot = {n: i for i, n in enumerate(names)}
    slot.update({n: position[(id(e[0]), e[1])] for n, e in cond_free + func_free})
    cond_graph = graph_body(cond_outputs, f"{node_name}_cond")
    func_graph = graph_body(func_outputs, f"{node_name}_func")
    params = {"num_args": len(inputs) + 2, "num_outputs": len(func_outputs), "num_out_data": len(flat_outs),
              "max_iterations": int(max_iterations), "cond_input_locs": tuple(slot[n] for n in cond_graph.inputs),
              "func_input_locs": tuple(slot[n] for n in func_graph.inputs),
              "func_var_locs": _locs(func_graph.inputs, names), SUBGRAPHS: (cond_graph, func_graph)}
    node = Node("_while_loop", node_name, params=params, inputs=inputs, num_outputs=len(func_outputs))
    node.subgraphs = [cond_outputs, func_outputs]
    results = [Symbol([(node, i)]) for i in range(len(func_outputs))]
    stacked, final = results[:len(flat_outs)], results[len(flat_outs):]
    return (stacked[0] if single_out else stacked), (final[0] if single_var else final)
