"""Static memory planning for a Symbol with known shapes (MXNet's ``PlanMemory`` pass).

The planner simulates a sequential run of the graph (forward, or forward then a
simulated backward) with reference counts and assigns every intermediate value a
storage block:

* **in-place**: an op on the in-place list (element-wise, output of the input's
  shape and dtype) writes over an input whose only remaining consumer it is;
* **free pool**: a block returns to the pool when the last value living in it dies,
  and a later request takes the best-fitting free block (size-aware matching);
* **parallel safety**: a block may pass to a new value only if the new value's
  producer depends (transitively) on every node that touched the block before, so
  two nodes that could run in parallel never share memory — the plan stays valid
  for a dependency engine, not only for the simulated order.

Variables (arguments, auxiliary states), their gradients and the head gradients are
*external*: bound arrays the user owns.  They are reported separately and never
recycled.  XLA plans the compiled program's memory itself; the executor reports
XLA's figures next to these (``Executor.debug_str``).

This module holds the plan and its entry point; the simulated run is built in
``_memory_sim`` and its blocks are allocated in ``_memory_alloc``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import jax.numpy as jnp

from ..graph.ir import Entry, topo_order
from ..base import MXNetValueError, normalize_dtype
from . import infer
from ..graph.interpret import node_op
from ._memory_alloc import _Block, _allocate, _ancestors
from ._memory_sim import INPLACE_OPS, Label, _Graph, _backward, _forward

__all__ = ["MemoryPlan", "plan_memory", "INPLACE_OPS", "MATCH_RANGE"]

# A free block is reused for a request of n bytes if its size lies within [n / MATCH_RANGE,
# n * MATCH_RANGE] (MXNet's MXNET_EXEC_MATCH_RANGE default); a smaller block grows to n.
MATCH_RANGE = 16


@dataclass
class MemoryPlan:
    """The result of :func:`plan_memory`; byte figures cover internal values unless named external."""

    include_backward: bool
    no_sharing_bytes: int            # every internal value in its own buffer
    planned_bytes: int               # sum of the planned blocks
    external_bytes: int              # bound arrays: arguments, aux states, gradients, head gradients
    blocks: list[int]                # block sizes in bytes, by block id
    assignment: dict[Label, int]     # internal value -> block id
    inplace: list[tuple[str, Label]]  # (consumer node, input value it overwrote)
    order: list[str]                 # simulated nodes in execution order
    ops: dict[str, str]              # simulated node -> op ("<op>_backward" for gradients, "grad_sum")
    lifetimes: dict[Label, tuple[int, int]]  # value -> (producing step, last step it is read; len(order) = kept)
    sizes: dict[Label, int]
    producers: dict[Label, str]
    consumers: dict[Label, list[str]]
    external: dict[Label, int]
    _ancestors: dict[str, int] = field(repr=False, default_factory=dict)
    _index: dict[str, int] = field(repr=False, default_factory=dict)

    @property
    def saving(self) -> float:
        """Fraction of the no-sharing bytes the plan saves."""
        return 1.0 - self.planned_bytes / self.no_sharing_bytes if self.no_sharing_bytes else 0.0

    def depends_on(self, node: str, other: str) -> bool:
        """Whether simulated node ``node`` depends (transitively) on node ``other``."""
        return bool(self._ancestors[node] >> self._index[other] & 1)

    def summary(self) -> str:
        what = "forward+backward" if self.include_backward else "forward"
        return "\n".join([
            f"Memory plan ({what}): {len(self.sizes)} internal values in {len(self.blocks)} blocks, "
            f"{len(self.inplace)} in-place",
            f"  no sharing : {_mb(self.no_sharing_bytes)} (each internal value in its own buffer)",
            f"  planned    : {_mb(self.planned_bytes)} ({100 * self.saving:.1f}% saved)",
            f"  external   : {_mb(self.external_bytes)} (bound arguments, auxiliary states"
            + (", gradients, head gradients" if self.include_backward else "") + "; not planned)",
            f"  total      : {_mb(self.no_sharing_bytes + self.external_bytes)} without sharing, "
            f"{_mb(self.planned_bytes + self.external_bytes)} planned"])


def _mb(n: int) -> str:
    return f"{n / 2 ** 20:.3f} MB" if n >= 2 ** 14 else f"{n} B"


def plan_memory(symbol: Any, shapes: dict[str, Any], dtypes: dict[str, Any] | None = None,
                include_backward: bool = False, grad_args: Iterable[str] | None = None,
                match_range: int = MATCH_RANGE) -> MemoryPlan:
    """Plan the storage of a graph's intermediate values for the given input shapes.

    ``symbol`` is a Symbol (or a list of output entries); ``shapes``/``dtypes`` map
    variable names to shapes/dtypes as in ``simple_bind``.  With ``include_backward``
    the plan covers a simulated backward pass too, for gradients of ``grad_args``
    (default: every argument with a floating dtype).
    """
    outputs = list(getattr(symbol, "_outputs", symbol))
    dtypes = {k: normalize_dtype(v) for k, v in (dtypes or {}).items()}
    try:
        avals = infer.infer_avals(outputs, {k: tuple(v) for k, v in shapes.items()}, dtypes)
    except infer._Incomplete as err:
        raise MXNetValueError(f"plan_memory: cannot infer the shapes of {err.args[0]} from {shapes}; "
                              "give more input shapes") from None
    graph = _Graph()
    values = _forward(graph, outputs, avals)
    if include_backward:
        if grad_args is None:
            aux = _aux_names(outputs)
            grad_args = [n.name for n in topo_order(outputs) if n.is_variable and n.name not in aux
                         and jnp.issubdtype(avals[id(n)][0].dtype, jnp.inexact)]
        _backward(graph, outputs, values, set(grad_args))
    anc = _ancestors(graph)
    blocks, where, inplace = _allocate(graph, anc, match_range)
    return _result(graph, anc, blocks, where, inplace, include_backward)


def _aux_names(outputs: list[Entry]) -> set[str]:
    names = set()
    for node in topo_order(outputs):
        if not node.is_variable:
            for slot in node_op(node).aux_inputs:
                if slot < len(node.inputs) and node.inputs[slot][0].is_variable:
                    names.add(node.inputs[slot][0].name)
    return names


def _result(graph: _Graph, anc: list[int], blocks: list[_Block], where: dict, inplace: list,
            include_backward: bool) -> MemoryPlan:
    order = [s.name for s in graph.steps]
    internal = [v for v in graph.values if not v.external]
    end = len(order)
    return MemoryPlan(
        include_backward=include_backward,
        no_sharing_bytes=sum(v.nbytes for v in internal),
        planned_bytes=sum(b.size for b in blocks),
        external_bytes=sum(v.nbytes for v in graph.values if v.external),
        blocks=[b.size for b in blocks],
        assignment={v.label: where[id(v)] for v in internal},
        inplace=inplace,
        order=order,
        ops={st.name: st.op for st in graph.steps},
        lifetimes={v.label: (v.producer, end if v.head else max(v.consumers, default=v.producer))
                   for v in internal},
        sizes={v.label: v.nbytes for v in internal},
        producers={v.label: order[v.producer] for v in internal},
        consumers={v.label: [order[c] for c in v.consumers] for v in internal},
        external={v.label: v.nbytes for v in graph.values if v.external},
        _ancestors={name: anc[i] for i, name in enumerate(order)},
        _index={name: i for i, name in enumerate(order)},
    )
