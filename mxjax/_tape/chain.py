"""The backward of nodes that ran with their VJPs (after a read before ``backward``) as ONE
program: every node's VJP applied in reverse recording order, the cotangents routed between
them inside it.  Node by node, each VJP is a dispatch of its own."""
from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp

from ..graph import bulk as _bulk, compile_cache
from .nodes import FUSED_CACHE, Leaf, Node

_CHAINS = _bulk.Sightings()  # structures of such backwards: compiled from the second sighting


def chain_backward(nodes: list[Node], outputs: dict, retain_graph: bool) -> list | None:
    """Apply the VJPs of ``nodes`` (reverse recording order, every node the heads reach) to the
    cotangents ``outputs`` (``{(id(node), index): value}``, taken out of it) in one program.
    Returns ``[(leaf, gradient)]``; None when not done here (a node without a plain VJP, a
    cotangent for a node not listed, a first sighting of the structure): then nothing changed."""
    if len(nodes) < 2 or any(n.vjp is None or n.custom is not None or n.dynamic for n in nodes):
        return None
    position = {id(n): k for k, n in enumerate(nodes)}
    seeds_at, seeds = [], []
    for (node_id, index), value in outputs.items():
        k = position.get(node_id)
        if k is None:
            return None
        seeds_at.append((k, index))
        seeds.append(value)
    flowing = set(seeds_at)  # outputs a cotangent reaches: which nodes are applied at all
    leaves, leaf_index, steps, applied = [], {}, [], []
    for k, node in enumerate(nodes):
        if not any((k, i) in flowing for i in range(len(node.out_avals))):
            continue  # (no cotangent arrives: skipped, its VJP kept, as node by node)
        targets = []
        for i in node.diff:
            entry = node.entries[i]
            if type(entry) is Leaf:
                t = leaf_index.get(id(entry))
                if t is None:
                    t = leaf_index[id(entry)] = len(leaves)
                    leaves.append(entry)
                targets.append((-1, t))
            else:
                k_in = position.get(id(entry[0]))
                if k_in is None:  # (a node not listed: left to the node-by-node backward)
                    return None
                target = (k_in, entry[1])
                flowing.add(target)
                targets.append(target)
        steps.append((k, node.out_avals, node.multi, tuple(targets)))
        applied.append(node)
    key = ("chain", tuple(steps), tuple(seeds_at), len(leaves))
    program = compile_cache.lookup(FUSED_CACHE, key)
    if program is None:
        if not _CHAINS.ready(key):
            _CHAINS.note(key)
            return None
        program = compile_cache.store(FUSED_CACHE, key, _program(steps, tuple(seeds_at), len(leaves)))
    grads = program([n.vjp for n in applied], seeds)
    outputs.clear()
    if not retain_graph:
        for node in applied:
            node.vjp = None
    return list(zip(leaves, grads))


def _program(steps: list, seeds_at: tuple, n_leaves: int) -> Callable:
    """``(vjps, seeds) -> gradient per leaf``: ``steps`` per applied node (its position, output
    avals, multi, and per differentiated input where its cotangent goes: ``(k, i)``, output i of
    node k, or ``(-1, t)``, leaf t)."""
    def run(vjps: list, seeds: list) -> list:
        table: dict = dict(zip(seeds_at, seeds))
        grads: list[Any] = [None] * n_leaves
        for (k, avals, multi, targets), vjp in zip(steps, vjps):
            outs = [table.pop((k, i), None) for i in range(len(avals))]
            outs = [jnp.zeros(*a) if c is None else c for c, a in zip(outs, avals)]
            for target, ct in zip(targets, vjp(tuple(outs) if multi else outs[0])):
                if target[0] < 0:
                    t = target[1]
                    grads[t] = ct if grads[t] is None else grads[t] + ct
                else:
                    table[target] = ct if target not in table else table[target] + ct
        return grads
    return jax.jit(run)


def clear() -> None:
    _CHAINS.clear()
