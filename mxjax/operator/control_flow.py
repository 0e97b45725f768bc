"""Control-flow ops: ``_foreach``, ``_while_loop`` and ``_cond``, with MXNet's parameters.

Each op runs sub-graphs given as the static parameter ``__subgraphs__``: a tuple
of :class:`Subgraph` (a traced user function, or a graph read from symbol
JSON), in MXNet's order: ``(body,)`` for foreach, ``(cond, func)`` for
while_loop, ``(pred, then, else)`` for cond.  The other parameters are MXNet's
own (its ``ForeachParam``, ``WhileLoopParam``, ``CondParam``), so a node writes
to and reads from symbol JSON as MXNet does, the sub-graphs as the node's
``subgraphs``.  The ``*_locs`` parameters say which node input feeds which
sub-graph input:

* foreach: the node's inputs are the data, then the states, then the rest (free
  variables: a Dense weight read in the body); ``in_data_locs[i]``,
  ``in_state_locs[i]``, ``remain_locs[i]`` are the body inputs they feed;
* while_loop and cond: ``<graph>_input_locs[j]`` is the node input that feeds input
  ``j`` of that sub-graph; loop variable ``i`` is func's input ``func_var_locs[i]``.

A whole loop is one node and one XLA loop: ``lax.scan`` for foreach,
``lax.while_loop`` (``lax.scan`` when differentiated) for while_loop, ``lax.cond``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax

from ..base import MXNetError
from .registry import defop

__all__ = ["Subgraph", "SUBGRAPHS", "CONTROL_FLOW_ROLES"]

SUBGRAPHS = "__subgraphs__"  # the parameter holding the sub-graphs (hidden in JSON: MXNet ignores __x__ keys)
# each op's sub-graphs, in MXNet's order (names used in messages and labels)
CONTROL_FLOW_ROLES = {"_foreach": ("body",), "_while_loop": ("cond", "func"), "_cond": ("pred", "then", "else")}


@dataclass(frozen=True, eq=False)
class Subgraph:
    """A sub-graph as a function: ``fn(*arrays) -> tuple`` of ``num_outputs`` arrays.

    ``inputs`` names its arguments in order (for a graph: its variables in MXNet's
    ``list_inputs`` order).  ``graph`` holds the output entries of a graph body,
    written as a JSON sub-graph; ``by_mode(train)`` gives the function for a
    training flag when the graph has ops that depend on it (BatchNorm).  A static op
    parameter compared and hashed by identity: each trace is its own program.
    """

    fn: Callable[..., Any]
    num_outputs: int
    name: str = "subgraph"
    inputs: tuple = ()
    graph: list | None = field(default=None, repr=False)
    by_mode: Callable[[bool], Callable] | None = field(default=None, repr=False)

    def __call__(self, *arrays: Any, train: bool | None = None) -> tuple:
        fn = self.fn if train is None or self.by_mode is None else self.by_mode(train)
        return tuple(fn(*arrays))

    def __str__(self) -> str:  # what the __subgraphs__ attribute of a JSON node reads
        return self.name

    def __repr__(self) -> str:
        return f"<{self.name}: {self.num_outputs} outputs>"

    def __deepcopy__(self, memo: dict) -> "Subgraph":  # graphs are copied; the traced function is shared
        return self


def _bodies(op: str, graphs: Any) -> tuple:
    roles = CONTROL_FLOW_ROLES[op]
    if not (isinstance(graphs, tuple) and len(graphs) == len(roles) and all(isinstance(g, Subgraph) for g in graphs)):
        raise MXNetError(f"{op}: parameter {SUBGRAPHS} must be a tuple of {len(roles)} traced sub-graphs "
                         f"({', '.join(roles)}); build the op with mx.npx.{op.lstrip('_')} or load it from "
                         f"symbol JSON, got {graphs!r}")
    return graphs


def _check_args(op: str, num_args: int, extra: int, arrays: tuple) -> None:
    if num_args != len(arrays) + extra:
        raise MXNetError(f"{op}: num_args={num_args} counts the {extra} sub-graph(s) and the inputs, "
                         f"but the node has {len(arrays)} inputs")


def _place(op: str, locs: tuple, values: tuple, body: Subgraph) -> list:
    """The body's arguments: ``values[k]`` goes to argument ``locs[k]`` (-1: the body does not read it)."""
    args: list = [None] * sum(1 for loc in locs if loc >= 0)
    for loc, value in zip(locs, values):
        if loc >= len(args):
            raise MXNetError(f"{op}: input location {loc} is out of range for the {len(args)} inputs of {body.name}")
        if loc >= 0:
            args[loc] = value
    if any(a is None for a in args):
        raise MXNetError(f"{op}: the input locations {locs} do not give every input of {body.name} a value")
    return args


def _pick(arrays: Any, locs: tuple) -> list:
    return [arrays[loc] for loc in locs]


def _truth(value: Any) -> Any:
    """A size-1 array as a scalar bool (non-zero is true, as MXNet reads conditions)."""
    return jnp.reshape(value, ()).astype(bool)


# ----------------------------------------------------------------------------- foreach

@defop("_foreach", num_outputs=lambda params: params.get("num_outputs", 1))
def foreach(*arrays, num_args: int = 1, num_outputs: int = 1, num_out_data: int = 0, in_state_locs: tuple = (),
            in_data_locs: tuple = (), remain_locs: tuple = (), __subgraphs__: any = None,
            _train: bool | None = None):
    """Run the body over axis 0 of the data inputs, carrying the states.

    The body returns ``num_out_data`` outputs, stacked along axis 0, then the new
    states; the op returns the stacked outputs, then the final states.
    """
    (body,) = _bodies("_foreach", __subgraphs__)
    _check_args("_foreach", num_args, 1, arrays)
    num_data, num_states = len(in_data_locs), len(in_state_locs)
    data, states = arrays[:num_data], tuple(arrays[num_data:num_data + num_states])
    remain = arrays[num_data + num_states:]
    locs = (*in_data_locs, *in_state_locs, *remain_locs)

    def step(carry: tuple, slices: tuple) -> tuple:
        result = body(*_place("_foreach", locs, (*slices, *carry, *remain), body), train=_train)
        return tuple(result[num_out_data:]), tuple(result[:num_out_data])

    final, stacked = lax.scan(step, states, tuple(data))
    return (*stacked, *final)


# ----------------------------------------------------------------------------- while_loop

def _overflow(max_iterations: int) -> None:
    raise MXNetError(f"while_loop: the loop condition is still true after max_iterations={max_iterations} "
                     "iterations; raise max_iterations or fix the condition")


@defop("_while_loop", num_outputs=lambda params: params.get("num_outputs", 1))
def while_loop(*arrays, num_args: int = 2, num_outputs: int = 1, num_out_data: int = 0, max_iterations: int = 1,
               cond_input_locs: tuple = (), func_input_locs: tuple = (), func_var_locs: tuple = (),
               __subgraphs__: any = None, _train: bool | None = None):
    """``while cond(...): outputs, vars = func(...)``, at most ``max_iterations`` times.

    Loop variable ``i`` is node input ``func_input_locs[func_var_locs[i]]``; each step
    replaces it with func's output ``num_out_data + i``.  Returns func's first
    ``num_out_data`` outputs stacked along axis 0 over ``max_iterations`` rows, those
    after the last step zero (MXNet's shape: it must not depend on the data), then
    the final loop variables.  A condition still true after ``max_iterations`` steps
    raises an error naming ``while_loop`` when the program runs.
    """
    cond, func = _bodies("_while_loop", __subgraphs__)
    _check_args("_while_loop", num_args, 2, arrays)
    if -1 in func_var_locs:
        raise MXNetError(f"_while_loop: loop variable {list(func_var_locs).index(-1)} is not an input of func "
                         f"(func_var_locs={func_var_locs})")
    slots = tuple(func_input_locs[loc] for loc in func_var_locs)
    if len(slots) != num_outputs - num_out_data:
        raise MXNetError(f"_while_loop: {len(slots)} loop variables (func_var_locs) but num_outputs - num_out_data = "
                         f"{num_outputs - num_out_data}")

    def test(values: list) -> Any:
        return _truth(cond(*_pick(values, cond_input_locs), train=_train)[0])

    def step(values: list) -> tuple:
        return func(*_pick(values, func_input_locs), train=_train)

    return _while_program(test, step, slots, num_out_data, max_iterations)(*arrays)


def _while_program(test: Callable, step: Callable, slots: tuple, num_out: int, max_iterations: int) -> Callable:
    """The loop as a function of the node inputs: ``lax.while_loop`` (stops as soon as the condition
    fails) whose VJP is that of the same loop written as ``lax.scan`` over ``max_iterations`` gated steps."""

    def with_vars(arrays: tuple, loop_vars: tuple) -> list:
        values = list(arrays)
        for slot, value in zip(slots, loop_vars):
            values[slot] = value
        return values

    def out_avals(arrays: tuple) -> list:
        return jax.eval_shape(lambda *a: step(list(a)), *arrays)[:num_out]

    def finish(arrays: tuple, steps: Any, final: tuple, stacked: tuple) -> tuple:
        overflow = (steps >= max_iterations) & test(with_vars(arrays, final))
        raise_it = functools.partial(jax.debug.callback, functools.partial(_overflow, max_iterations))
        lax.cond(overflow, raise_it, lambda: None)
        return (*stacked, *final)

    def early_exit(*arrays: Any) -> tuple:
        buffers = tuple(jnp.zeros((max_iterations, *a.shape), a.dtype) for a in out_avals(arrays))

        def going(carry: tuple) -> Any:
            steps, loop_vars, _ = carry
            return (steps < max_iterations) & test(with_vars(arrays, loop_vars))

        def body(carry: tuple) -> tuple:
            steps, loop_vars, buffers = carry
            result = step(with_vars(arrays, loop_vars))
            buffers = tuple(b.at[steps].set(o) for b, o in zip(buffers, result[:num_out]))
            return steps + 1, tuple(result[num_out:]), buffers

        start = (jnp.zeros((), jnp.int64), tuple(arrays[s] for s in slots), buffers)
        steps, final, stacked = lax.while_loop(going, body, start)
        return finish(arrays, steps, final, stacked)

    def gated(*arrays: Any) -> tuple:
        zeros = tuple(jnp.zeros(a.shape, a.dtype) for a in out_avals(arrays))

        def body(carry: tuple, _: Any) -> tuple:
            steps, live, loop_vars = carry
            live = live & test(with_vars(arrays, loop_vars))
            result = lax.cond(live, lambda v: step(with_vars(arrays, v)), lambda v: (*zeros, *v), loop_vars)
            return (steps + live.astype(jnp.int64), live, tuple(result[num_out:])), tuple(result[:num_out])

        start = (jnp.zeros((), jnp.int64), jnp.ones((), bool), tuple(arrays[s] for s in slots))
        (steps, _, final), stacked = lax.scan(body, start, None, length=max_iterations)
        return finish(arrays, steps, final, stacked)

    program = jax.custom_vjp(early_exit)
    program.defvjp(lambda *arrays: jax.vjp(gated, *arrays), lambda vjp, cotangents: vjp(cotangents))
    return program


# ----------------------------------------------------------------------------- cond

@defop("_cond", num_outputs=lambda params: params.get("num_outputs", 1))
def cond(*arrays, num_args: int = 3, num_outputs: int = 1, cond_input_locs: tuple = (), then_input_locs: tuple = (),
         else_input_locs: tuple = (), __subgraphs__: any = None, _train: bool | None = None):
    """``then(...)`` if ``pred(...)`` (a size-1 array) is non-zero, else ``else(...)``."""
    pred, then_branch, else_branch = _bodies("_cond", __subgraphs__)
    _check_args("_cond", num_args, 3, arrays)
    flag = pred(*_pick(arrays, cond_input_locs), train=_train)[0]
    return tuple(lax.cond(_truth(flag), lambda a: then_branch(*_pick(a, then_input_locs), train=_train),
                          lambda a: else_branch(*_pick(a, else_input_locs), train=_train), arrays))
