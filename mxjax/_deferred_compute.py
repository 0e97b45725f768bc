"""Deferred compute (``mx._deferred_compute``): imperative code that records a graph instead of running.

Inside ``context()`` every op adds a node to the graph IR and returns a lazy
array: its shape and dtype come from inference, nothing is computed or
allocated.  A lazy array computes itself (and only what it needs) when a value is
wanted: ``asnumpy``, ``item``, ``wait_to_read``, printing, or use by an op outside
deferred compute.  ``get_symbol`` exports the recorded graph as a Symbol; arrays
become the graph's variables through ``set_variable``.  Ops whose output shape
depends on values (boolean masks, ``nonzero``) run at once, so their outputs are
never lazy, but they are still recorded.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import weakref
from typing import Any, Iterator, Sequence

import jax

from . import _config
from .graph import ir
from .graph.ir import Node, topo_order
from .base import MXNetError
from ._ndarray import NDArray
from ._invoke import (LAZY, default_class as _default_class, infer_outputs, invoke_eager, reset_handler,
                      set_graph_probe, set_handler, wrap_outputs)
from .operator import OpDef
from .operator.naming import json_name, op_for_json_name, scalar_twin

__all__ = ["context", "is_deferred_compute", "set_variable", "get_symbol", "clear"]

CONSTANTS = "__constants__"  # as in mxjax.symbol.interpret: non-array inputs ((slot, value), ...)
_active = contextvars.ContextVar("mxjax_deferred_compute", default=None)
_const_names = itertools.count()


class _Entry:
    """A lazy array's place in the graph, and how to compute it."""

    __slots__ = ("node", "index")

    def __init__(self, node: Node, index: int) -> None:
        self.node, self.index = node, index

    def compute(self) -> Any:
        return _evaluate(self.node)[self.index]


# Values behind the graph: arrays of variable/constant nodes, keys of random nodes, results.
_sources: "weakref.WeakKeyDictionary[Node, NDArray]" = weakref.WeakKeyDictionary()
_keys: "weakref.WeakKeyDictionary[Node, Any]" = weakref.WeakKeyDictionary()
_results: "weakref.WeakKeyDictionary[Node, tuple]" = weakref.WeakKeyDictionary()
_tupled: "weakref.WeakSet[Node]" = weakref.WeakSet()  # nodes whose op returned a tuple, even of one


def _evaluate(target: Node) -> tuple:
    """Compute ``target``'s outputs (and whatever it needs that is not computed yet).

    The pending nodes are replayed as imperative ops: they go into this thread's bulk segment,
    which runs them as one program from the compile cache (``graph.bulk``), as it runs any
    imperative code -- a graph read here compiles once per structure, not once per read.
    """
    values: dict = {}  # (id(node), output) -> its value: an array, lazy until the segment runs
    pending = []
    for node in topo_order([(target, 0)]):
        done = _results.get(node)
        if done is None and node.is_variable:
            source = _sources.get(node)
            if source is None:
                raise MXNetError(f"deferred compute: variable {node.name!r} has no array to compute from")
            done = _results[node] = (source.to_jax(),)
        if done is not None:
            values.update(((id(node), i), v) for i, v in enumerate(done))
            continue
        op = op_for_json_name(node.op)
        params = dict(node.params)
        inputs = [values[(id(n), i)] for n, i in node.inputs]
        for slot, value in params.pop(CONSTANTS, ()):
            inputs.insert(slot, value)
        if op.needs_key:
            inputs.insert(0, _keys[node])
        out = invoke_eager(op, inputs, params, NDArray)
        if isinstance(out, tuple):
            _tupled.add(node)
        outs = out if isinstance(out, tuple) else (out,)
        values.update(((id(node), i), v) for i, v in enumerate(outs))
        pending.append((node, outs))
    for node, outs in pending:
        _results[node] = tuple(o.to_jax() for o in outs)
    return _results[target]


class _Recorder:
    """The dispatch handler of deferred compute: ops become nodes, outputs lazy arrays."""

    def __init__(self) -> None:
        self.variables: list[Node] = []

    def invoke(self, op: OpDef, inputs: Sequence[Any], params: dict | None, out_cls: type | None) -> Any:
        params = dict(params or {})
        key = None
        if op.needs_key:  # callers pass the PRNG key first; the graph node has no key input
            key, inputs = inputs[0], list(inputs[1:])
            key = key.to_jax() if isinstance(key, NDArray) else key
        twin = scalar_twin(op, [None if isinstance(x, NDArray) else x for x in inputs], legacy=False)
        if twin is not None:  # x * 2 is recorded as MXNet's _npi_multiply_scalar, as MXNet 2 exports it
            op, params, array_slot = twin
            inputs = [inputs[array_slot]]
        entries, constants, avals = [], [], []
        for slot, x in enumerate(inputs):
            if isinstance(x, NDArray):
                out_cls = out_cls or type(x)
                entries.append(_entry_of(x))
                avals.append(jax.ShapeDtypeStruct(x._data.shape, x._data.dtype))
            elif x is None and slot >= len(op.inputs) - len(op.optional_inputs) and not op.variadic:
                avals.append(None)
                constants.append((slot, None))
            else:
                constants.append((slot, x))
                avals.append(x)
        if constants:
            params[CONSTANTS] = tuple(constants)
        node = Node(json_name(op), f"{op.name.lower().lstrip('_')}{next(_const_names)}", params=params,
                    inputs=entries)
        if op.needs_key:
            _keys[node] = key
        clean = {k: v for k, v in params.items() if k != CONSTANTS}
        out_cls = out_cls or _default_class()
        if op.dynamic_shape:  # the output shape needs the values: compute now
            outs = _evaluate(node)
            results = wrap_outputs(outs if node in _tupled else outs[0], out_cls)
        else:
            key_aval = [jax.ShapeDtypeStruct((2,), "uint32")] if op.needs_key else []
            results = wrap_outputs(infer_outputs(op, [*key_aval, *avals], clean, inputs), out_cls)
        outs = results if isinstance(results, tuple) else (results,)
        node.num_outputs = len(outs)
        for i, r in enumerate(outs):
            r._dc = _Entry(node, i)
            if not op.dynamic_shape:
                r._var = LAZY
        return results

    def on_write(self, array: NDArray) -> None:
        if array._dc is not None:
            raise MXNetError(
                "deferred compute: in-place operations (x[...] = v, x += v, out=) on arrays recorded by "
                "deferred compute are not supported; compute a new array instead")


def _entry_of(x: NDArray) -> tuple:
    """The graph entry of an input: its recorded entry, or a constant node for a plain array."""
    if x._dc is not None:
        return (x._dc.node, x._dc.index)
    node = Node("null", f"_dc_constant{next(_const_names)}", attrs={"__dc_unbound__": "1"})
    _sources[node] = x
    x._dc = _Entry(node, 0)
    return (node, 0)


# ----------------------------------------------------------------------------- public API

def is_deferred_compute() -> bool:
    return _active.get() is not None


set_graph_probe(is_deferred_compute)  # eager-only shortcuts in _ndarray (indexing windows) must not apply here


@contextlib.contextmanager
def context(state: bool = True) -> Iterator[None]:
    """Scope in which imperative ops are recorded lazily (``state=False`` runs them eagerly)."""
    if not state:
        token = set_handler(None)
        active = _active.set(None)
    else:
        recorder = _Recorder()
        token = set_handler(recorder)
        active = _active.set(recorder)
    try:
        with _config.training(_config.is_training()):
            yield
    finally:
        _active.reset(active)
        reset_handler(token)


def set_variable(arrays: Any, variables: Any) -> None:
    """Make each array the graph input named by the matching variable Symbol."""
    arrays = list(arrays) if isinstance(arrays, (list, tuple)) else [arrays]
    variables = list(variables) if isinstance(variables, (list, tuple)) else [variables]
    if len(arrays) != len(variables):
        raise MXNetError(f"set_variable: {len(arrays)} arrays for {len(variables)} variables")
    recorder = _active.get()
    for array, variable in zip(arrays, variables):
        outputs = getattr(variable, "_outputs", None)
        if not isinstance(array, NDArray) or not outputs or len(outputs) != 1 or not outputs[0][0].is_variable:
            raise MXNetError("set_variable: expected NDArrays and single variable Symbols (mx.sym.var)")
        node = outputs[0][0]
        _sources[node] = array
        array._dc = _Entry(node, 0)
        if recorder is not None:
            recorder.variables.append(node)


def get_symbol(outputs: Any, sym_cls: type | None = None, check_inputs: bool = True) -> Any:
    """The recorded computation of ``outputs`` as a Symbol (a copy of the graph).

    ``check_inputs=False`` allows variables that no output uses (Gluon's unused parameters).
    """
    single = isinstance(outputs, NDArray)
    outputs = [outputs] if single else list(outputs)
    entries = []
    for i, out in enumerate(outputs):
        if not isinstance(out, NDArray) or out._dc is None:
            raise MXNetError(f"get_symbol: output {i} was not computed under deferred compute")
        entries.append((out._dc.node, out._dc.index))
    nodes = topo_order(entries)
    for node in nodes:
        if node.attrs.get("__dc_unbound__"):
            raise MXNetError(
                "get_symbol: an output depends on an array that was not given a variable; call "
                "set_variable(array, mx.sym.var(name)) for every input before using it")
    recorder = _active.get()
    if recorder is not None and check_inputs:
        used = {id(n) for n in nodes}
        unused = [n.name for n in recorder.variables if id(n) not in used]
        if unused:
            raise MXNetError(f"get_symbol: inputs {unused} are not connected to any output")
    cls = sym_cls or ir.symbol_class()
    return cls(entries).__deepcopy__({})


def clear(arrays: Any) -> None:
    """Forget the graph entries of these arrays (they become plain arrays again)."""
    for array in (arrays if isinstance(arrays, (list, tuple)) else [arrays]):
        if isinstance(array, NDArray):
            array.to_jax()
            array._dc = None


