"""One entry of a HybridBlock's cached op, and the op hook that watches it run.

An entry is the graph traced for one input signature, compiled as one ``jax.jit``
program (or as static segments around its dynamic-shape ops).  ``run_op_hook``
is ``register_op_hook``'s monitor: it evaluates the same graph node by node and
hands every op's outputs (and, with ``monitor_all``, its inputs) to the callback,
named as MXNet 2.0's cached op names them (``node_0_output``, ``node_0_weight``).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import jax

from ..graph.ir import topo_order
from .._ndarray import NDArray
from ..base import MXNetError
from ..dynamic.segments import SegmentedGraph, dynamic_ops
from ..symbol.interpret import graph_function, graph_program, is_random, node_op
from ._weight_layout import weight_program

__all__ = ["CachedGraph", "run_op_hook"]

_serials = itertools.count()  # one per compiled cached-op entry: its tape key


class CachedGraph:
    """The traced graph of one input signature, compiled as one program, or as static segments
    around its dynamic-shape ops."""

    def __init__(self, symbol: Any, data_names: list[str], by_name: dict, multi: Any, training: bool,
                 partition_if_dynamic: bool) -> None:
        # multi: False (one output), True (a tuple of them), or the format of nested outputs
        self.symbol, self.multi, self.training = symbol, multi, training
        self.data_names = list(data_names)
        inputs = symbol.list_inputs()
        self.params = [by_name[n] for n in inputs if n in by_name]
        self.input_names = list(data_names) + [n for n in inputs if n in by_name]
        # in training the program also returns the new auxiliary states (BatchNorm's running stats)
        aux_names = [n for n in symbol.list_auxiliary_states() if n in by_name] if training else []
        self.aux_targets = [by_name[n] for n in aux_names]
        self.n_out = len(symbol._outputs)
        self.random = is_random(symbol._outputs)
        self.serial = next(_serials)
        self.segmented = None
        dynamic = dynamic_ops(symbol._outputs)
        if dynamic:
            if not partition_if_dynamic:
                raise MXNetError(f"hybridize(partition_if_dynamic=False): the graph has dynamic-shape ops "
                                 f"{dynamic}, which cannot be part of one static program; leave "
                                 "partition_if_dynamic=True to run them between compiled segments")
            self.segmented = SegmentedGraph(symbol._outputs, self.input_names, aux_names, training)
            return
        program = graph_program(symbol._outputs, self.input_names, aux_names, training)
        self.compiled = compiled = jax.jit(program)
        # calls not recorded for autograd take convolution weights in the layout they are read in
        # (_weight_layout); None: they run `compiled`
        self.inference = weight_program(program, compiled, symbol._outputs, self.input_names, by_name)
        # what the autograd tape records for a call: one node (the rng key rides along as the last input)
        self.tape_key = ("hybrid", self.serial)
        self.tape_fn = lambda *a: program(a[:-1], a[-1])


def run_op_hook(entry: CachedGraph, inputs: Sequence[NDArray], rng: Any, callback: Callable,
                monitor_all: bool) -> None:
    """Call ``callback(tensor_name, op_name, array)`` for each op of ``entry``'s graph, in order."""
    ops = [node for node in topo_order(entry.symbol._outputs) if not node.is_variable]
    wanted = [(node, k) for node in ops for k in range(node.num_outputs)]
    values = dict(zip(entry.input_names, (x.to_jax() for x in inputs)))
    outs, _ = graph_function(wanted, entry.training)(values, rng)
    computed = {(id(node), k): v for (node, k), v in zip(wanted, outs)}
    for position, node in enumerate(ops):
        name = f"node_{position}"
        if monitor_all:
            slots = list(getattr(node_op(node), "inputs", ()) or ())
            for slot, (source, k) in enumerate(node.inputs):
                value = values[source.name] if source.is_variable else computed[(id(source), k)]
                label = slots[slot] if slot < len(slots) else f"input{slot}"
                callback(f"{name}_{label}", node.op, NDArray._wrap(value))
        for k in range(node.num_outputs):
            suffix = "output" if node.num_outputs == 1 else f"output{k}"
            callback(f"{name}_{suffix}", node.op, NDArray._wrap(computed[(id(node), k)]))
