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
changes: after ``max_signatures`` distinct input signatures it stops compiling and
runs eagerly (op by op), so a stream of never-repeating shapes cannot compile
without bound.  ``compile_stats()`` reports what happened.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable

import jax

from .. import _tape, autograd
from .._ir import Entry, Node, topo_order
from ..ndarray import NDArray, invoke, np_class
from ..subgraph import SubgraphProperty, SubgraphSelector, partition, subgraph_inputs
from ..symbol.interpret import CONSTANTS, SUBGRAPH_OP, SubgraphOp, call_params, graph_program, node_op

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


class _Segment:
    """One static segment: its compiled function and the signatures it has seen."""

    def __init__(self, node: Node, train: bool) -> None:
        self.node = node
        self.names = subgraph_inputs(node)
        op = SubgraphOp(node, train)
        self.needs_key = op.needs_key
        self.aux = [self.names[k] for k in op.aux_inputs] if train else []
        self.n_out = node.num_outputs
        program = graph_program(node.subgraphs[0], self.names, self.aux, train)
        needs_key = self.needs_key

        def run(*args: Any) -> tuple:  # the key, when there is one, comes first
            return program(args[1:], args[0]) if needs_key else program(args)
        self.fn: Callable = run
        self.jitted = jax.jit(run)
        self.signatures: set = set()
        self.calls = self.eager_calls = 0
        self.key = ("segment", next(_serials))

    def choose(self, arrays: list) -> tuple[Callable, bool]:
        """The function to run for these inputs, and whether it runs eagerly."""
        signature = tuple((tuple(a.shape), a._data.dtype) if isinstance(a, NDArray) else None for a in arrays)
        self.calls += 1
        if signature in self.signatures:
            return self.jitted, False
        if len(self.signatures) >= MAX_SIGNATURES:
            self.eager_calls += 1
            return self.fn, True
        self.signatures.add(signature)
        return self.jitted, False


class SegmentedGraph:
    """Runs ``outputs`` (a graph containing dynamic ops) segment by segment; see the module docstring.

    ``input_names``: the graph variables, in the order arrays are given to ``__call__``;
    ``aux_names``: variables whose new values (BatchNorm's running statistics, in
    training) are returned after the outputs.
    """

    def __init__(self, outputs: list[Entry], input_names: list[str], aux_names: list[str], train: bool) -> None:
        from ..symbol import Symbol
        copy = Symbol(list(outputs)).__deepcopy__({})._outputs
        self.outputs = partition(copy, DynamicShapeProperty())
        self.input_names, self.aux_names, self.train = list(input_names), list(aux_names), train
        self.steps: list[tuple] = []
        self.segments: list[_Segment] = []
        for position, node in enumerate(topo_order(self.outputs)):
            if node.is_variable:
                self.steps.append(("variable", node, None))
            elif node.op == SUBGRAPH_OP:
                segment = _Segment(node, train)
                self.segments.append(segment)
                self.steps.append(("segment", node, segment))
            else:
                op = node_op(node)
                params = call_params(node, op, train)
                constants = params.pop(CONSTANTS, ())
                self.steps.append(("dynamic", node, (op, params, constants, position)))

    def __call__(self, arrays: list[NDArray], rng: Any) -> list[NDArray]:
        values = dict(zip(self.input_names, arrays))
        env: dict[int, tuple] = {}
        updates: dict[str, NDArray] = {}
        recording = autograd.is_recording()
        for kind, node, info in self.steps:
            if kind == "variable":
                env[id(node)] = (values[node.name],)
                continue
            inputs = [env[id(n)][i] for n, i in node.inputs]
            if kind == "dynamic":
                op, params, constants, position = info
                for slot, value in constants:
                    inputs.insert(slot, value)
                if op.needs_key:
                    inputs.insert(0, np_class()._wrap(jax.random.fold_in(rng, position)))
                out = invoke(op, inputs, params or None)
                env[id(node)] = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                continue
            segment: _Segment = info
            if segment.needs_key:
                inputs.insert(0, jax.random.fold_in(rng, id(segment) % (1 << 30)))
            fn, eager = segment.choose(inputs)
            if recording and any(isinstance(x, NDArray) and x._ag is not None for x in inputs):
                out = _tape.record(segment.key if not eager else (*segment.key, "eager"), fn, inputs, None,
                                   "segment", dynamic=eager)
                results = out if isinstance(out, tuple) else (out,)
            else:
                raw = fn(*(x.to_jax() if isinstance(x, NDArray) else x for x in inputs))
                results = tuple(np_class()._wrap(o) for o in raw)
            env[id(node)] = results[:segment.n_out]
            updates.update(zip(segment.aux, results[segment.n_out:]))
        outs = [env[id(n)][i] for n, i in self.outputs]
        return outs + [updates.get(n, values[n]) for n in self.aux_names]

    def compile_stats(self) -> dict:
        """Per segment: distinct input signatures compiled, calls, and calls run eagerly."""
        return {"segments": len(self.segments),
                "dynamic_ops": sum(1 for kind, _, _ in self.steps if kind == "dynamic"),
                "compiled": [len(s.signatures) for s in self.segments],
                "calls": [s.calls for s in self.segments],
                "eager_calls": [s.eager_calls for s in self.segments]}
