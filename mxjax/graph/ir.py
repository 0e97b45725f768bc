"""The graph IR shared by deferred compute, Symbol, hybridization and partitioning.

Plain data, no JAX: a :class:`Node` is an op name (``"null"`` for a variable), a
unique name, typed op parameters, string attributes (MXNet's ``__shape__``,
``__lr_mult__``, ... and any user attribute), and input entries ``(node, index)``.
A graph is just its output entries.  This module also writes and reads MXNet's
symbol JSON layout (FORMATS.md section 2); what the attribute strings mean for
each op is the symbol layer's business, passed in as callables.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator

from ..base import MXNetError, encode_attr

__all__ = ["Node", "Entry", "topo_order", "variables", "copy_graph", "graph_to_json", "graph_from_json"]

MXNET_VERSION = 10901  # what the JSON we write claims, so MXNet 1.9.1 loads it without upgrades


class Node:
    """One graph node: a variable (``op == "null"``) or an op application."""

    __slots__ = ("op", "name", "params", "attrs", "inputs", "control_deps", "subgraphs", "num_outputs",
                 "__weakref__")

    def __init__(self, op: str, name: str, params: dict | None = None, attrs: dict | None = None,
                 inputs: list | None = None, num_outputs: int = 1) -> None:
        self.op = op
        self.name = name
        self.params: dict[str, Any] = dict(params or {})       # typed op parameters
        self.attrs: dict[str, str] = dict(attrs or {})         # other attributes, as MXNet strings
        self.inputs: list[Entry] = list(inputs or [])
        self.control_deps: list[Node] = []
        self.subgraphs: list[list[Entry]] = []
        self.num_outputs = num_outputs

    @property
    def is_variable(self) -> bool:
        return self.op == "null"

    def __repr__(self) -> str:
        return f"<Node {self.op} {self.name}>"


Entry = tuple  # (Node, output index)


def topo_order(outputs: Iterable[Entry]) -> list[Node]:
    """Nodes in MXNet's order: post-order DFS from the outputs in order, inputs then control deps."""
    order: list[Node] = []
    seen: set[int] = set()
    for head, _ in outputs:
        if id(head) in seen:
            continue
        stack: list[tuple[Node, Iterator[Node]]] = [(head, _children(head))]
        seen.add(id(head))
        while stack:  # iterative: deep graphs (long RNN unrolls) must not hit the recursion limit
            node, children = stack[-1]
            for child in children:
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, _children(child)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _children(node: Node) -> Iterator[Node]:
    for entry in node.inputs:
        yield entry[0]
    yield from node.control_deps


def variables(outputs: Iterable[Entry]) -> list[Node]:
    """Variable nodes in topological order."""
    return [n for n in topo_order(outputs) if n.is_variable]


def copy_graph(outputs: Iterable[Entry]) -> list[Entry]:
    """The same graph over new nodes (sub-graphs are shared): a copy a pass may rewrite freely."""
    outputs = list(outputs)
    clones: dict[int, Node] = {}
    for node in topo_order(outputs):
        clone = Node(node.op, node.name, node.params, node.attrs, num_outputs=node.num_outputs)
        clone.inputs = [(clones[id(n)], i) for n, i in node.inputs]
        clone.control_deps = [clones[id(n)] for n in node.control_deps]
        clone.subgraphs = node.subgraphs
        clones[id(node)] = clone
    return [(clones[id(n)], i) for n, i in outputs]


# ----------------------------------------------------------------------------- JSON

def graph_to_json(outputs: list[Entry], encode_params: Callable[[Node], dict[str, str]] | None = None,
                  num_outputs: Callable[[Node], int] | None = None,
                  op_name: Callable[[Node], str] | None = None) -> str:
    """MXNet symbol JSON for a graph (2-space indent, sorted attrs, raw UTF-8, as MXNet writes)."""
    return json.dumps(_graph_dict(outputs, encode_params, num_outputs, op_name), indent=2, ensure_ascii=False)


_symbol_class: list = []


def set_symbol_class(cls: type) -> None:
    """Called by ``mxjax.symbol``: the class that wraps output entries (for layers below it)."""
    _symbol_class[:] = [cls]


def symbol_class() -> type:
    if not _symbol_class:
        raise MXNetError("mxjax.symbol is not loaded")
    return _symbol_class[0]


def _graph_dict(outputs: list[Entry], encode_params: Any, num_outputs: Any, op_name: Any = None) -> dict:
    nodes = topo_order(outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    out_nodes, row_ptr = [], [0]
    for node in nodes:
        attrs = dict(node.attrs)
        if not node.is_variable:
            params = encode_params(node) if encode_params else {k: encode_attr(v) for k, v in node.params.items()}
            # a parameter mxjax passes at run time (``_train``: the mode) is no MXNet attribute; MXNet's
            # parameter parser rejects unknown names.  MXNet's hidden attributes are ``__name__``.
            attrs.update({k: v for k, v in params.items() if not (k[0] == "_" and k[1:2] != "_")})
        written = node.op if node.is_variable or op_name is None else op_name(node)
        entry: dict[str, Any] = {"op": written, "name": node.name}
        if attrs:
            entry["attrs"] = {k: attrs[k] for k in sorted(attrs)}
        entry["inputs"] = [[index[id(n)], i, 0] for n, i in node.inputs]
        if node.control_deps:
            entry["control_deps"] = [index[id(n)] for n in node.control_deps]
        if node.subgraphs:
            entry["subgraphs"] = [_graph_dict(sub, encode_params, num_outputs, op_name) for sub in node.subgraphs]
        out_nodes.append(entry)
        row_ptr.append(row_ptr[-1] + (num_outputs(node) if num_outputs else node.num_outputs))
    return {
        "nodes": out_nodes,
        "arg_nodes": [i for i, n in enumerate(nodes) if n.is_variable],
        "node_row_ptr": row_ptr,
        "heads": [[index[id(n)], i, 0] for n, i in outputs],
        "attrs": {"mxnet_version": ["int", MXNET_VERSION]},
    }


def graph_from_json(text: str | dict) -> tuple[list[Entry], int]:
    """Parse MXNet symbol JSON into nodes with raw string attributes; returns (outputs, mxnet_version).

    Accepts the older spellings (``attr``, ``param``, 2-element entries, no
    ``node_row_ptr``); splitting attributes into op parameters and upgrading old
    graphs is left to the caller, which knows the ops.
    """
    data = json.loads(text, strict=False) if isinstance(text, str) else text
    try:
        raw_nodes = data["nodes"]
        heads = data["heads"]
    except (KeyError, TypeError):
        raise MXNetError("symbol JSON: expected an object with 'nodes' and 'heads'") from None
    version = 800
    graph_attrs = data.get("attrs") or {}
    if "mxnet_version" in graph_attrs:
        version = int(graph_attrs["mxnet_version"][1])
    nodes: list[Node] = []
    for i, raw in enumerate(raw_nodes):
        try:
            attrs = {}
            for key in ("param", "attr", "attrs"):  # later spellings win, as in MXNet's reader
                attrs.update({k: str(v) for k, v in (raw.get(key) or {}).items()})
            node = Node(raw["op"], raw["name"], attrs=attrs)
            node.inputs = [(nodes[e[0]], int(e[1])) for e in raw.get("inputs", [])]
            node.control_deps = [nodes[j] for j in raw.get("control_deps", [])]
            node.subgraphs = [graph_from_json(sub)[0] for sub in raw.get("subgraphs", [])]
        except (KeyError, IndexError, TypeError, ValueError) as err:
            raise MXNetError(f"symbol JSON: node {i} is malformed ({type(err).__name__}: {err}); "
                             "inputs must name earlier nodes") from None
        nodes.append(node)
    try:
        outputs = [(nodes[h[0]], int(h[1])) for h in heads]
    except (IndexError, TypeError) as err:
        raise MXNetError(f"symbol JSON: bad heads entry ({err})") from None
    return outputs, version
