"""The backward of nodes that ran with their VJPs (after a read before ``backward``) as ONE
program: every node's VJP applied in reverse recording order, the cotangents routed between
them inside it.  Node by node, each VJP is a dispatch of its own.

A :class:`Chain` has what a region's ``plan.Plan`` offers ``backward.fused_backward`` and a pending
backward (``pending``): run now, or lazily, its gradients read from the buffers or computed in one program with the
optimizer's update -- the VJPs' residuals are then the program's values from outside.
"""
from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp

from ..base import MXNetError
from .._invoke import op_error
from ..graph import bulk as _bulk
from .nodes import Leaf, NamedOp, Node, fused_program

_CHAINS = _bulk.Sightings()  # structures of such backwards: compiled from the second sighting


class GradProgram:
    """A backward program whose every target is a variable, with each gradient's (shape, dtype) in
    ``avals``, its ``core`` compiled by its structure (``key``): a :class:`Chain`'s, or a region's
    going on through one (``composed.Composed``)."""

    leaf_targets = True
    key: Any
    avals: list

    def core(self) -> Callable:
        raise NotImplementedError

    def program(self) -> Callable:
        """The jitted :meth:`core`, cached by the structure."""
        return fused_program(self.key, self.core)

    def grad_avals(self, olds: list | None) -> list[tuple]:
        """Each target gradient's (shape, dtype): its variable's, or the old gradient's dtype."""
        return [(shape, dtype if not olds or olds[t] is None else olds[t].dtype)
                for t, (shape, dtype) in enumerate(self.avals)]


class Chain(GradProgram):
    """The VJPs of ``nodes`` applied to the cotangents ``cts`` arriving at their outputs, giving
    each variable (``targets``) its gradient; the residuals of the VJPs are ``ext_values``."""

    def __init__(self, nodes: list[Node], steps: tuple, seeds_at: tuple, seeds: list, targets: list,
                 avals: list, retain_graph: bool) -> None:
        self.nodes, self.targets, self.cts, self.avals, self.retain_graph = nodes, targets, seeds, avals, retain_graph
        self.ext_values, self.treedef = jax.tree.flatten([n.vjp for n in nodes])
        self.key = ("chain", steps, seeds_at, len(targets), self.treedef)

    def core(self) -> Callable:
        """``(residuals, cts, olds) -> ([], gradient per target)`` (``olds`` as ``Plan.core``'s)."""
        _, steps, seeds_at, n_targets, treedef = self.key

        def core(ext_values: list, seeds: list, olds: list | None) -> tuple:
            vjps = jax.tree.unflatten(treedef, ext_values)
            table: dict = dict(zip(seeds_at, seeds))
            grads: list[Any] = [None] * n_targets
            for (k, avals, multi, targets), vjp in zip(steps, vjps):
                outs = [table.pop((k, i), None) for i in range(len(avals))]
                outs = [jnp.zeros(*a) if c is None else c for c, a in zip(outs, avals)]
                for target, ct in zip(targets, vjp(tuple(outs) if multi else outs[0])):
                    if target[0] < 0:
                        t = target[1]
                        grads[t] = ct if grads[t] is None else grads[t] + ct
                    else:
                        table[target] = ct if target not in table else table[target] + ct
            return [], [g if old is None else old + g.astype(old.dtype)
                        for g, old in zip(grads, olds or [None] * n_targets)]
        return core

    def finish(self, values: list) -> None:
        """The program ran: the VJPs are spent (unless ``retain_graph``: a later backward uses them)."""
        for node in self.nodes:
            node.fused = None
            if not self.retain_graph:
                node.vjp = None

    def error(self, err: Exception) -> MXNetError:
        return op_error(NamedOp(" + ".join(n.name for n in self.nodes) + " (backward)"), (), None, err)


def chain_of(nodes: list[Node], outputs: dict, retain_graph: bool, least: int = 2) -> Chain | None:
    """The :class:`Chain` of ``nodes`` (reverse recording order, every node the heads reach) from
    the cotangents ``outputs`` (``{(id(node), index): value}``, taken out of it).  None when not
    done here (fewer than ``least`` nodes -- one node's VJP is a program already --, a node without
    a plain VJP, a cotangent for a node not listed, a first sighting of the structure): then
    nothing changed."""
    if len(nodes) < least or any(n.vjp is None or n.custom is not None or n.dynamic for n in nodes):
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
    leaves, avals, leaf_index, steps, applied = [], [], {}, [], []
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
                    data = node.inputs[i]._data
                    avals.append((tuple(data.shape), data.dtype))
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
    if _CHAINS.op_by_op((tuple(steps), tuple(seeds_at))):
        return None
    outputs.clear()
    return Chain(applied, tuple(steps), tuple(seeds_at), seeds, leaves, avals, retain_graph)


def clear() -> None:
    _CHAINS.clear()
