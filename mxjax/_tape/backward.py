"""The backward pass over the tape: cotangents from the heads to the variables, node by node or
all of them as one program (``chain``), or a deferred region as one compiled program (``plan``),
or lazily (``pending``); with ``create_graph`` the gradients are recorded themselves, for higher
derivatives.  ``mx.autograd``'s ``backward`` and ``grad`` are its callers."""
from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config
from .._ndarray import NDArray
from ..base import MXNetError
from ..device import made_on
from . import chain
from .composed import compose
from .ints import vjp_of
from .nodes import LOCK, Leaf, Node, apply_vjp, clear_caches, seq_of
from .pending import defer_backward
from .plan import _SIGHTINGS, Plan
from .recording import record

__all__ = ["as_list", "fused_backward", "head_gradients", "plan_backward", "run_backward"]


def as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def head_gradients(heads: list, head_grads: Any, create_graph: bool) -> list:
    head_grads = [None] * len(heads) if head_grads is None else as_list(head_grads)
    if len(head_grads) != len(heads):
        raise MXNetError(f"backward: got {len(heads)} heads but {len(head_grads)} head gradients")
    seeds = []
    for i, (head, hg) in enumerate(zip(heads, head_grads)):
        if not isinstance(head, NDArray) or head._ag is None:
            raise MXNetError(
                f"backward: head {i} was not computed under autograd.record() from arrays with "
                "attach_grad(); nothing to differentiate")
        dtype = head._data.dtype
        if hg is None:
            hg = _ones(head.shape, dtype, head._where())
        elif tuple(hg.shape) != head.shape:
            raise MXNetError(f"backward: head gradient {i} has shape {tuple(hg.shape)}, expected the head's "
                             f"shape {head.shape}")
        elif hg.dtype != dtype:  # a head gradient of another dtype is cast, as MXNet's copy into it does
            hg = hg.astype(dtype)
        if create_graph:
            seeds.append(hg if isinstance(hg, NDArray) else type(head)._wrap(jnp.asarray(hg)))
        else:
            seeds.append(hg.to_jax() if isinstance(hg, NDArray) else hg if isinstance(hg, jax.Array)
                         else jnp.asarray(hg))
    return seeds


@functools.lru_cache(maxsize=64)
def _ones(shape: tuple, dtype: Any, device: Any) -> jax.Array:
    """The default head gradient (immutable, so one array per shape, dtype and device serves every
    backward), made where the head is: made on JAX's default device instead, it would be copied to
    the head's device at every backward where that is another one (a CPU on a GPU machine)."""
    return made_on(onp.ones(shape, dtype), device)  # (from the host: jnp.ones compiles a program per shape)


def _reachable(heads: list) -> list:
    """Recorded nodes the heads depend on, latest first (a reverse topological order)."""
    nodes, stack, seen = [], [h._ag for h in heads], set()
    while stack:
        entry = stack.pop()
        if not isinstance(entry, tuple) or id(entry[0]) in seen:
            continue
        node = entry[0]
        seen.add(id(node))
        nodes.append(node)
        stack.extend(node.entries)  # None (no gradient) and variables are skipped when popped
    nodes.sort(key=seq_of, reverse=True)
    return nodes


class _Cotangents:
    """Summed cotangents per node output and per variable (arrays used twice add up)."""

    def __init__(self) -> None:
        self.outputs: dict = {}
        self.leaves: dict = {}

    def add(self, entry: Any, value: Any) -> None:
        if isinstance(entry, Leaf):
            table, key = self.leaves, id(entry)
            value = (entry, value)
        else:
            table, key = self.outputs, (id(entry[0]), entry[1])
        previous = table.get(key)
        if previous is None:
            table[key] = value
        elif isinstance(entry, Leaf):
            table[key] = (entry, previous[1] + value[1])
        else:
            table[key] = previous + value


def run_backward(heads: list, head_grads: Any, retain_graph: bool, create_graph: bool,
                  lazy: bool = False) -> dict:
    """Propagate cotangents from the heads; returns ``{id(leaf): (leaf, gradient)}``.

    Deferred nodes (a hybridized block and what was computed from it) are
    differentiated together in one compiled program; with ``lazy``, if nothing
    else is on the path, that program only runs when a gradient or value is read
    (or with the optimizer's update) and the gradients go straight to the buffers.
    """
    cts = _Cotangents()
    for head, seed in zip(heads, head_gradients(heads, head_grads, create_graph)):
        cts.add(head._ag, seed)
    nodes = _reachable(heads)
    for node in nodes:
        if node.fused is not None:  # planned by an earlier lazy backward: run it (then it is freed)
            node.fused.run()
    # (another thread's read runs a region under the lock: which nodes are deferred stays so until
    # the sealed region runs or is left pending -- a read between would run it and close it)
    with LOCK:
        deferred = [n for n in nodes if n.deferred]
        regions = list({id(n.region): n.region for n in deferred}.values())
        plan = None
        if len(regions) > 1 or (regions and (retain_graph or create_graph)):
            for region in regions:  # later backwards need each node's own VJP (or the heads reach other threads' regions)
                region.run()
        elif regions:  # forward + backward of the deferred region as one compiled program
            plan = plan_backward(regions[0], cts.outputs)  # (None: they ran one by one, a first sighting)
        if plan is not None:
            if lazy and len(deferred) == len(nodes) and defer_backward(plan):
                return {}
            done = {id(n) for n in deferred}
            rest = [n for n in nodes if id(n) not in done]
            if lazy and not (retain_graph or create_graph or cts.outputs or cts.leaves):
                # the plan's gradients for nodes that ran go on through their VJPs in its program
                composed = compose(plan, rest)
                if composed is not None and defer_backward(composed):
                    return {}
            for entry, ct in fused_backward(plan):
                cts.add(entry, ct)
            nodes = rest
    if not create_graph:  # nodes that ran with their VJPs (a read before backward, bulk off): one program
        found = chain.chain_of(nodes, cts.outputs, retain_graph)
        if found is not None:
            if lazy and not retain_graph and not cts.leaves and defer_backward(found):
                return {}  # (run when a gradient is read, or with the optimizer's update)
            for leaf, ct in fused_backward(found):
                cts.add(leaf, ct)
            return cts.leaves
    for node in nodes:
        outs = [cts.outputs.pop((id(node), i), None) for i in range(len(node.out_avals))]
        if all(c is None for c in outs):
            continue
        if node.vjp is None:
            raise MXNetError(
                f"backward: the graph through {node.name} was already freed by an earlier backward; "
                "pass retain_graph=True to the first backward to differentiate twice")
        in_cts = _recorded_backward(node, outs) if create_graph else _node_backward(node, outs)
        if not retain_graph:
            node.vjp = None
        for i, ct in zip(node.diff, in_cts):
            cts.add(node.entries[i], ct)
    return cts.leaves


def _node_backward(node: Node, outs: list) -> tuple:
    """Input cotangents of one node, from its outputs' cotangents (missing ones are zeros)."""
    outs = [jnp.zeros(*a) if c is None else c for c, a in zip(outs, node.out_avals)]
    if node.custom is not None:
        return node.custom(outs)
    ct = tuple(outs) if node.multi else outs[0]
    return node.vjp(ct) if node.dynamic else apply_vjp(node.vjp, ct)


_GRAD_FNS: dict = {}


def _clear_caches() -> None:
    """Compiled forwards and gradients hold what ops computed when traced: drop them when that
    changes, and with them how often each structure was seen (as bulk execution does)."""
    clear_caches()
    _GRAD_FNS.clear()
    _SIGHTINGS.clear()
    chain.clear()


_config.on_drop_compiled(_clear_caches)


def _grad_fn(node: Node) -> Callable:
    """The pure function (*inputs, *output_cts) -> input cotangents of a node (for create_graph)."""
    key = (node.key, node.diff, node.multi, len(node.inputs))
    fn = _GRAD_FNS.get(key)
    if fn is None:
        forward, diff, multi, n = node.fn, node.diff, node.multi, len(node.inputs)

        def fn(*args: Any) -> Any:
            inputs, cts = args[:n], args[n:]
            out, vjp = vjp_of(forward, inputs, diff)  # (integer inputs: gradients of their dtype)
            # differentiated again, integer inputs arrive as float twins: the cotangents follow them
            cts = [c.astype(o.dtype) for c, o in zip(cts, jax.tree.leaves(out))]
            return tuple(vjp(tuple(cts) if multi else cts[0]))
        _GRAD_FNS[key] = fn
    return fn


def _recorded_backward(node: Node, outs: list) -> tuple:
    """Input cotangents computed as a recorded op, so they can be differentiated again."""
    outs = [type(node.inputs[node.diff[0]])._wrap(jnp.zeros(*a)) if c is None else c
            for c, a in zip(outs, node.out_avals)]
    if node.custom is not None:
        return node.custom(outs)
    grads = record(("grad", node.key, node.diff, node.multi), _grad_fn(node), [*node.inputs, *outs], None,
                    f"{node.name}_backward", node.dynamic)
    return grads if isinstance(grads, tuple) else (grads,)


def plan_backward(region: Plan, cotangents: dict) -> "Plan | None":
    """``region`` sealed for a backward, taking the cotangents arriving at its outputs out of
    ``cotangents``; or None when it is a first sighting of imperative ops (see :meth:`Plan.fuse_now`):
    then its nodes ran one by one and the cotangents stay in ``cotangents`` for the caller's
    node-by-node backward."""
    with LOCK:
        region.seal(cotangents)
        if region.fuse_now():
            return region
        region.sighted()
        cotangents.update({(id(region.live[k]), i): ct for (k, i), ct in zip(region.wiring[1], region.cts)})
        region.run()
        return None


def fused_backward(plan: Any) -> list[tuple[Any, Any]]:
    """Forward + VJP of a sealed region (:func:`plan_backward`) as one compiled program, run now
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
