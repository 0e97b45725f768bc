"""Regions of deferred nodes wired into one program: forward, loss and VJP (a :class:`Plan`),
and running it as the backward pass."""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

import jax
import numpy as onp

from ..base import MXNetError
from .._invoke import op_error
from ..graph import bulk as _bulk
from ..graph.recorded import evaluate
from .ints import as_float_out, inexact, integer, truncate_grad, twin
from .nodes import (FUSED_CACHE, LAZY_INPUT, LOCK, Deferred, Leaf, NamedOp, Node, bounded, fused_program, materialize,
                    seq_of)


_STRUCTURES: dict = {}
_SIGHTINGS = _bulk.Sightings()  # regions of imperative ops run one by one (see Plan.fuse_now)
_structure_ids = itertools.count()


def _structure_id(structure: tuple) -> int:
    """A small number standing for a region's (large) structure, so later cache keys hash cheaply;
    numbers are never reused, so a cleared table only costs recompiles."""
    found = _STRUCTURES.get(structure)
    if found is None:
        found = bounded(_STRUCTURES)[structure] = next(_structure_ids)
    return found


def _kept(nodes: list[Node], internal: list) -> tuple:
    """Per node, which outputs a program returns: not those that only later nodes of the program
    read.  When no array holds one any more (not the user's, not a view: see :meth:`Deferred.held`)
    and no deferred node outside the program reads it, nothing can read it afterwards; returning it
    would keep every intermediate of the loss alive (a ``log_softmax`` over a vocabulary) and cost
    an output buffer each.  ``internal``: the plan's reads of its own nodes' outputs (see
    :meth:`Plan.add`)."""
    kept = [[True] * len(node.out_avals) for node in nodes]
    uses: dict = {}  # id(var) -> [var, reads inside the program, producer position]
    for k, index, ref in internal:
        var = ref()
        if var is None:  # no array holds it, not even an alias: nothing can read it
            kept[k][index] = False
            continue
        found = uses.get(id(var))
        if found is None:
            uses[id(var)] = [var, 1, k]
        else:
            found[1] += 1
    for var, inside, k in uses.values():
        if var.reads == inside and not var.held():
            kept[k][var.index] = False
    return tuple(map(tuple, kept))


class Plan:
    """Deferred nodes wired for one program, in recording order: the values coming from outside,
    the gradient targets (entries outside: variables or ordinary nodes) and, once sealed, the
    cotangents arriving at its outputs.

    Built while recording -- a *region*: a deferred node recorded only from the outputs of a
    region's nodes joins it, so a backward from its last node finds the program already wired --
    or at backward, from the nodes reachable from the heads.
    """

    def __init__(self) -> None:
        self.refs: list = []  # weak references to the nodes: nodes of a region point to it, not back
        self.nodes: list[Node] = []  # the nodes themselves, once sealed
        self.local: dict = {}  # id(node) -> its position
        self.ext_values: list = []
        self.targets: list = []
        self.leaf_targets = True
        self.target_index: dict = {}
        self.target_slots: list = []
        self.diff_positions: list = []
        # the region as a straight-line graph (``graph.recorded``'s form, what a bulk segment records):
        # per node (key, diff, multi, args), an arg the position of an output among the nodes' outputs
        # (>= 0) or of a value from outside (< 0: ``ext_values[-1 - a]``)
        self.node_wiring: list = []
        self.starts: list = [0]  # per node, the position of its first output; then the count of outputs
        # once sealed, the program's structure: (node wiring, cotangent slots, diff positions, target
        # slots, kept outputs)
        self.wiring: tuple | None = None
        self.read: list = []  # per node: whether a later node reads an output
        self.unread = 0
        # per such read: (producer position, output index, a weak reference to the output's Deferred:
        # a strong one would make a cycle node -> region -> Deferred -> node)
        self.internal: list = []

    def add(self, node: Node) -> None:
        """Wire ``node`` in after the nodes added so far."""
        local, read, ext_values, entries, inputs = self.local, self.read, self.ext_values, node.entries, node.inputs
        slots = []
        for slot, data in enumerate(node.datas):
            if data is LAZY_INPUT:
                var = inputs[slot]._var
                k = local.get(id(var.node)) if type(var) is Deferred else None
                if k is not None:
                    slots.append(self.starts[k] + var.index)
                    self.internal.append((k, var.index, weakref.ref(var)))
                    if not read[k]:
                        read[k] = True
                        self.unread -= 1
                    continue
                data = inputs[slot].to_jax()  # computed since it was recorded
            entry = entries[slot]
            if entry is not None:  # differentiated: a gradient leaves the region here; uses of one entry add up
                leaf = type(entry) is Leaf
                key = id(entry) if leaf else (id(entry[0]), entry[1])
                t = self.target_index.get(key)
                if t is None:
                    t = self.target_index[key] = len(self.targets)
                    self.targets.append(entry)
                    self.target_slots.append([])
                    self.leaf_targets = self.leaf_targets and leaf
                self.target_slots[t].append(len(self.diff_positions))
                self.diff_positions.append(len(ext_values))
            slots.append(-1 - len(ext_values))
            ext_values.append(data)
        local[id(node)] = len(self.refs)
        self.starts.append(self.starts[-1] + len(node.out_avals))
        self.refs.append(weakref.ref(node))
        read.append(False)
        self.unread += 1
        self.node_wiring.append((node.key, node.diff, node.multi, tuple(slots)))

    def chain_to(self, node: Node) -> bool:
        """Whether every node of this region leads to ``node``, its last, and none has run or been planned."""
        refs = self.refs
        if refs[-1]() is not node or self.unread != 1:
            return False
        for ref in refs:  # all alive: each is read by a later one, up to ``node``
            n = ref()
            if n.values is not None or n.fused is not None:
                return False
        return True

    def seal(self, cotangents: dict) -> None:
        """Take the cotangents arriving at the nodes' outputs out of ``cotangents`` and fix the
        program's structure (its cache key)."""
        self.nodes = nodes = [ref() for ref in self.refs]
        self.cts, ct_refs = [], []
        for k, node in enumerate(nodes):
            for i in range(len(node.out_avals)):
                ct = cotangents.pop((id(node), i), None)
                if ct is not None:
                    ct_refs.append((k, i))
                    self.cts.append(ct)
        self.wiring = (tuple(self.node_wiring), tuple(ct_refs), tuple(self.diff_positions),
                       tuple(map(tuple, self.target_slots)), _kept(nodes, self.internal))
        self.key = _structure_id((self.wiring, tuple(node.sig for node in nodes)))

    @classmethod
    def of(cls, deferred: list[Node], cotangents: dict) -> "Plan":
        """The sealed plan of these deferred nodes (all reachable from the heads)."""
        plan = cls()
        for node in sorted(deferred, key=seq_of):
            plan.add(node)
        plan.seal(cotangents)
        return plan

    def core(self) -> Callable:
        """``(ext_values, cts, olds) -> (kept node outputs, target gradients)``; ``olds[t]`` (or None) is
        added to target t's gradient (``grad_req='add'``); ``olds`` is None when no target adds."""
        nodes, starts = self.nodes, self.starts
        wiring, ct_refs, diff_positions, target_slots, kept = self.wiring
        steps = [(None, n.fn, None, w[3], n.multi) for n, w in zip(nodes, wiring)]
        ct_positions = [starts[k] + i for k, i in ct_refs]
        kept_positions = [starts[k] + i for k, keeps in enumerate(kept) for i, keep in enumerate(keeps) if keep]
        out_dtypes = [aval[1] for n in nodes for aval in n.out_avals]

        def forward(diff_values: list, ext_values: list, twin: bool = False) -> tuple:
            ext = list(ext_values)
            for p, v in zip(diff_positions, diff_values):
                ext[p] = v

            def truncate(k: int, args: list) -> list:
                """A float twin where the op reads an integer: truncate its gradient there."""
                for a, ref in enumerate(steps[k][3]):
                    actual = getattr(ext_values[-1 - ref], "dtype", None) if ref < 0 else out_dtypes[ref]
                    if actual is not None and integer(actual) and inexact(args[a].dtype):
                        args[a] = truncate_grad(args[a], onp.dtype(actual))
                return args
            values = evaluate(steps, ext, adjust=truncate if twin else None)
            return [values[r] for r in ct_positions], values

        def core(ext_values: list, cts: list, olds: list | None) -> tuple:
            primals = [ext_values[p] for p in diff_positions]
            if all(inexact(v.dtype) for v in primals):
                _, vjp, outs = jax.vjp(lambda d: forward(d, ext_values), primals, has_aux=True)
                (grads,) = vjp(cts)
            else:  # integer variables: the values from the integers, the gradients from float twins
                _, outs = forward(primals, ext_values)
                twin_outs, vjp = jax.vjp(lambda d: as_float_out(forward(d, ext_values, True)[0]),
                                         [v if inexact(v.dtype) else twin(v) for v in primals])
                (grads,) = vjp(tuple(c.astype(o.dtype) for c, o in zip(cts, twin_outs)))
                grads = [g.astype(v.dtype) for g, v in zip(grads, primals)]
            totals = []
            for slots, old in zip(target_slots, olds or [None] * len(target_slots)):
                total = grads[slots[0]]
                for s in slots[1:]:
                    total = total + grads[s]
                totals.append(total if old is None else old + total.astype(old.dtype))
            return [outs[r] for r in kept_positions], totals
        return core

    def fuse_now(self) -> bool:
        """Whether to run this sealed region as one program: its program is compiled already, or a
        node is more than an imperative op (a hybridized block: running it alone would compile its
        own VJP), or the structure was seen often enough (bulk execution's rule, ``Sightings``).
        Before that a region of imperative ops runs them one by one, with the programs every
        structure shares (noted then: :meth:`sighted`), so code whose graph changes at every step
        compiles nothing new."""
        if not all(node.repeat for node in self.nodes):
            return True
        return self.key in FUSED_CACHE or _SIGHTINGS.ready(self.key)

    def sighted(self) -> None:
        _SIGHTINGS.note(self.key)

    def program(self) -> Callable:
        """The jitted :meth:`core`, cached by the region's structure."""
        return fused_program(self.key, self.core)

    def grad_avals(self, olds: list | None) -> list[tuple]:
        """Each target gradient's (shape, dtype) as the program gives it: the differentiated input's,
        or the accumulated old gradient's dtype (``grad_req='add'``)."""
        avals = []
        for t, slots in enumerate(self.target_slots):
            value = self.ext_values[self.diff_positions[slots[0]]]
            old = olds[t] if olds else None
            avals.append((tuple(value.shape), (value if old is None else old).dtype))
        return avals

    def finish(self, values: list) -> None:
        """The nodes have run: ``values`` are their kept outputs, in order (see :func:`_kept`)."""
        values = iter(values)
        for node, keeps in zip(self.nodes, self.wiring[4]):
            outs = tuple(next(values) if keep else None for keep in keeps) if len(keeps) > 1 else (
                next(values) if keeps[0] else None,)
            node.values, node.datas, node.vjp, node.fused, node.region = outs, None, None, None, None

    def error(self, err: Exception) -> MXNetError:
        return op_error(NamedOp(" + ".join(n.name for n in self.nodes)), self.nodes[0].inputs, None, err)


def plan_backward(deferred: list[Node], cotangents: dict) -> "Plan | None":
    """The sealed plan of a region of deferred nodes, taking the cotangents arriving at its outputs
    out of ``cotangents``; or None when the region is a first sighting of imperative ops (see
    :meth:`Plan.fuse_now`): then its nodes ran one by one and the cotangents stay in
    ``cotangents`` for the caller's node-by-node backward."""
    with LOCK:
        plan = Plan.of(deferred, cotangents)
        if plan.fuse_now():
            return plan
        plan.sighted()
        cotangents.update({(id(plan.nodes[k]), i): ct for (k, i), ct in zip(plan.wiring[1], plan.cts)})
        materialize(deferred)
        return None


def fused_backward(plan: Any) -> list[tuple[Any, Any]]:
    """Forward + VJP of a planned region (:func:`plan_backward`) as one compiled program, run now
    (or the VJPs of a ``chain.Chain``, nodes that ran with them).  Returns ``[(entry, gradient)]``
    for the differentiable entries outside it that feed it.  The nodes end up computed and freed,
    as after a backward."""
    with LOCK:
        try:
            values, grads = plan.program()(plan.ext_values, plan.cts, None)  # nothing to add to
        except MXNetError:
            raise
        except Exception as err:
            raise plan.error(err) from None
        plan.finish(values)
        return list(zip(plan.targets, grads))


