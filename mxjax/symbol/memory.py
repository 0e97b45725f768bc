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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any, Iterable

import jax.numpy as jnp
import numpy as onp

from ..graph.ir import Entry, topo_order
from ..base import MXNetValueError, normalize_dtype
from ..operator import elemwise, legacy
from . import infer
from ..graph.interpret import node_op

__all__ = ["MemoryPlan", "plan_memory", "INPLACE_OPS", "MATCH_RANGE"]

# Ops whose output may overwrite an input of the same shape and dtype: each output
# element depends only on the same element of the inputs (NumPy element-wise tables,
# MXNet's scalar twins, activations).  Dropout is element-wise given its mask.
# Normalizations (BatchNorm...) and softmax read whole rows: kept off, as MXNet does.
INPLACE_OPS = frozenset(
    [*elemwise._FLOAT_UNARY, *elemwise._SAME_UNARY, *elemwise._BINARY, *elemwise._FLOAT_BINARY,
     *legacy._SCALAR, "round", "clip", "nan_to_num",
     "Activation", "relu", "sigmoid", "log_sigmoid", "softsign", "mish", "LeakyReLU", "Dropout"])

# A free block is reused for a request of n bytes if its size lies within [n / MATCH_RANGE,
# n * MATCH_RANGE] (MXNet's MXNET_EXEC_MATCH_RANGE default); a smaller block grows to n.
MATCH_RANGE = 16

# What an op's gradient reads besides the output gradients, from MXNet's FGradient
# declarations (ElemwiseGradUseNone / UseIn / UseOut): (input slots or "all", reads outputs).
# Ops not listed are assumed to read all their inputs and outputs (conservative).
_NONE, _IN, _OUT = ((), False), ("all", False), ((), True)
_GRAD_READS: dict[str, tuple] = {
    **{name: _NONE for name in ("add", "subtract", "negative", "positive", "_plus_scalar", "_minus_scalar",
                                "_rminus_scalar", "_mul_scalar", "_div_scalar", "Flatten", "Reshape", "reshape",
                                "transpose", "expand_dims", "squeeze", "copy", "Concat", "_legacy_sum",
                                "_legacy_mean", "sum", "mean", "MakeLoss")},
    **{name: _IN for name in ("FullyConnected", "Convolution", "Deconvolution", "multiply", "true_divide",
                              "dot", "_legacy_dot", "batch_dot", "BatchNorm", "LayerNorm", "maximum",
                              "minimum", "square", "log", "sin", "cos")},
    **{name: _OUT for name in ("relu", "sigmoid", "tanh", "exp", "sqrt", "softmax", "log_softmax",
                               "Dropout")},
    "pick": ((1,), False), "Embedding": ((0,), False), "SoftmaxOutput": ((1,), True),
}
_ACT_USES_OUTPUT = ("relu", "sigmoid", "tanh", "softrelu")


def _grad_reads(op_name: str, params: dict) -> tuple:
    if op_name == "Activation":
        return _OUT if params.get("act_type", "relu") in _ACT_USES_OUTPUT else _IN
    return _GRAD_READS.get(op_name, ("all", True))


Label = tuple  # (node name, output index)


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


# ----------------------------------------------------------------------------- simulated graph

class _Value:
    __slots__ = ("label", "nbytes", "shape", "dtype", "external", "producer", "consumers", "head")

    def __init__(self, label: Label, aval: Any, external: bool, producer: int | None) -> None:
        self.label = label
        self.shape, self.dtype = tuple(aval.shape), onp.dtype(aval.dtype)
        self.nbytes = int(prod(self.shape)) * self.dtype.itemsize
        self.external, self.producer = external, producer
        self.consumers: list[int] = []
        self.head = False


class _Step:
    __slots__ = ("name", "op", "inputs", "outputs", "inplace", "deps")

    def __init__(self, name: str, op: str) -> None:
        self.name, self.op = name, op
        self.inputs: list[_Value] = []
        self.outputs: list[_Value] = []
        self.inplace: list[tuple[int, int]] = []  # (input position, output position) allowed to share
        self.deps: list[int] = []                 # extra dependencies (control deps)


class _Graph:
    def __init__(self) -> None:
        self.steps: list[_Step] = []
        self.values: list[_Value] = []
        self._names: set[str] = set()

    def step(self, name: str, op: str) -> tuple[int, _Step]:
        unique, k = name, 1
        while unique in self._names:  # labels must be unique even if node names repeat
            unique, k = f"{name}#{k}", k + 1
        self._names.add(unique)
        self.steps.append(_Step(unique, op))
        return len(self.steps) - 1, self.steps[-1]

    def value(self, label: Label, aval: Any, external: bool, producer: int | None) -> _Value:
        v = _Value(label, aval, external, producer)
        self.values.append(v)
        if producer is not None:
            self.steps[producer].outputs.append(v)
        return v

    def read(self, index: int, v: _Value) -> None:
        self.steps[index].inputs.append(v)
        if index not in v.consumers:
            v.consumers.append(index)


def _inplace_pairs(step: _Step, allowed: bool) -> None:
    if not allowed or not step.outputs:
        return
    out = step.outputs[0]
    for k, v in enumerate(step.inputs):
        if v.shape == out.shape and v.dtype == out.dtype:
            step.inplace.append((k, 0))


def _forward(graph: _Graph, outputs: list[Entry], avals: dict) -> dict[tuple[int, int], _Value]:
    values: dict[tuple[int, int], _Value] = {}
    steps_of: dict[int, int] = {}
    for node in topo_order(outputs):
        if node.is_variable:
            values[(id(node), 0)] = graph.value((node.name, 0), avals[id(node)][0], True, None)
            continue
        index, step = graph.step(node.name, node_op(node).name)
        steps_of[id(node)] = index
        for n, i in node.inputs:
            graph.read(index, values[(id(n), i)])
        step.deps = [steps_of[id(c)] for c in node.control_deps if id(c) in steps_of]
        for i, aval in enumerate(avals[id(node)]):
            values[(id(node), i)] = graph.value((step.name, i), aval, False, index)
        _inplace_pairs(step, node_op(node).name in INPLACE_OPS)
    for n, i in outputs:
        values[(id(n), i)].head = True
    return values


def _backward(graph: _Graph, outputs: list[Entry], values: dict, grad_args: set[str]) -> None:
    """Append a simulated backward: one gradient node per forward op, gradient sums where values fan out."""
    nodes = topo_order(outputs)
    outs_of: dict[int, list[tuple[int, int]]] = {}
    for key in values:
        outs_of.setdefault(key[0], []).append(key)
    needs: dict[tuple[int, int], bool] = {}
    for node in nodes:
        if node.is_variable:
            needs[(id(node), 0)] = node.name in grad_args
            continue
        any_in = node_op(node).differentiable and any(needs[(id(n), i)] for n, i in node.inputs)
        for key in outs_of[id(node)]:
            needs[key] = any_in and jnp.issubdtype(values[key].dtype, jnp.inexact)
    # which values receive gradients, and how many partial gradients each will get
    receives = {key: False for key in values}
    expected: dict[tuple[int, int], int] = {key: 0 for key in values}
    for n, i in outputs:
        if needs[(id(n), i)]:
            receives[(id(n), i)] = True
            expected[(id(n), i)] += 1
    has_grad: dict[int, bool] = {}
    for node in reversed(nodes):
        if node.is_variable:
            continue
        has_grad[id(node)] = (any(receives[k] for k in outs_of[id(node)])
                              and any(needs[(id(n), i)] for n, i in node.inputs))
        if has_grad[id(node)]:
            for n, i in node.inputs:
                if needs[(id(n), i)]:
                    receives[(id(n), i)] = True
                    expected[(id(n), i)] += 1
    partials: dict[tuple[int, int], list[_Value]] = {key: [] for key in values}
    grads: dict[tuple[int, int], _Value] = {}
    for head_index, (n, i) in enumerate(outputs):
        if needs[(id(n), i)]:
            partials[(id(n), i)].append(graph.value((f"head_grad{head_index}", 0), _aval(values[(id(n), i)]),
                                                    True, None))
    _gather = _GradSums(graph, values, expected, partials, grads)
    for key in list(values):  # heads nothing else reads: their gradient is the head gradient itself
        _gather.maybe_finish(key)
    for node in reversed(nodes):
        if node.is_variable or not has_grad[id(node)]:
            continue
        op = node_op(node)
        index, step = graph.step(f"{node.name}_backward", f"{op.name}_backward")
        out_keys = outs_of[id(node)]
        head_grads = [grads[k] for k in out_keys if k in grads]
        for g in head_grads:
            graph.read(index, g)
        slots, reads_out = _grad_reads(op.name, node.params)
        for slot, (n, i) in enumerate(node.inputs):
            if slots == "all" or slot in slots:
                graph.read(index, values[(id(n), i)])
        if reads_out:
            for k in out_keys:
                graph.read(index, values[k])
        for slot, (n, i) in enumerate(node.inputs):
            key = (id(n), i)
            if not needs[key]:
                continue
            final = n.is_variable and expected[key] == 1
            partials[key].append(graph.value((step.name, slot), _aval(values[key]), final, index))
        # element-wise gradients may overwrite the output gradient they came from
        if op.name in INPLACE_OPS and head_grads:
            g = head_grads[0]
            for j, v in enumerate(step.outputs):
                if v.shape == g.shape and v.dtype == g.dtype and not v.external:
                    step.inplace.append((0, j))
        for n, i in node.inputs:
            _gather.maybe_finish((id(n), i))


def _aval(v: _Value) -> Any:
    return infer.Aval(v.shape, v.dtype)


class _GradSums:
    """Sums partial gradients once the last one is produced (MXNet's gradient aggregation)."""

    def __init__(self, graph: _Graph, values: dict, expected: dict, partials: dict, grads: dict) -> None:
        self.graph, self.values, self.expected, self.partials, self.grads = graph, values, expected, partials, grads

    def maybe_finish(self, key: tuple[int, int]) -> None:
        parts = self.partials[key]
        if key in self.grads or not parts or len(parts) < self.expected[key]:
            return
        if len(parts) == 1:
            self.grads[key] = parts[0]
            return
        v = self.values[key]
        index, step = self.graph.step(f"{v.label[0]}_{v.label[1]}_grad_sum", "grad_sum")
        for p in parts:
            self.graph.read(index, p)
        self.grads[key] = self.graph.value((step.name, 0), _aval(v), v.external, index)
        if not v.external and not parts[0].external:
            step.inplace.append((0, 0))


# ----------------------------------------------------------------------------- allocation

class _Block:
    __slots__ = ("bid", "size", "live", "users")

    def __init__(self, bid: int, size: int) -> None:
        self.bid, self.size, self.live, self.users = bid, size, 0, 0


def _ancestors(graph: _Graph) -> list[int]:
    anc: list[int] = []
    for index, step in enumerate(graph.steps):
        bits = 0
        for p in [v.producer for v in step.inputs if v.producer is not None] + step.deps:
            bits |= anc[p] | (1 << p)
        anc.append(bits)
    return anc


def _best_fit(free: list[_Block], need: int, allowed: int, match_range: int) -> _Block | None:
    fits = [b for b in free if not b.users & ~allowed and need <= b.size <= need * match_range]
    if fits:
        return min(fits, key=lambda b: b.size)
    smaller = [b for b in free if not b.users & ~allowed and b.size < need and b.size * match_range >= need]
    return max(smaller, key=lambda b: b.size) if smaller else None


def _allocate(graph: _Graph, anc: list[int], match_range: int) -> tuple[list[_Block], dict[int, int], list]:
    refs = {id(v): len(v.consumers) + (1 if v.head else 0) for v in graph.values}
    blocks: list[_Block] = []
    where: dict[int, int] = {}   # id(value) -> block id
    free: list[_Block] = []
    inplace: list[tuple[str, Label]] = []
    for index, step in enumerate(graph.steps):
        me = 1 << index
        taken: set[int] = set()
        for j, v in enumerate(step.outputs):
            if v.external:
                continue
            block_id = None
            for k, jj in step.inplace:
                src = step.inputs[k]
                if jj != j or src.external or src.head or refs[id(src)] != 1 or where[id(src)] in taken:
                    continue
                block = blocks[where[id(src)]]
                if block.live == 1 and not block.users & ~(anc[index] | me):
                    block_id = where[id(src)]
                    inplace.append((step.name, src.label))
                    break
            if block_id is None:
                block = _best_fit(free, v.nbytes, anc[index], match_range)
                if block is None:
                    block = _Block(len(blocks), v.nbytes)
                    blocks.append(block)
                else:
                    free.remove(block)
                    block.size = max(block.size, v.nbytes)
                block_id = block.bid
            where[id(v)] = block_id
            taken.add(block_id)
            blocks[block_id].live += 1
            blocks[block_id].users |= me
        seen: set[int] = set()
        for v in step.inputs:
            if v.external or id(v) in seen:
                continue
            seen.add(id(v))
            block = blocks[where[id(v)]]
            block.users |= me
            refs[id(v)] -= 1
            if refs[id(v)] == 0:
                _release(block, free)
        for v in step.outputs:
            if not v.external and refs[id(v)] == 0:  # an output nothing reads dies at once
                _release(blocks[where[id(v)]], free)
    return blocks, where, inplace


def _release(block: _Block, free: list[_Block]) -> None:
    block.live -= 1
    if block.live == 0:
        free.append(block)


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
