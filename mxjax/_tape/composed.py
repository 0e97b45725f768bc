"""A region's backward followed by the VJPs of nodes that ran before it, as ONE backward program.

A GAN's generator step differentiates the discriminator's region into the fake it read: the output
of the generator's call, which ran with its VJP in the discriminator's step.  Node by node that
is the region's program, then the generator's VJP, then the optimizer's update: three programs.
Composed, the region's cotangents for those nodes flow into their VJPs inside the region's
program (:class:`Composed`), which a pending backward then runs with the update, as a region's.
"""
from __future__ import annotations

from typing import Callable

from ..base import MXNetError
from .chain import Chain, GradProgram, chain_of
from .nodes import Leaf, Node
from .plan import Plan


class Composed(GradProgram):
    """``plan``'s backward, its cotangents for nodes outside it (``plan.targets`` that are node
    outputs) going on through ``chain``'s VJPs; the gradients of the variables either reaches
    (added where both do) are its targets.  Offers what ``Plan`` and ``Chain`` offer a pending
    backward (``pending.PendingBackward``) and ``backward.fused_backward``."""

    def __init__(self, plan: Plan, chain: Chain, seed_from: tuple) -> None:
        self.plan, self.chain = plan, chain
        self.nodes = plan.nodes + chain.nodes
        self.ext_values = plan.ext_values + chain.ext_values
        self.cts = plan.cts
        self.targets, self.avals, where = [], [], {}
        routes = []  # per final target, the plan's and the chain's gradients that add up to it
        for t, entry in enumerate(plan.targets):
            if type(entry) is Leaf:
                value = plan.ext_values[plan.diff_positions[plan.target_slots[t][0]]]
                where[id(entry)] = len(self.targets)
                self.targets.append(entry)
                self.avals.append((tuple(value.shape), value.dtype))
                routes.append(((t,), ()))
        for c, entry in enumerate(chain.targets):
            f = where.get(id(entry))
            if f is None:
                self.targets.append(entry)
                self.avals.append(chain.avals[c])
                routes.append(((), (c,)))
            else:
                routes[f] = (routes[f][0], routes[f][1] + (c,))
        self.key = ("composed", plan.key, chain.key, seed_from, tuple(routes))

    def core(self) -> Callable:
        """``(ext_values, cts, olds) -> (the plan's values, gradient per target)``."""
        plan_core, chain_core = self.plan.core(), self.chain.core()
        _, _, _, seed_from, routes = self.key
        split = len(self.plan.ext_values)

        def core(ext_values: list, cts: list, olds: list | None) -> tuple:
            values, grads = plan_core(ext_values[:split], cts, None)
            _, chained = chain_core(ext_values[split:], [grads[t] for t in seed_from], None)
            totals = []
            for (from_plan, from_chain), old in zip(routes, olds or [None] * len(routes)):
                parts = [grads[t] for t in from_plan] + [chained[c] for c in from_chain]
                total = parts[0]
                for part in parts[1:]:
                    total = total + part.astype(total.dtype)
                totals.append(total if old is None else old + total.astype(old.dtype))
            return values, totals
        return core

    def finish(self, values: list) -> None:
        self.plan.finish(values)
        self.chain.finish([])

    def error(self, err: Exception) -> MXNetError:
        return self.plan.error(err)


def compose(plan: Plan, rest: list[Node]) -> Composed | None:
    """``plan`` (sealed, its cotangents taken) composed with the VJPs of ``rest`` -- the other nodes
    the heads reach, latest first, each of which ran with its VJP -- when every gradient the plan
    gives a node goes on into those VJPs and ends at variables; else None (nothing changed)."""
    seeds, seed_from = {}, []
    for t, entry in enumerate(plan.targets):
        if type(entry) is not Leaf:
            seeds[(id(entry[0]), entry[1])] = None  # (the value arrives inside the program)
            seed_from.append(t)
    if not seeds:
        return None
    chain = chain_of(rest, seeds, False, least=1)
    if chain is None:
        return None
    return Composed(plan, chain, tuple(seed_from))

