"""Shape and dtype inference over a graph, node by node with ``jax.eval_shape``.

Forward inference comes from each op's own compute function.  MXNet also infers
the shapes of parameter inputs (a FullyConnected weight from the data shape and
``num_hidden``): those ops say how in their ``param_shapes`` rule.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as onp

from .. import _config
from ..graph.ir import Entry, Node, topo_order
from ..base import MXNetError, decode_attr, normalize_dtype
from ..serialization import FLAG_TO_DTYPE  # the type-flag table of FORMATS.md 1.4
from ..subgraph import subgraph_inputs
from ..graph.shape_rules import is_deferred_creation, resolved_creation_shape
from ..graph.interpret import CONSTANTS, SUBGRAPH_OP, call_params, node_op

Aval = jax.ShapeDtypeStruct


def variable_aval(node: Node, shape: Any = None, dtype: Any = None) -> Aval | None:
    """A variable's aval from explicit values or its ``__shape__``/``__dtype__`` attributes."""
    if shape is None and "__shape__" in node.attrs:
        shape = decode_attr(node.attrs["__shape__"])
        if shape is not None and any(int(d) <= 0 for d in shape):  # 0/-1 mark unknown dims
            shape = None
    if dtype is None and "__dtype__" in node.attrs:
        dtype = _dtype_attr(node.attrs["__dtype__"])
    if shape is None:
        return None
    return Aval(tuple(int(d) for d in shape), normalize_dtype(dtype) or onp.dtype(onp.float32))


def _dtype_attr(text: str) -> Any:
    value = decode_attr(text)
    return FLAG_TO_DTYPE.get(value, None) if isinstance(value, int) else value


@_config.with_x64
def infer_avals(outputs: list[Entry], shapes: dict[str, Any], dtypes: dict[str, Any],
                partial: bool = False) -> dict[int, list]:
    """``{id(node): [aval or None per output]}`` for every node; variables filled in where rules allow."""
    avals: dict[int, list] = {}
    nodes = topo_order(outputs)
    for node in nodes:
        if node.is_variable:
            avals[id(node)] = [variable_aval(node, shapes.get(node.name), dtypes.get(node.name))]
    for node in nodes:
        if node.is_variable:
            continue
        if node.op == SUBGRAPH_OP:
            avals[id(node)] = _subgraph_outputs(node, [avals[id(n)][i] for n, i in node.inputs], avals, partial)
            continue
        op = node_op(node)
        ins = [avals[id(n)][i] for n, i in node.inputs]
        if op.param_shapes is not None:  # 1.x zeros((L*D, 0, H)) feeding it: its rule gives the 0s
            ins = [None if n is not node and is_deferred_creation(n) else a
                   for (n, _), a in zip(node.inputs, ins)]
        if any(a is None for a in ins) and op.param_shapes is not None and ins and ins[0] is not None:
            ins = _fill_inputs(node, op, ins, avals)
        if any(a is None for a in ins):
            if not partial:
                missing = [n.name for (n, i), a in zip(node.inputs, ins) if a is None]
                raise _Incomplete(missing)
            avals[id(node)] = [None] * max(1, op.count_outputs(node.params))
            continue
        avals[id(node)] = _node_outputs(node, op, ins)
    return avals


def _subgraph_outputs(node: Node, ins: list, avals: dict, partial: bool) -> list:
    """A partitioned group's output avals, by inference inside it; parameter shapes it infers
    (Dense weights from the data) are copied back to the graph's variables."""
    names = subgraph_inputs(node)
    sub = node.subgraphs[0]
    inner = infer_avals(sub, {n: a.shape for n, a in zip(names, ins) if a is not None},
                        {n: a.dtype for n, a in zip(names, ins) if a is not None}, partial)
    variables = {n.name: n for n in topo_order(sub) if n.is_variable}
    for (source, _), name, aval in zip(node.inputs, names, ins):
        filled = inner[id(variables[name])][0]
        if aval is None and source.is_variable and filled is not None:
            avals[id(source)] = [filled]
    return [inner[id(n)][i] for n, i in sub]


class _Incomplete(Exception):
    """Some input shapes are unknown (infer_shape then returns Nones, as MXNet does)."""


def _fill_inputs(node: Node, op: Any, ins: list, avals: dict) -> list:
    params = dict(node.params)
    try:
        rule = op.param_shapes(list(a.shape if a is not None else None for a in ins), params)
    except (KeyError, TypeError, IndexError, ZeroDivisionError) as err:
        raise MXNetError(f"infer_shape: cannot infer the parameter shapes of {node.name} ({op.name}) "
                         f"from data shape {ins[0].shape}: {err}") from None
    for slot, shape in rule.items():
        if slot < len(ins) and ins[slot] is None:
            source, index = node.inputs[slot]
            if source.is_variable:
                aval = Aval(tuple(int(d) for d in shape), ins[0].dtype)
                avals[id(source)] = [aval]
                ins[slot] = aval
            elif is_deferred_creation(source):
                aval = Aval(resolved_creation_shape(source, tuple(shape)), avals[id(source)][0].dtype)
                avals[id(source)] = [aval]
                ins[slot] = aval
    return ins


def _op_args(node: Node, op: Any, ins: list) -> tuple[list, dict]:
    """The op's call arguments for input avals: constants back in their slots, a key aval first."""
    params = call_params(node, op, False)
    args = list(ins)
    for slot, value in params.pop(CONSTANTS, ()):
        args.insert(slot, value)
    if op.needs_key:
        args.insert(0, Aval((2,), onp.dtype(onp.uint32)))
    return args, params


def _node_outputs(node: Node, op: Any, ins: list) -> list:
    args, params = _op_args(node, op, ins)
    try:
        out = op.eval_shape(*args, **params)
    except MXNetError as err:
        raise MXNetError(f"Error in operator {node.name}: {err}") from None
    except Exception as err:
        shapes = ", ".join(f"{n.name}{list(a.shape)}" for (n, _), a in zip(node.inputs, ins))
        message = str(err).split("\n")[0]
        raise MXNetError(f"Error in operator {node.name} ({op.name}): inconsistent input shapes "
                         f"{shapes}: {message}") from None
    return list(out) if isinstance(out, (tuple, list)) else [out]


@_config.with_x64
def propagate_dtypes(outputs: list[Entry], dtypes: dict[str, Any]) -> dict[tuple, Any]:
    """Dtypes without shapes: ``{(id(node), index): dtype}``, MXNet's same-type rule for most ops."""
    types: dict[tuple, Any] = {}
    nodes = topo_order(outputs)
    for node in nodes:
        if node.is_variable:
            given = dtypes.get(node.name) or (
                _dtype_attr(node.attrs["__dtype__"]) if "__dtype__" in node.attrs else None)
            if given is not None:
                types[(id(node), 0)] = onp.dtype(given)
    for node in nodes:
        if node.is_variable:
            continue
        op = node_op(node)
        known = [types.get((id(n), i)) for n, i in node.inputs]
        first = next((t for t in known if t is not None), onp.dtype(onp.float32))
        for slot, ((source, index), t) in enumerate(zip(node.inputs, known)):
            if t is None and source.is_variable:  # untyped parameters follow the data...
                # ...except normalization statistics and scales, which MXNet keeps in float32
                keep32 = op.aux_inputs and slot > 0
                types[(id(source), index)] = onp.dtype(onp.float32) if keep32 else first
                known[slot] = types[(id(source), index)]
        outs = _probe_dtypes(node, op, known)
        if outs is None:
            out = node.params.get("dtype")
            out = onp.dtype(normalize_dtype(out)) if out not in (None, "None") else first
            outs = [out] * max(1, node.num_outputs)
        for i, t in enumerate(outs):
            types[(id(node), i)] = t
    return types


def _probe_dtypes(node: Node, op: Any, dtypes: list) -> list | None:
    """Output dtypes from the op itself, evaluated on small stand-in shapes (None if none fits)."""
    for rank in (1, 2, 4, 3):
        args, params = _op_args(node, op, [Aval((2,) * rank, t) for t in dtypes])
        try:
            out = op.eval_shape(*args, **params)
        except Exception:
            continue
        return [onp.dtype(o.dtype) for o in (out if isinstance(out, (tuple, list)) else [out])]
    return None
