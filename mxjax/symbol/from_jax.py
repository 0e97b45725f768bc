"""From JAX to a Symbol: trace a JAX function and turn its jaxpr into graph nodes.

Each JAX primitive becomes an op named ``_jax_<primitive>`` (registered on first
use; its compute function binds the primitive), so the graph runs, infers shapes
and binds like any other.  Calls of inner jaxprs (``jit``-ed helpers, custom
derivatives) are inlined.  Such graphs hold JAX parameter objects, so they have no
MXNet JSON form.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as onp
from jax.extend import core as jex_core

from ..graph.ir import Node
from ..base import MXNetError
from ..operator import OPS, OpDef, register_op
from ..graph.interpret import CONSTANTS
from .symbol import Symbol

__all__ = ["from_jax", "JAX_OP_PREFIX"]

JAX_OP_PREFIX = "_jax_"
_INLINE = ("pjit", "jit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
           "custom_vjp_call_jaxpr", "remat", "checkpoint")


def _primitive_op(primitive: Any) -> OpDef:
    name = JAX_OP_PREFIX + primitive.name
    op = OPS.get(name)
    if op is None:
        def compute(*arrays: Any, **params: Any) -> Any:
            out = primitive.bind(*arrays, **params)
            return tuple(out) if primitive.multiple_results else out
        compute.__doc__ = f"The JAX primitive {primitive.name} (from a traced JAX function)."
        op = register_op(OpDef(name, compute))
    return op


def from_jax(fn: Callable[..., Any], *example_args: Any, names: Sequence[str] | None = None) -> tuple:
    """``(symbol, constants)`` for ``fn`` traced at ``example_args`` (arrays or ShapeDtypeStructs).

    Positional arguments become variables named by ``names`` (default ``data0``,
    ``data1``, ...); arrays ``fn`` closes over become variables ``_const0``, ...
    whose values are returned in ``constants`` (pass them when binding).
    """
    closed = jax.make_jaxpr(fn)(*example_args)
    jaxpr = closed.jaxpr
    names = list(names) if names is not None else [f"data{i}" for i in range(len(jaxpr.invars))]
    if len(names) != len(jaxpr.invars):
        raise MXNetError(f"from_jax: {len(names)} names for {len(jaxpr.invars)} flattened inputs")
    env: dict[Any, Any] = {}
    for var, name in zip(jaxpr.invars, names):
        env[var] = (Node("null", name), 0)
    constants = {}
    for i, (var, value) in enumerate(zip(jaxpr.constvars, closed.consts)):
        env[var] = (Node("null", f"_const{i}"), 0)
        constants[f"_const{i}"] = value
    counter = iter(range(1 << 30))
    outputs = _convert(jaxpr, env, counter)
    return Symbol(outputs), constants


def _convert(jaxpr: Any, env: dict, counter: Any) -> list:
    def read(atom: Any) -> Any:
        if isinstance(atom, jex_core.Literal):  # keep the literal's dtype: primitives do not promote
            return ("literal", onp.asarray(atom.val, dtype=atom.aval.dtype))
        return env[atom]

    for eqn in jaxpr.eqns:
        inner = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr") or eqn.params.get("fun_jaxpr")
        if eqn.primitive.name in _INLINE and inner is not None:
            inner_jaxpr = getattr(inner, "jaxpr", inner)
            consts = getattr(inner, "consts", ())
            sub_env = {v: read(a) for v, a in zip(inner_jaxpr.invars, eqn.invars)}
            for v, c in zip(inner_jaxpr.constvars, consts):
                sub_env[v] = ("literal", onp.asarray(c))
            results = _convert(inner_jaxpr, sub_env, counter)
            for v, r in zip(eqn.outvars, results):
                env[v] = r
            continue
        op = _primitive_op(eqn.primitive)
        inputs, constants = [], []
        for slot, atom in enumerate(eqn.invars):
            value = read(atom)
            if value[0] == "literal":
                constants.append((slot, value[1]))
            else:
                inputs.append(value)
        params = dict(eqn.params)
        if constants:
            params[CONSTANTS] = tuple(constants)
        node = Node(op.name, f"{eqn.primitive.name}{next(counter)}", params=params, inputs=inputs,
                    num_outputs=len(eqn.outvars))
        for i, v in enumerate(eqn.outvars):
            env[v] = (node, i)
    return [_as_entry(read(v), counter) for v in jaxpr.outvars]


def _as_entry(value: Any, counter: Any) -> Any:
    if value[0] != "literal":
        return value
    raise MXNetError(f"from_jax: an output of the function is the constant {value[1]!r}; outputs must depend "
                     "on the inputs")
