"""The partitioner: replace groups of nodes chosen by a :class:`SubgraphProperty` with one node each.

Groups grow from seed nodes through the selector (or, with ``merge_unconnected``,
take every selected node).  A group must not be left and re-entered by a path, or
the contracted graph would have a cycle: each group is split by the number of
times a path from the graph inputs has *left* it -- two members at the same
count cannot have a path between them that goes outside.  For "every static
node" this is exactly the dynamic-shape split: maximal static segments between
dynamic ops.  A group becomes a node (``_CachedOp`` by default) whose
``subgraphs[0]`` holds the members; its inputs are in the order of the
subgraph's variables, which keep the names of graph variables (so auxiliary
updates still name their parameter).
"""
from __future__ import annotations

from typing import Any

from ..graph.ir import Entry, Node, topo_order
from .property import SubgraphProperty

__all__ = ["partition", "find_groups", "subgraph_inputs"]


def find_groups(outputs: list[Entry], prop: SubgraphProperty) -> list[list[Node]]:
    """The groups ``prop`` selects in this graph, each free of outside paths, in topological order."""
    nodes = topo_order(outputs)
    consumers: dict[int, list[Node]] = {id(n): [] for n in nodes}
    for node in nodes:
        for src, _ in node.inputs:
            consumers[id(src)].append(node)
    selector = prop.create_selector()
    raw: list[list[Node]] = []
    if prop.merge_unconnected:
        raw.append(selector.filter([n for n in nodes if not n.is_variable and selector.select(n)]))
    else:
        assigned: set[int] = set()
        for seed in nodes:
            if seed.is_variable or id(seed) in assigned:
                continue
            selector.reset()
            if not selector.select(seed):
                continue
            group, members, queue = [seed], {id(seed)}, [seed]
            while queue:
                cur = queue.pop(0)
                candidates = [(src, selector.select_input) for src, _ in cur.inputs]
                candidates += [(out, selector.select_output) for out in consumers[id(cur)]]
                for other, rule in candidates:
                    if other.is_variable or id(other) in members or id(other) in assigned or not rule(cur, other):
                        continue
                    members.add(id(other))
                    group.append(other)
                    queue.append(other)
            group = selector.filter(group)
            assigned.update(id(n) for n in group)
            raw.append(group)
    position = {id(n): i for i, n in enumerate(nodes)}
    groups = []
    for group in raw:
        for part in _split_acyclic(nodes, {id(n) for n in group}):
            if len(part) >= prop.min_size:
                groups.append(part)
    groups.sort(key=lambda g: position[id(g[0])])
    return groups


def _split_acyclic(nodes: list[Node], members: set[int]) -> list[list[Node]]:
    exits: dict[int, int] = {}
    parts: dict[int, list[Node]] = {}
    for node in nodes:  # topological
        inside = id(node) in members
        level = 0
        for src, _ in node.inputs:
            level = max(level, exits[id(src)] + (1 if id(src) in members and not inside else 0))
        exits[id(node)] = level
        if inside:
            parts.setdefault(level, []).append(node)
    return [parts[k] for k in sorted(parts)]


def subgraph_inputs(node: Node) -> list[str]:
    """Names of a subgraph node's variables, in the order of the node's inputs."""
    return [n.name for n in topo_order(node.subgraphs[0]) if n.is_variable]


def partition(outputs: list[Entry], prop: SubgraphProperty) -> list[Entry]:
    """Contract every group of ``prop`` in place (pass a copy of the graph); returns the new outputs."""
    groups = find_groups(outputs, prop)
    if not groups:
        return list(outputs)
    member_of = {id(n): g for g, group in enumerate(groups) for n in group}
    nodes = topo_order(outputs)
    used_outside: dict[int, list[Entry]] = {g: [] for g in range(len(groups))}
    seen: set[tuple] = set()

    def note(src: Node, index: int, reader_group: Any) -> None:
        g = member_of.get(id(src))
        if g is not None and g != reader_group and (id(src), index) not in seen:
            seen.add((id(src), index))
            used_outside[g].append((src, index))
    for node in nodes:
        for src, index in node.inputs:
            note(src, index, member_of.get(id(node)))
    for src, index in outputs:
        note(src, index, None)
    replaced: dict[tuple, Entry] = {}
    new_nodes = []
    for g, group in enumerate(groups):
        new_nodes.append(_contract(group, used_outside[g], prop, g, replaced))
    for node in nodes + new_nodes:
        if id(node) not in member_of:
            node.inputs = [replaced.get((id(src), i), (src, i)) for src, i in node.inputs]
    return [replaced.get((id(src), i), (src, i)) for src, i in outputs]


def _contract(group: list[Node], outs: list[Entry], prop: SubgraphProperty, g: int, replaced: dict) -> Node:
    """One node standing for ``group``: members copied into its subgraph, outside inputs as variables."""
    members = {id(n) for n in group}
    copies: dict[int, Node] = {}
    variables: dict[tuple, Node] = {}
    sources: dict[int, Entry] = {}
    for node in group:
        inputs = []
        for src, index in node.inputs:
            if id(src) in members:
                inputs.append((copies[id(src)], index))
                continue
            var = variables.get((id(src), index))
            if var is None:
                name = src.name if src.is_variable else f"{src.name}_output{index}"
                var = Node("null", name, attrs=dict(src.attrs) if src.is_variable else None)
                variables[(id(src), index)] = var
                sources[id(var)] = (src, index)
            inputs.append((var, 0))
        copy = Node(node.op, node.name, params=node.params, attrs=node.attrs, inputs=inputs,
                    num_outputs=node.num_outputs)
        copy.subgraphs = node.subgraphs
        copies[id(node)] = copy
    sub_outputs = [(copies[id(src)], index) for src, index in outs]
    order = [n for n in topo_order(sub_outputs) if n.is_variable]
    node = Node(prop.op_name, f"{prop.name}_subgraph{g}", attrs=prop.subgraph_attrs(group, g),
                inputs=[sources[id(v)] for v in order], num_outputs=len(sub_outputs))
    node.subgraphs = [sub_outputs]
    for k, (src, index) in enumerate(outs):
        replaced[(id(src), index)] = (node, k)
    return node
