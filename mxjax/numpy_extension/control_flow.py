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
in the structure the user functions return, as MXNet regroups them.  The structure
helpers live in ``_control_flow_structure``, the sub-graph tracing in ``_control_flow_trace``.
"""
from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from .._ndarray import NDArray
from .._invoke import invoke
from ..operator import get_op
from ..operator.control_flow import SUBGRAPHS
from ._control_flow_structure import (
    _EAGER, _aval, _callable, _check_like, _condition, _describe, _flatten, _mode, _pair, _regroup, _stack, _truth)
from ._control_flow_trace import _Tracer, _locs_in, _locs_of, _shapes_of

__all__ = ["foreach", "while_loop", "cond"]


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
