"""A thread's region of deferred nodes (a :class:`Plan`): run whole at a read, or sealed at
``backward`` into one program of forward, loss and VJP, and running it as the backward pass."""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

import jax
import numpy as onp

from ..base import MXNetError
from .._invoke import op_error
from ..graph import bulk as _bulk
from ..graph.recorded import Straight, evaluate, inputs
from .ints import as_float_out, inexact, integer, truncate_grad, twin, vjp_of
from ..graph.lazy import Pending
from .nodes import FUSED_CACHE, LAZY_INPUT, LOCK, Leaf, NamedOp, Node, bounded, fused_program, run_with_vjps


_STRUCTURES: dict = {}
UNRUN: "weakref.WeakSet[Plan]" = weakref.WeakSet()  # the regions not run yet (see recording.run_readers)
_SIGHTINGS = _bulk.Sightings()  # regions of imperative ops run one by one (see Plan.fuse_now)
_structure_ids = itertools.count()


def _held(ref: weakref.ref) -> bool:
    """Whether an array still holds the value behind this weak reference (see :meth:`Pending.held`)."""
    handle = ref()
    return handle is not None and handle.held()


def _structure_id(structure: tuple) -> int:
    """A small number standing for a region's (large) structure, so later cache keys hash cheaply;
    numbers are never reused, so a cleared table only costs recompiles."""
    found = _STRUCTURES.get(structure)
    if found is None:
        found = bounded(_STRUCTURES)[structure] = next(_structure_ids)
    return found


def _no_node() -> None:
    """The node of a step no array points back to (a bulk segment taken in: see :meth:`Plan.adopt`)."""
    return None


class Plan:
    """A thread's *region*: its deferred nodes, in recording order, wired as one straight-line graph
    (``graph.recorded``'s form, what a bulk segment records) with the values coming from outside
    and the gradient targets (entries outside: variables or ordinary nodes).

    Every deferred node a thread records joins its open region (``recording.current_region``), as
    every imperative op joins its bulk segment.  The region is run whole, as a segment is: at a
    read of one of its values, each node with its VJP (:meth:`run`); or sealed at ``backward``
    with the cotangents arriving at its outputs (:meth:`seal`), as ONE program of forward, loss
    and VJP -- then nodes the heads do not reach are computed with their VJPs by the same program.
    Either closes it: the thread's next deferred node starts a new region.  Nodes hold their
    region; the region holds them by weak reference, and what computes them (``ops``: each one's
    function, name, input and output avals) strongly, as a segment holds its ops.  It computes
    what is still wanted, as a segment does: the values an array holds and the values the living
    nodes read, and the VJPs of the living nodes (a node nobody holds has no backward left).  It
    runs a step no array points back to (an op on a detached value, which autograd does not track)
    the same way.  Where a step reads an earlier step's value without differentiating it (a
    detached value, an auxiliary state) the sealed program stops the gradient, as the step's own
    VJP does, and the cotangents do not reach the earlier step through it.  It
    hands its values over by position, as a segment does: ``handles[p]`` is output ``p``'s
    ``Pending`` (weakly), ``producer[p]`` the node computing it; an op that fails leaves its error
    there, and the values computed before it stay readable.
    """

    CAP = 4096  # nodes: a region holding as many takes no more (a loop recording values it never reads
    # nor differentiates would otherwise grow one region, and what it holds, without end)

    def __init__(self) -> None:
        UNRUN.add(self)
        self.open = True  # the thread's deferred nodes join it (until it runs, is sealed or is full)
        self.done = False  # run (by a read, or by its backward's program)
        self.refs: list = []  # weak references to the nodes: nodes of a region point to it, not back
        self.ops: list = []  # per node, ``(fn, name, sig, out_avals, repeat)`` (its Node's fields)
        self.nodes: list[Node] = []  # the living nodes, once sealed
        self.live: list = []  # once sealed, per step computed: its node, or None (a node no longer held)
        self.live_ops: list = []  # and its op
        self.ext_values: list = []
        self.targets: list = []
        self.leaf_targets = True
        self.target_index: dict = {}
        self.target_slots: list = []
        self.diff_positions: list = []
        # per node (key, diff, multi, args), an arg the position of an output among the nodes' outputs
        # (>= 0) or of a value from outside (< 0: ``ext_values[-1 - a]``)
        self.node_wiring: list = []
        self.starts: list = [0]  # per node, the position of its first output; then the count of outputs
        self.live_handles: list = []  # once sealed, ``handles`` of the living nodes' outputs
        # per output position: the node computing it (its position), and a weak reference to its Pending
        # (a strong one would make a cycle region -> Pending -> node -> region); values are handed over by position
        self.producer: list = []
        self.handles: list = []
        # once sealed, the program's structure: (node wiring, cotangent slots, diff positions, target
        # slots, kept outputs, nodes computed with their VJPs), over the living nodes (``out_starts``)
        self.wiring: tuple | None = None
        self.internal: list = []  # the positions of the outputs that later nodes read

    def add(self, node: Node, datas: tuple, sig: tuple, repeat: bool) -> None:
        """Wire ``node`` in after the nodes added so far: ``datas``, its inputs' values when recorded
        (``LAZY_INPUT`` where one is lazy); ``sig``, their avals (("py", type name) for a Python
        value); ``repeat``: an imperative op, fused only once the region's structure repeats (see
        :meth:`fuse_now`)."""
        ext_values, entries, inputs = self.ext_values, node.entries, node.inputs
        slots = []
        for slot, data in enumerate(datas):
            if data is LAZY_INPUT:
                var = inputs[slot]._var
                if type(var) is Pending and var.segment is self:  # an output of this region: its position
                    slots.append(var.index)
                    self.internal.append(var.index)
                    continue
                data = inputs[slot].to_jax()  # run since it was recorded (read from another thread)
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
        self.producer.extend([len(self.refs)] * len(node.out_avals))
        self.starts.append(self.starts[-1] + len(node.out_avals))
        self.refs.append(weakref.ref(node))
        self.ops.append((node.fn, node.name, sig, node.out_avals, repeat))
        self.node_wiring.append((node.key, node.diff, node.multi, tuple(slots)))
        if len(self.refs) >= self.CAP:
            self.open = False

    def adopt(self, nodes: list, leaves: list, handles: list) -> None:
        """Take in what a bulk segment recorded and did not run (``graph.bulk.Segment.hand_over``) as
        ONE step after the nodes added so far, a step autograd does not track: plain ops inside
        ``record`` on concrete arrays (``net(x / 255)``).  Its values become the region's (their
        positions follow the outputs so far, in the segment's order), so the node that reads one is
        wired to it instead of running the segment as a program of its own; its leaves become values
        from outside.  Like any step no array points back to, it is computed where a value of it is
        held or read, without a VJP."""
        graph, leaves = Straight.lifted(nodes, leaves)
        first, at = self.starts[-1], len(self.ext_values)
        self.ext_values.extend(leaves)
        self.producer.extend([len(self.refs)] * len(handles))
        self.starts.append(first + len(handles))
        self.refs.append(_no_node)
        self.ops.append((graph, " + ".join([node[0].name for node in nodes]),
                         tuple([(tuple(x.shape), x.dtype) if hasattr(x, "shape") else ("py", type(x).__name__)
                                for x in leaves]),
                         tuple([(tuple(h.aval.shape), h.aval.dtype) for h in handles]), True))
        self.node_wiring.append((("segment", graph.key), (), True, tuple(range(-1 - at, -1 - at - len(leaves), -1))))
        for p, handle in enumerate(handles):
            handle.segment, handle.index, handle.aval, handle.source = self, first + p, None, None
            self.handles.append(weakref.ref(handle))
        if len(self.refs) >= self.CAP:
            self.open = False

    def _wanted(self) -> tuple[list, list, list, list, list, list, list]:
        """What to compute, as a segment computes what is wanted: the steps of the living nodes,
        of values an array still holds, and of values a wanted step reads.  Returns the region's
        nodes as recorded (None where one died), whether each is wanted, and per wanted step its
        node (None: no longer held, so computed without its VJP), its op (``ops``), its wiring
        over the wanted steps, where its outputs start, and the weak references to its outputs'
        values (from ``handles``)."""
        recorded = [ref() for ref in self.refs]
        if None not in recorded or self._only_adopted(recorded):  # (a segment taken in: its reader lives)
            return recorded, [True] * len(recorded), recorded, self.ops, self.node_wiring, self.starts, self.handles
        wanted = [node is not None for node in recorded]
        for k in range(len(recorded) - 1, -1, -1):
            if not wanted[k]:
                wanted[k] = any(_held(ref) for ref in self.handles[self.starts[k]:self.starts[k + 1]])
            if wanted[k]:
                for a in self.node_wiring[k][3]:
                    if a >= 0:
                        wanted[self.producer[a]] = True
        moved: list = []  # a recorded output position -> its position among the wanted steps' outputs
        live, ops, wiring, starts, handles = [], [], [], [0], []
        for k, (first, end) in enumerate(zip(self.starts, self.starts[1:])):
            if not wanted[k]:
                moved.extend([None] * (end - first))
                continue
            moved.extend(range(starts[-1], starts[-1] + end - first))
            live.append(recorded[k])
            ops.append(self.ops[k])
            handles.extend(self.handles[first:end])
            w = self.node_wiring[k]
            wiring.append((*w[:3], tuple([a if a < 0 else moved[a] for a in w[3]])))
            starts.append(starts[-1] + end - first)
        return recorded, wanted, live, ops, wiring, starts, handles

    def _only_adopted(self, recorded: list) -> bool:
        """Whether every step without a node is a segment taken in (:meth:`adopt`), not a node that died."""
        return all(node is not None or ref is _no_node for node, ref in zip(recorded, self.refs))

    def _kept(self, recorded: list, wanted: list) -> list:
        """Per wanted step, which outputs a program returns: not those no array holds any more (not
        the user's, not a view: see :meth:`Pending.held`) that only later nodes of the region read,
        or whose node died.  Nothing can read them afterwards (a deferred node of a later region
        reads a value, not the lazy output); returning them would keep every intermediate of the
        loss alive (a ``log_softmax`` over a vocabulary) and cost an output buffer each."""
        starts, handles, internal = self.starts, self.handles, set(self.internal)
        return [tuple(not ((node is None or p in internal) and not _held(handles[p])) for p in range(first, end))
                for node, w, first, end in zip(recorded, wanted, starts, starts[1:]) if w]

    def run(self) -> None:
        """Compute what is wanted, each living node with its VJP (a read of a value before
        ``backward``, or a backward that needs each node's own VJP); the region is closed."""
        with LOCK:
            self.open = False
            if self.done:
                return
            _, _, live, ops, wiring, _, handles = self._wanted()
            first = next((node for node in live if node is not None), None)
            if first is not None and first.fused is not None:  # sealed for a lazy backward: its program runs them
                first.fused.run()
                return
            if live:  # (failed: its values hold the op's error; the region stays, for a backward)
                run_with_vjps(live, ops, wiring, self.ext_values, [ref() for ref in handles])
            self._close()

    def _close(self) -> None:
        """It ran: an array holding one of its values holds the region (as a bulk segment's value
        does its segment), so it lets go of the values it took from outside, of its ops and of its
        nodes (which hold such arrays: a cycle)."""
        self.done = True
        UNRUN.discard(self)
        self.ext_values, self.cts, self.nodes, self.handles, self.live_handles = [], [], [], [], []
        self.ops, self.live, self.live_ops = [], [], []

    def device_of(self, handle: Pending) -> Any:
        """Where a value not computed yet will be: where the region's program runs (where the values
        it takes from outside are); None (the current device) where none of them says."""
        for value in self.ext_values:
            sharding = getattr(value, "sharding", None)  # (a buffer donated since still says where it was)
            if sharding is not None:
                return next(iter(sharding.device_set))
        return None

    def seal(self, cotangents: dict) -> None:
        """Close the region and fix its backward program: take the cotangents arriving at its nodes'
        outputs out of ``cotangents``; the gradients go to the targets the nodes with a cotangent
        reach; living nodes they do not reach are computed with their VJPs (a later backward may
        still need them), other wanted steps without.  (A region sealed but not run can still
        :meth:`run`.)"""
        self.open = False
        recorded, wanted, live, ops, wiring, starts, self.live_handles = self._wanted()
        self.live, self.live_ops, self.out_starts = live, ops, starts
        self.nodes = [node for node in live if node is not None]
        self.cts, ct_refs = [], []
        for k, node in enumerate(live):
            if node is None:  # (no longer held: nothing differentiates through it)
                continue
            for i in range(len(ops[k][3])):
                ct = cotangents.pop((id(node), i), None)
                if ct is not None:
                    ct_refs.append((k, i))
                    self.cts.append(ct)
        diff_positions, target_slots, unreached = self.diff_positions, self.target_slots, ()
        # the nodes a later node differentiates (a read that is not differentiated carries no cotangent)
        read = {self.producer[w[3][i]] for w in self.node_wiring for i in w[1] if w[3][i] >= 0}
        # (``live is recorded``: ``_wanted`` kept every step, no node died)
        if not (live is recorded and len(self.nodes) == len(read) + 1 and ct_refs and ct_refs[-1][0] == len(live) - 1):
            # not every node leads to the last one, which has a cotangent: what do the cotangents reach?
            reached = [False] * len(live)
            producer = [k for k in range(len(live)) for _ in range(starts[k], starts[k + 1])]
            for k, _ in ct_refs:
                reached[k] = True
            for k in range(len(live) - 1, -1, -1):
                if reached[k]:
                    for i in wiring[k][1]:  # (its differentiated inputs)
                        a = wiring[k][3][i]
                        if a >= 0:
                            reached[producer[a]] = True
            used = {-1 - a for k, w in enumerate(wiring) if reached[k] for a in w[3] if a < 0}
            targets, target_slots, diff_positions = [], [], []
            for target, slots in zip(self.targets, self.target_slots):
                mine = [self.diff_positions[d] for d in slots if self.diff_positions[d] in used]
                if mine:
                    targets.append(target)
                    target_slots.append(list(range(len(diff_positions), len(diff_positions) + len(mine))))
                    diff_positions.extend(mine)
            self.targets, self.target_slots, self.diff_positions = targets, target_slots, diff_positions
            self.leaf_targets = all(type(t) is Leaf for t in targets)
            unreached = tuple(k for k in range(len(live)) if not reached[k] and live[k] is not None)
        self.wiring = (tuple(wiring), tuple(ct_refs), tuple(diff_positions), tuple(map(tuple, target_slots)),
                       tuple(self._kept(recorded, wanted)), unreached)
        self.key = _structure_id((self.wiring, tuple(op[2] for op in ops)))

    def core(self) -> Callable:
        """``(ext_values, cts, olds) -> (kept outputs and the VJPs of unreached nodes, target
        gradients)``; ``olds[t]`` (or None) is added to target t's gradient (``grad_req='add'``);
        ``olds`` is None when no target adds."""
        ops, starts = self.live_ops, self.out_starts
        wiring, ct_refs, diff_positions, target_slots, kept, unreached = self.wiring
        steps = [(None, op[0], None, w[3], w[2]) for op, w in zip(ops, wiring)]
        ct_positions = [starts[k] + i for k, i in ct_refs]
        kept_positions = [starts[k] + i for k, keeps in enumerate(kept) for i, keep in enumerate(keeps) if keep]
        out_dtypes = [aval[1] for op in ops for aval in op[3]]
        # per step, the inputs it reads from an earlier step without differentiating them (a detached
        # value, an auxiliary state): the gradient stops there, as in the step's own VJP
        cuts = [tuple(a for a, ref in enumerate(w[3]) if ref >= 0 and a not in w[1]) for w in wiring]

        def forward(diff_values: list, ext_values: list, twin: bool = False) -> tuple:
            ext = list(ext_values)
            for p, v in zip(diff_positions, diff_values):
                ext[p] = v

            def adjust(k: int, args: list) -> list:
                for a in cuts[k]:
                    args[a] = jax.lax.stop_gradient(args[a])
                if twin:  # a float twin where the op reads an integer: truncate its gradient there
                    for a, ref in enumerate(steps[k][3]):
                        actual = getattr(ext_values[-1 - ref], "dtype", None) if ref < 0 else out_dtypes[ref]
                        if actual is not None and integer(actual) and inexact(args[a].dtype):
                            args[a] = truncate_grad(args[a], onp.dtype(actual))
                return args
            values = evaluate(steps, ext, adjust=adjust if twin or any(cuts) else None)
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
            # a node the cotangents do not reach: its VJP, from the values just computed (XLA shares the forward)
            vjps = [vjp_of(ops[k][0], inputs(steps[k][3], outs, ext_values), wiring[k][1])[1] for k in unreached]
            return [outs[r] for r in kept_positions] + vjps, totals
        return core

    def fuse_now(self) -> bool:
        """Whether to run this sealed region as one program: its program is compiled already, or a
        node is more than an imperative op (a hybridized block: running it alone would compile its
        own VJP), or the structure was seen often enough (bulk execution's rule, ``Sightings``).
        Before that a region of imperative ops runs them one by one, with the programs every
        structure shares (noted then: :meth:`sighted`), so code whose graph changes at every step
        compiles nothing new."""
        if not all(op[4] for op in self.live_ops):
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
        """The program ran: ``values`` are the nodes' kept outputs, in order (see :meth:`_kept`), then
        the VJPs of the nodes the cotangents did not reach."""
        kept, unreached = self.wiring[4], self.wiring[5]
        values = iter(values)
        for keep, ref in zip([keep for keeps in kept for keep in keeps], self.live_handles):
            value = next(values) if keep else None
            handle = ref()
            if handle is not None:
                handle.value = value
        for node in self.nodes:
            node.vjp, node.fused, node.region = None, None, None
        for k in unreached:
            self.live[k].vjp = next(values)
        self._close()

    def error(self, err: Exception) -> MXNetError:
        return op_error(NamedOp(" + ".join(op[1] for op in self.live_ops)), self.nodes[0].inputs, None, err)

