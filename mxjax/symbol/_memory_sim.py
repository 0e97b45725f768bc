"""The simulated run the memory planner allocates over, and the op facts it relies on.

``_forward``/``_backward`` turn a graph into a sequence of steps reading and producing
sized values (a simulated backward adds one gradient step per op and gradient sums);
``INPLACE_OPS`` and ``_grad_reads`` say which ops may overwrite an input and what each
gradient reads.  Kept apart from ``memory.py`` (the plan and its entry point) and
``_memory_alloc`` (the blocks), which consume this run.
"""
from __future__ import annotations

from math import prod
from typing import Any

import jax.numpy as jnp
import numpy as onp

from ..graph.ir import Entry, topo_order
from ..operator import elemwise, legacy
from . import infer
from ..graph.interpret import node_op

# Ops whose output may overwrite an input of the same shape and dtype: each output
# element depends only on the same element of the inputs (NumPy element-wise tables,
# MXNet's scalar twins, activations).  Dropout is element-wise given its mask.
# Normalizations (BatchNorm...) and softmax read whole rows: kept off, as MXNet does.
INPLACE_OPS = frozenset(
    [*elemwise._FLOAT_UNARY, *elemwise._SAME_UNARY, *elemwise._BINARY, *elemwise._FLOAT_BINARY,
     *legacy._SCALAR, "round", "clip", "nan_to_num",
     "Activation", "relu", "sigmoid", "log_sigmoid", "softsign", "mish", "LeakyReLU", "Dropout"])

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
