"""The segment executor: a graph with dynamic-shape ops, run as compiled static segments and eager ops.

XLA needs static shapes, so a graph containing ``boolean_mask``/``nonzero``/``unique``
cannot be one program.  The graph is partitioned (:class:`DynamicShapeProperty`) into
maximal static segments separated by the dynamic ops; segments run in topological
order, each a ``jax.jit`` program (XLA caches one executable per input-shape
signature), each dynamic op on concrete arrays through the ordinary imperative path,
so its output shape is known once it has run and the next segment's shapes follow.

Under ``autograd.record()`` every segment is one tape node (its VJP compiled with it)
and every dynamic op records its own VJP (a mask scatters gradients back to the
selected rows).  A segment downstream of a dynamic op sees new shapes as the data
changes.  Rows a mask selects are therefore padded to a size bucket with the valid
count carried along (:mod:`.buckets`), so such a segment compiles once per bucket
when its ops keep rows apart; a segment whose shapes still never repeat stops
compiling after ``MAX_SIGNATURES`` distinct input signatures and runs eagerly (op by
op).  ``compile_stats()`` reports what happened.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import jax
import numpy as onp

from .. import _config, _tape, autograd
from ..graph.ir import Entry, Node, copy_graph, topo_order
from .._ndarray import NDArray
from .._invoke import invoke, np_class
from ..subgraph import SubgraphProperty, SubgraphSelector, partition, subgraph_inputs
from ..graph.interpret import (CONSTANTS, SUBGRAPH_OP, SubgraphOp, call_params, exactly, graph_program, lower,
                               node_op, run_lowered)
from .buckets import VALID, Padded, input_names, plan, selection

__all__ = ["DynamicShapeProperty", "SegmentedGraph", "dynamic_ops", "has_dynamic_ops", "MAX_SIGNATURES"]

MAX_SIGNATURES = 8  # distinct input signatures a segment compiles before it runs eagerly
_serials = itertools.count()


def _is_dynamic(node: Node) -> bool:
    return not node.is_variable and node.op != SUBGRAPH_OP and node_op(node).dynamic_shape


def dynamic_ops(outputs: list[Entry]) -> list[str]:
    """Names of the dynamic-shape ops in the graph, sorted."""
    return sorted({n.op for n in topo_order(outputs) if _is_dynamic(n)})


def has_dynamic_ops(outputs: list[Entry]) -> bool:
    return any(_is_dynamic(n) for n in topo_order(outputs))


class _StaticSelector(SubgraphSelector):
    def select(self, node: Node) -> bool:
        return not _is_dynamic(node)


class DynamicShapeProperty(SubgraphProperty):
    """The seed's node selector: static nodes form maximal segments, each dynamic node stands alone."""

    name = "dynamic_shape"
    merge_unconnected = True

    def create_selector(self) -> SubgraphSelector:
        return _StaticSelector()


def _compiled(program: Callable, needs_key: bool) -> tuple[Callable, Callable]:
    """``program(inputs, key)`` as a function of positional arrays (the key, when there is one, first),
    and its jitted form."""
    def run(*args: Any) -> tuple:
        return program(args[1:], args[0]) if needs_key else program(args)
    return run, jax.jit(run)


def _aval(x: Any) -> Any:
    return jax.ShapeDtypeStruct(x.shape, x._data.dtype) if isinstance(x, NDArray) else x


class _Segment:
    """One static segment: its compiled functions (at exact shapes, and per pattern of inputs whose rows are
    not all real) and the signatures it has compiled."""

    def __init__(self, node: Node, train: bool) -> None:
        self.node, self.train = node, train
        self.names = subgraph_inputs(node)
        op = SubgraphOp(node, train)
        self.needs_key = op.needs_key
        self.aux = [self.names[k] for k in op.aux_inputs] if train else []
        self.n_out = node.num_outputs
        self.fn, self.jitted = _compiled(graph_program(node.subgraphs[0], self.names, self.aux, train),
                                         self.needs_key)
        self.plans: dict[tuple, Any] = {}
        self.signatures: set = set()
        self.calls = self.eager_calls = self.bucketed_calls = self.in_place_calls = 0
        self.final = False  # set by the graph: no dynamic op reads the outputs' values
        self.key = ("segment", next(_serials))

    def planned(self, pattern: tuple, entries: list) -> tuple | None:
        """(function, jitted function, row axis of each output) running on rows that are not all real, for
        ``pattern``: (input position, row axis, how) of each such input, how being "mask" (a selection left
        in place, the mask is :data:`VALID`), "gather" (a selection gathered padded) or "rows" (padded rows
        from a bucketed segment); ``None`` when some op mixes rows, or when in place the outputs would
        still carry rows."""
        if pattern not in self.plans:
            hows = {self.names[k]: how for k, _, how in pattern}
            in_place = pattern[0][2] == "mask"
            avals = {VALID: _aval(entries[pattern[0][0]].index) if in_place else jax.ShapeDtypeStruct((), "int32")}
            for name, x in zip(self.names, entries):
                how = hows.get(name)
                if how == "gather":
                    avals[name + "/data"] = _aval(x.data)
                    avals[name + "/positions"] = jax.ShapeDtypeStruct(x.positions.shape, x.positions.dtype)
                else:
                    avals[name] = _aval(x.data if how == "mask" else x.array if how == "rows" else x)
            selections = {name for name, how in hows.items() if how == "gather"}
            found = plan(self.node.subgraphs[0], {self.names[k]: axis for k, axis, _ in pattern}, selections,
                         avals, self.train)
            if found is None or (in_place and any(a is not None for a in found[1][:self.n_out])):
                self.plans[pattern] = None
            else:
                outputs, out_axes = found
                program = graph_program(outputs, input_names(self.names, selections), self.aux, self.train)
                self.plans[pattern] = (*_compiled(program, self.needs_key), out_axes[:self.n_out])
        return self.plans[pattern]

    def choose(self, arrays: list, fn: Callable, jitted: Callable, variant: Any = None) -> tuple[Callable, bool]:
        """The function to run for these inputs, and whether it runs eagerly."""
        signature = (variant,) + tuple((tuple(a.shape), a._data.dtype) if isinstance(a, NDArray) else
                                       (tuple(a.shape), a.dtype) if hasattr(a, "shape") else None for a in arrays)
        self.calls += 1
        if signature in self.signatures:
            return jitted, False
        if len(self.signatures) >= MAX_SIGNATURES:
            self.eager_calls += 1
            return fn, True
        self.signatures.add(signature)
        return jitted, False


class SegmentedGraph:
    """Runs ``outputs`` (a graph containing dynamic ops) segment by segment; see the module docstring.

    ``input_names``: the graph variables, in the order arrays are given to ``__call__``;
    ``aux_names``: variables whose new values (BatchNorm's running statistics, in
    training) are returned after the outputs.
    """

    def __init__(self, outputs: list[Entry], input_names: list[str], aux_names: list[str], train: bool) -> None:
        copy = copy_graph(outputs)
        self.outputs = partition(copy, DynamicShapeProperty())
        self.input_names, self.aux_names, self.train = list(input_names), list(aux_names), train
        self.graph = lower(self.outputs)  # graph.recorded's straight-line form, run by its interpreter
        self.plans: dict[int, Any] = {}  # id(node) -> its _Segment, or a dynamic op's (op, params, constants, position)
        self.segments: list[_Segment] = []
        self.pad: dict[int, bool] = {}  # id(mask node) -> False once a consumer cannot take padded rows
        for node, position, _, _ in self.graph.ops:
            if node.op == SUBGRAPH_OP:
                segment = self.plans[id(node)] = _Segment(node, train)
                self.segments.append(segment)
            else:
                op = node_op(node)
                params = call_params(node, op, train)
                self.plans[id(node)] = (op, params, params.pop(CONSTANTS, ()), position)
        read_eagerly = {id(n) for node, _, _, _ in self.graph.ops if type(self.plans[id(node)]) is tuple
                        and not _selects_rows(self.plans[id(node)][0].name, self.plans[id(node)][1])
                        for n, _ in node.inputs}
        for segment in self.segments:  # no dynamic op reads it: under record() its node can wait for backward
            segment.final = id(segment.node) not in read_eagerly

    @_config.with_x64
    def __call__(self, arrays: list[NDArray], rng: Any) -> list[NDArray]:
        values = dict(zip(self.input_names, arrays))
        updates: dict[str, NDArray] = {}
        recording = autograd.is_recording()

        def step(node: Node, position: int, width: int) -> Callable[..., tuple]:
            plan = self.plans[id(node)]
            if type(plan) is tuple:  # a dynamic op: run eagerly
                return lambda *entries: exactly(self._dynamic(node, plan, [_cut(x) for x in entries], rng), width)

            def run_segment(*entries: Any) -> tuple:
                results = self._segment(plan, list(entries), rng, recording)
                updates.update(zip(plan.aux, results[plan.n_out:]))
                return exactly(results[:plan.n_out], width)
            return run_segment
        outs = run_lowered(self.graph, [values[node.name] for node in self.graph.variables], step)
        return [_cut(x) for x in outs] + [updates.get(n, values[n]) for n in self.aux_names]

    def _dynamic(self, node: Node, info: tuple, inputs: list, rng: Any) -> tuple:
        op, params, constants, position = info
        axis = _mask_axis(op.name, params, inputs) if self.pad.get(id(node), True) else None
        if axis is not None:
            selected = selection(inputs[0], inputs[1], axis)
            if selected is not None:
                return (selected,)
        for slot, value in constants:
            inputs.insert(slot, value)
        if op.needs_key:
            inputs.insert(0, np_class()._wrap(jax.random.fold_in(rng, position)))
        out = invoke(op, inputs, params or None)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    def _segment(self, segment: _Segment, entries: list, rng: Any, recording: bool) -> tuple:
        padded = [(k, x) for k, x in enumerate(entries) if isinstance(x, Padded)]
        found = None
        if padded and all(x.data is not None for _, x in padded) and len({id(x.index) for _, x in padded}) == 1:
            pattern = tuple((k, x.axis, "mask") for k, x in padded)  # one mask: try leaving the rows in place
            found = segment.planned(pattern, entries)
        if found is None and padded and len({x.valid for _, x in padded}) == 1:
            pattern = tuple((k, x.axis, "gather" if x.data is not None else "rows") for k, x in padded)
            found = segment.planned(pattern, entries)
            if found is None:  # rows mix in this segment: its mask inputs stop padding
                for k, _ in padded:
                    self.pad[id(segment.node.inputs[k][0])] = False
        if found is not None:
            fn, jitted, out_axes = found
            in_place = pattern[0][2] == "mask"
            inputs = []
            for x in entries:
                if not isinstance(x, Padded):
                    inputs.append(x)
                elif in_place:
                    inputs.append(x.data)
                elif x.data is not None:  # host arrays go to the program as they are (no eager transfer op)
                    inputs.extend((x.data, x.positions))
                else:
                    inputs.append(x.array)
            valid = None if in_place else padded[0][1].valid
            inputs.append(padded[0][1].index if in_place else onp.int32(valid))
            variant = (pattern,)
        else:
            fn, jitted, out_axes = segment.fn, segment.jitted, None
            inputs, variant = [_cut(x) for x in entries], None
        if segment.needs_key:
            inputs.insert(0, jax.random.fold_in(rng, id(segment) % (1 << 30)))
        run, eager = segment.choose(inputs, fn, jitted, variant)
        if recording and any(isinstance(x, NDArray) and x._ag is not None for x in inputs):
            key = segment.key + ((variant,) if variant else ()) + (("eager",) if eager else ())
            out = _tape.record(key, run, inputs, None, "segment", dynamic=eager,
                               defer=segment.final and not eager)
            results = out if isinstance(out, tuple) else (out,)
        else:
            raw = run(*(x.to_jax() if isinstance(x, NDArray) else x for x in inputs))
            results = tuple(np_class()._wrap(o) for o in raw)
        if out_axes is None:
            return results
        if in_place:
            segment.in_place_calls += 1
            return results
        segment.bucketed_calls += 1
        return tuple(Padded(axis, array=r, valid=valid) if axis is not None else r
                     for r, axis in zip(results, list(out_axes) + [None] * (len(results) - len(out_axes))))

    def compile_stats(self) -> dict:
        """Per segment: distinct input signatures compiled, calls, and calls run eagerly."""
        return {"segments": len(self.segments),
                "dynamic_ops": sum(1 for plan in self.plans.values() if type(plan) is tuple),
                "compiled": [len(s.signatures) for s in self.segments],
                "calls": [s.calls for s in self.segments],
                "eager_calls": [s.eager_calls for s in self.segments],
                "bucketed_calls": [s.bucketed_calls for s in self.segments],
                "in_place_calls": [s.in_place_calls for s in self.segments]}


def _cut(x: Any) -> Any:
    return x.cut() if isinstance(x, Padded) else x


def _selects_rows(name: str, params: dict) -> bool:
    """Whether a dynamic op may select rows without reading values (see :func:`_mask_axis`)."""
    return name == "_contrib_boolean_mask" or (name == "_getitem_mask"
                                               and tuple(params.get("key", ())) == (("b", 0),))


def _mask_axis(name: str, params: dict, inputs: list) -> int | None:
    """The axis a row-selecting dynamic op selects along, when it can pad its rows to a bucket:
    ``boolean_mask``, and ``x[mask]`` with one 1-D boolean mask as the whole key."""
    if name == "_contrib_boolean_mask":
        return params.get("axis", 0)
    if (name == "_getitem_mask" and _selects_rows(name, params) and len(inputs) == 2
            and inputs[1].ndim == 1 and inputs[0].ndim >= 1 and inputs[1].shape[0] == inputs[0].shape[0]):
        return 0
    return None
