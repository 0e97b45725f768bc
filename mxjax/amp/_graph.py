"""AMP for graphs: a copy of a symbol's graph with ``amp_cast`` / ``amp_multicast`` nodes.

Each op node gets the casts its rule asks for (see ``_policy``); ops no table names run in
float32, as do the nodes the caller excludes by name.  The pass tracks the float dtype each
entry is known to carry (inputs are float32, as in an FP32 model) and adds no cast where the
value already has the wanted dtype; one cast per (entry, dtype) is shared by its consumers.
Auxiliary states (BatchNorm's running statistics) are never cast: the op writes them back.
With ``cast_params_offline`` a parameter read only through casts to one dtype is stored in that
dtype instead (its variable gets ``__dtype__``) and the casts go.
"""
from __future__ import annotations

from typing import Any

from ..graph.ir import Node, topo_order
from ..base import MXNetError, normalize_dtype
from ..serialization import DTYPE_TO_FLAG, FLAG_TO_DTYPE
from ..symbol import Symbol
from ..symbol.interpret import node_op
from ._policy import FP32, FP32_DTYPE, LP16, Policy, Rule, as_float

_AS_FP32 = Rule(FP32)


class _Rewriter:
    def __init__(self, policy: Policy, excluded: set) -> None:
        self.policy = policy
        self.excluded = excluded
        self.copies: dict[int, Node] = {}
        self.known: dict[tuple, Any] = {}   # (id(new node), output) -> float dtype, or None if unknown
        self.casts: dict[tuple, tuple] = {}  # (id(node), output, dtype name) -> the cast's entry

    def rule(self, node: Node) -> Rule:
        if node.name in self.excluded:
            return _AS_FP32
        try:
            op = node_op(node)
        except MXNetError:  # an op mxjax does not know: no table names it
            return _AS_FP32
        return self.policy.rule(op) or _AS_FP32

    def copy_variable(self, node: Node) -> Node:
        new = Node("null", node.name, attrs=dict(node.attrs))
        flag = node.attrs.get("__dtype__")
        dtype = FLAG_TO_DTYPE.get(int(flag)) if flag not in (None, "-1") else FP32_DTYPE
        self.known[(id(new), 0)] = None if dtype is None else as_float(dtype)
        return new

    def cast(self, entry: tuple, dtype: Any) -> tuple:
        node, index = entry
        if self.known.get((id(node), index)) == dtype:
            return entry
        key = (id(node), index, dtype.name)
        if key not in self.casts:
            suffix = f"_{index}" if index else ""
            cast = Node("amp_cast", f"{node.name}{suffix}_amp_cast_{dtype.name}", params={"dtype": dtype.name},
                        inputs=[entry])
            self.known[(id(cast), 0)] = dtype
            self.casts[key] = (cast, 0)
        return self.casts[key]

    def copy_op(self, node: Node) -> Node:
        inputs = [(self.copies[id(n)], i) for n, i in node.inputs]
        rule = self.rule(node)
        try:
            aux = set(node_op(node).aux_inputs)
        except MXNetError:
            aux = set()
        dtypes = [self.known.get((id(n), i)) for n, i in inputs]
        castable = [None if slot in aux else (d if d is not None else FP32_DTYPE)
                    for slot, d in enumerate(dtypes)]
        wanted = rule.input_dtypes(castable, node.params, self.policy.target)
        if rule.kind == "widest" and any(w is not None for w in wanted):
            inputs = self.multicast(node, inputs, aux)
            out_dtype = max((w for w in wanted if w is not None), key=lambda d: d.itemsize)
        else:
            inputs = [e if w is None else self.cast(e, w) for e, w in zip(inputs, wanted)]
            out_dtype = self.output_dtype(rule, node, [self.known.get((id(n), i)) for n, i in inputs], aux)
        new = Node(node.op, node.name, params=dict(node.params), attrs=dict(node.attrs), inputs=inputs,
                   num_outputs=node.num_outputs)
        new.control_deps = [self.copies[id(d)] for d in node.control_deps]
        new.subgraphs = node.subgraphs  # bodies of control-flow ops run as they are
        for i in range(node.num_outputs):
            self.known[(id(new), i)] = out_dtype
        return new

    def multicast(self, node: Node, inputs: list, aux: set) -> list:
        slots = [s for s, _ in enumerate(inputs) if s not in aux]
        group = Node("amp_multicast", f"{node.name}_amp_multicast", params={"num_outputs": len(slots)},
                     inputs=[inputs[s] for s in slots], num_outputs=len(slots))
        out = list(inputs)
        for k, s in enumerate(slots):
            out[s] = (group, k)
        return out

    def output_dtype(self, rule: Rule, node: Node, dtypes: list, aux: set) -> Any:
        if rule.kind == LP16:
            return self.policy.target
        if rule.kind == FP32 or (rule.kind == "conditional" and node.params.get(rule.param) in rule.values):
            return FP32_DTYPE
        seen = {d for s, d in enumerate(dtypes) if s not in aux}
        return seen.pop() if len(seen) == 1 else None

    def run(self, outputs: list) -> list:
        for node in topo_order(outputs):
            self.copies[id(node)] = self.copy_variable(node) if node.is_variable else self.copy_op(node)
        return [(self.copies[id(n)], i) for n, i in outputs]


def _store_params_low(outputs: list, data_names: set) -> list:
    """``cast_params_offline``: parameters read only through one ``amp_cast`` get its dtype."""
    nodes = topo_order(outputs)
    readers: dict[int, list] = {}
    for node in nodes:
        for src, _ in node.inputs:
            readers.setdefault(id(src), []).append(node)
    head_ids = {id(n) for n, _ in outputs}
    replace: dict[int, tuple] = {}
    for var in nodes:
        if not var.is_variable or var.name in data_names or id(var) in head_ids:
            continue
        users = readers.get(id(var), [])
        if not users or any(u.op != "amp_cast" for u in users):
            continue
        dtypes = {u.params["dtype"] for u in users}
        if len(dtypes) != 1:
            continue
        dtype = normalize_dtype(dtypes.pop())
        var.attrs["__dtype__"] = str(DTYPE_TO_FLAG[dtype])
        for cast in users:
            replace[id(cast)] = (var, 0)
    for node in nodes:
        node.inputs = [replace.get(id(src), (src, i)) for src, i in node.inputs]
    return [replace.get(id(n), (n, i)) for n, i in outputs]


def convert_graph(sym: Symbol, policy: Policy, data_names: list, excluded: list,
                  cast_params_offline: bool) -> Symbol:
    """The mixed-precision copy of ``sym`` (``sym`` itself is not changed)."""
    outputs = _Rewriter(policy, set(excluded)).run(sym._outputs)
    if cast_params_offline:
        outputs = _store_params_low(outputs, set(data_names))
    return Symbol(outputs)


def remove_amp_casts(sym: Symbol) -> Symbol:
    """A copy of ``sym`` without its ``amp_cast`` / ``amp_multicast`` nodes (each consumer reads the
    cast's input instead): what ``Symbol.save(remove_amp_cast=True)`` writes in MXNet."""
    copies: dict[int, Node] = {}

    def source(entry: tuple) -> tuple:
        node, index = entry
        while node.op in ("amp_cast", "amp_multicast"):
            node, index = node.inputs[index if node.op == "amp_multicast" else 0]
        return copies[id(node)], index

    for node in topo_order(sym._outputs):
        if node.op in ("amp_cast", "amp_multicast"):
            continue
        new = Node(node.op, node.name, params=dict(node.params), attrs=dict(node.attrs),
                   inputs=[source(e) for e in node.inputs], num_outputs=node.num_outputs)
        new.control_deps = [copies[id(d)] for d in node.control_deps if id(d) in copies]
        new.subgraphs = node.subgraphs
        copies[id(node)] = new
    return Symbol([source(e) for e in sym._outputs])
