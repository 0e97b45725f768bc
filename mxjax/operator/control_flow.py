"""Control-flow ops: ``_foreach``, ``_while_loop`` and ``_cond`` (MXNet's graph names).

Each op runs a user function that the front-end (``mx.npx.foreach``...) has
already turned into a pure JAX function of arrays, a :class:`Subgraph` given as
a static parameter, so a whole loop is one node of a graph and one XLA loop:
``lax.scan`` for ``foreach``, ``lax.while_loop`` (``lax.scan`` when
differentiated) for ``while_loop``, ``lax.cond`` for ``cond``.  Inputs after the
loop's own arrays are the sub-graphs' free variables (a Dense layer's weight used
in a loop body), passed to every call of the body unchanged.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax

from ..base import MXNetError
from .registry import defop

__all__ = ["Subgraph"]


@dataclass(frozen=True, eq=False)
class Subgraph:
    """A traced user function: ``fn(*arrays) -> tuple`` of ``num_outputs`` arrays.

    A static op parameter compared and hashed by identity: each trace is its own
    program.  ``name`` only labels it in messages and symbol JSON.
    """

    fn: Callable[..., Any]
    num_outputs: int
    name: str = "subgraph"

    def __call__(self, *arrays: Any) -> tuple:
        return tuple(self.fn(*arrays))

    def __str__(self) -> str:
        return f"<{self.name}: {self.num_outputs} outputs>"

    __repr__ = __str__

    def __deepcopy__(self, memo: dict) -> "Subgraph":  # graphs are copied; the traced function is shared
        return self


def _need(graph: Any, op: str, param: str) -> Subgraph:
    if not isinstance(graph, Subgraph):
        raise MXNetError(f"{op}: parameter {param} must be a traced sub-graph (build the op with "
                         f"mx.npx.{op.lstrip('_')}), got {type(graph).__name__}")
    return graph


def _truth(value: Any) -> Any:
    """A size-1 array as a scalar bool (non-zero is true, as MXNet reads conditions)."""
    return jnp.reshape(value, ()).astype(bool)


# ----------------------------------------------------------------------------- foreach

def _foreach_outputs(params: dict) -> int:
    return _need(params.get("body"), "_foreach", "body").num_outputs


@defop("_foreach", num_outputs=_foreach_outputs)
def foreach(*arrays, body: any = None, num_data: int = 1, num_states: int = 0):
    """Run ``body`` over axis 0 of the first ``num_data`` inputs, carrying ``num_states`` states.

    ``body(*slices, *states, *free) -> (*outputs, *new_states)``; returns the
    outputs stacked along axis 0, then the final states.
    """
    body = _need(body, "_foreach", "body")
    data, states = arrays[:num_data], tuple(arrays[num_data:num_data + num_states])
    free = arrays[num_data + num_states:]
    num_out = body.num_outputs - num_states

    def step(carry: tuple, slices: tuple) -> tuple:
        result = body(*slices, *carry, *free)
        return tuple(result[num_out:]), tuple(result[:num_out])

    final, stacked = lax.scan(step, states, tuple(data))
    return (*stacked, *final)


# ----------------------------------------------------------------------------- while_loop

def _while_outputs(params: dict) -> int:
    return _need(params.get("func"), "_while_loop", "func").num_outputs + 2


def _overflow(max_iterations: int) -> None:
    raise MXNetError(f"while_loop: the loop condition is still true after max_iterations={max_iterations} "
                     "iterations; raise max_iterations or fix the condition")


@defop("_while_loop", num_outputs=_while_outputs)
def while_loop(*arrays, cond: any = None, func: any = None, num_vars: int = 1, max_iterations: int = 1):
    """``while cond(*vars): outputs, vars = func(*vars)``, at most ``max_iterations`` times.

    Inputs are the loop variables then the free variables, which ``cond`` and
    ``func`` both receive after the loop variables.  Returns the step outputs
    stacked along axis 0 and zero-padded to ``max_iterations`` rows, the final
    loop variables, the number of steps run (int64) and an overflow flag (bool:
    the condition still held after ``max_iterations`` steps; running the program
    then raises an error naming ``while_loop``).
    """
    cond = _need(cond, "_while_loop", "cond")
    func = _need(func, "_while_loop", "func")
    return _while_program(cond, func, num_vars, max_iterations)(*arrays)


def _while_program(cond: Subgraph, func: Subgraph, num_vars: int, max_iterations: int) -> Callable:
    """The loop as a function of the inputs: ``lax.while_loop`` (stops as soon as the condition fails)
    whose VJP is that of the same loop written as ``lax.scan`` over ``max_iterations`` gated steps."""
    num_out = func.num_outputs - num_vars

    def out_avals(arrays: tuple) -> list:
        return jax.eval_shape(func, *arrays)[:num_out]

    def finish(arrays: tuple, steps: Any, final: tuple, stacked: tuple) -> tuple:
        free = arrays[num_vars:]
        overflow = (steps >= max_iterations) & _truth(cond(*final, *free)[0])
        raise_it = functools.partial(jax.debug.callback, functools.partial(_overflow, max_iterations))
        lax.cond(overflow, raise_it, lambda: None)
        return (*stacked, *final, steps, overflow)

    def early_exit(*arrays: Any) -> tuple:
        free = arrays[num_vars:]
        buffers = tuple(jnp.zeros((max_iterations, *a.shape), a.dtype) for a in out_avals(arrays))

        def going(carry: tuple) -> Any:
            steps, values, _ = carry
            return (steps < max_iterations) & _truth(cond(*values, *free)[0])

        def step(carry: tuple) -> tuple:
            steps, values, buffers = carry
            result = func(*values, *free)
            buffers = tuple(b.at[steps].set(o) for b, o in zip(buffers, result[:num_out]))
            return steps + 1, tuple(result[num_out:]), buffers

        start = (jnp.zeros((), jnp.int64), tuple(arrays[:num_vars]), buffers)
        steps, final, stacked = lax.while_loop(going, step, start)
        return finish(arrays, steps, final, stacked)

    def gated(*arrays: Any) -> tuple:
        free = arrays[num_vars:]
        zeros = tuple(jnp.zeros(a.shape, a.dtype) for a in out_avals(arrays))

        def step(carry: tuple, _: Any) -> tuple:
            steps, live, values = carry
            live = live & _truth(cond(*values, *free)[0])
            result = lax.cond(live, lambda v: func(*v, *free), lambda v: (*zeros, *v), values)
            return (steps + live.astype(jnp.int64), live, tuple(result[num_out:])), tuple(result[:num_out])

        start = (jnp.zeros((), jnp.int64), jnp.ones((), bool), tuple(arrays[:num_vars]))
        (steps, _, final), stacked = lax.scan(step, start, None, length=max_iterations)
        return finish(arrays, steps, final, stacked)

    program = jax.custom_vjp(early_exit)
    program.defvjp(lambda *arrays: jax.vjp(gated, *arrays), lambda vjp, cotangents: vjp(cotangents))
    return program


# ----------------------------------------------------------------------------- cond

def _cond_outputs(params: dict) -> int:
    return _need(params.get("then_branch"), "_cond", "then_branch").num_outputs


@defop("_cond", num_outputs=_cond_outputs)
def cond(pred, *arrays, then_branch: any = None, else_branch: any = None):
    """``then_branch(*arrays)`` if the size-1 ``pred`` is non-zero, else ``else_branch(*arrays)``."""
    then_branch = _need(then_branch, "_cond", "then_branch")
    else_branch = _need(else_branch, "_cond", "else_branch")
    return tuple(lax.cond(_truth(pred), lambda a: then_branch(*a), lambda a: else_branch(*a), arrays))
