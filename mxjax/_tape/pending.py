"""A backward pass planned but not run (:class:`PendingBackward`): its gradients are lazy until
read, or it runs in one program with the optimizer's update (``Trainer.step``)."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetError
from .._ndarray import NDArray
from ..graph import compile_cache
from ..graph.lazy import Lazy
from .nodes import FUSED_CACHE, LOCK, struct_of
from .chain import Chain
from .plan import Plan


def defer_backward(plan: "Plan | Chain") -> bool:
    """Like :func:`fused_backward` for a region (or a :class:`Chain` of nodes that ran with
    their VJPs) whose gradients all go to variables, but lazily:
    their ``.grad`` buffers (and the region's values) become lazy outputs of one pending
    program, run when one is read -- or fused with the optimizer's update by
    :meth:`PendingBackward.run`.  Returns False (nothing done) if the region does not qualify."""
    if not plan.leaf_targets:
        return False
    with LOCK:
        PendingBackward(plan)
    return True


def region_of(head: NDArray) -> Plan | None:
    """The open region whose node computed ``head``, if any."""
    entry = head._ag
    region = entry[0].region if type(entry) is tuple else None
    return region if region is not None and region.open else None


def defer_region_backward(region: Plan, head: NDArray, seed: Any) -> bool:
    """:func:`defer_backward` from one head of an open ``region`` (see :func:`region_of`) whose
    gradients all go to variables -- the usual training step -- without walking the graph: the
    region is sealed with the head's cotangent.  False: nothing done (the region may be sealed, not run)."""
    if not region.leaf_targets:
        return False
    node, index = head._ag
    with LOCK:
        if not region.open:
            return False
        region.seal({(id(node), index): seed})
        if not region.fuse_now() or not region.leaf_targets:
            return False
        PendingBackward(region)
        return True


class _GradLazy(Lazy):
    """The ``_var`` of a gradient buffer written by a backward that has not run yet."""

    __slots__ = ("run", "index", "where")

    def __init__(self, run: "PendingBackward", index: int, where: Any) -> None:
        self.run, self.index, self.where = run, index, where

    def device(self, array: NDArray) -> Any:
        """Where the buffer was: a gradient is made where its variable is."""
        return self.where

    def compute(self, array: NDArray) -> Any:
        self.run.run()
        return self.run.grad(self.index, array._data.dtype)


class _PackedGrad(Lazy):
    """The ``_var`` of a gradient buffer whose value is a slice of a packed output (see _Packing);
    ``where``: the packed output's device (the program's: where the variables are), asked once
    per run, not per buffer and step."""

    __slots__ = ("packed", "offset", "shape", "where")

    def __init__(self, packed: jax.Array, offset: int, shape: tuple, where: Any) -> None:
        self.packed, self.offset, self.shape, self.where = packed, offset, shape, where

    def device(self, array: NDArray) -> Any:
        return self.where

    def compute(self, array: NDArray) -> Any:
        return _as_dtype(_unpack(self.packed, self.offset, self.shape), array._data.dtype)


class PendingBackward:
    """A backward pass compiled but not run: it runs when any of its results is read, or
    together with an optimizer update (``run(update=...)``) in one program.  ``plan``: a region's
    (forward, loss and VJP) or a :class:`Chain`'s (the VJPs of nodes that ran)."""

    def __init__(self, plan: "Plan | Chain") -> None:
        self.plan, self.grads = plan, None
        self.layout: _Packing | None = None  # with an update: which gradients come packed (see _Packing)
        self.packed: list = []
        self.buffers = buffers = []
        self.olds = olds = []
        for index, leaf in enumerate(plan.targets):
            req = leaf.grad_req
            buffer = leaf.grad if req != "null" else None
            buffers.append(buffer)
            if buffer is None:
                olds.append(None)
                continue
            olds.append(buffer.to_jax() if req == "add" else None)
            leaf.fresh = True
            data, where = buffer._data, None
            if type(data) is not jax.ShapeDtypeStruct:  # (still one: a packed gradient never read)
                where = next(iter(data.devices()))
            elif isinstance(buffer._var, (_GradLazy, _PackedGrad)):  # a gradient never read: where it is
                where = buffer._var.device(buffer)
            buffer._overwrite(struct_of(data.shape, data.dtype), _GradLazy(self, index, where))
        if olds.count(None) == len(olds):  # (every argument costs the dispatch a little)
            self.olds = None
        for node in plan.nodes:
            node.fused = self

    def grad(self, index: int, dtype: Any) -> Any:
        """Target ``index``'s gradient as ``dtype`` (its buffer's), sliced out of its packed output on
        first read."""
        grad = self.grads[index]
        if grad is None:
            group, offset, shape = self.layout.places[index]
            grad = self.grads[index] = _unpack(self.packed[group], offset, shape)
        return _as_dtype(grad, dtype)

    def buffer_positions(self, buffers: Sequence[NDArray]) -> list[int] | None:
        """Where each of these gradient buffers is among this backward's targets (None if one is
        not a lazy gradient of this pending backward)."""
        if self.grads is not None:
            return None
        positions = []
        for b in buffers:
            var = b._var
            if type(var) is not _GradLazy or var.run is not self:
                return None
            positions.append(var.index)
        return positions

    def run(self, update: Any = None) -> Any:
        """Run the program; with ``update = (key, fn, positions, weights, states, extra)`` the
        program also applies ``fn(weights, [grads[p] for p in positions], states, *extra)``
        (donating weights and states) and its result is returned -- or None if the backward ran
        already (another thread read one of its results after the caller found it pending): the
        caller applies the update to the gradients, now computed, by itself."""
        with LOCK:
            if self.grads is not None:
                return None
            plan, olds = self.plan, self.olds
            if update is None:
                program = plan.program()
                args: tuple = (plan.ext_values, plan.cts, olds)
            else:
                key, fn, positions, weights, states, extra = update
                # a weight that is also a program input is passed once (it is donated): the program
                # puts it back at its positions among the inputs
                by_id = {id(w): j for j, w in enumerate(weights)}
                ext, subst = [], []
                for p, v in enumerate(plan.ext_values):
                    j = by_id.get(id(v))
                    if j is None:
                        ext.append(v)
                    else:
                        subst.append((p, j))
                subst = tuple(subst)
                full_key = (plan.key, key, tuple(positions), subst)
                found = compile_cache.lookup(FUSED_CACHE, full_key)
                if found is None:
                    layout = _Packing(plan.grad_avals(olds))
                    found = compile_cache.store(FUSED_CACHE, full_key,
                                                 (_with_update(plan.core(), fn, positions, subst, layout), layout))
                program, self.layout = found
                states = None if states.count(None) == len(states) else list(states)
                args = (ext, plan.cts, olds, list(weights), states, *extra)
            try:
                result = program(*args)
            except MXNetError:
                raise
            except Exception as err:
                raise plan.error(err) from None
            new_weights, new_states, values, grads = result if update is not None else (None, None, *result)
            plan.finish(values)
            places: dict = {}
            if update is None:
                self.grads = grads
            else:  # the small gradients come packed: each is sliced out of them when read
                layout, places = self.layout, self.layout.places
                self.grads, self.packed = layout.split(grads), grads[len(layout.alone):]
                where = next(iter(self.packed[0].devices())) if self.packed else None
            for t, buffer in enumerate(self.buffers):
                var = buffer._var if buffer is not None else None
                if type(var) is _GradLazy and var.run is self:  # (not rewritten since the backward)
                    place = places.get(t)
                    if place is None:
                        buffer._data, buffer._var = self.grad(t, buffer._data.dtype), None
                    else:  # the buffer holds its packed output only, not this run
                        buffer._var = _PackedGrad(self.packed[place[0]], *place[1:], where)
            self.plan = self.olds = None
            if update is None:
                return None
            return new_weights, [None] * len(new_weights) if new_states is None else new_states


def _with_update(core: Callable, fn: Callable, positions: Sequence[int], subst: tuple,
                 layout: "_Packing") -> Callable:
    def program(ext_values: list, cts: list, olds: list | None, weights: list, states: list | None,
                *extra: Any) -> tuple:
        ext = list(ext_values)
        for p, j in subst:  # ascending positions: each insert lands where the weight was recorded
            ext.insert(p, weights[j])
        stateless = states is None  # no optimizer state (plain SGD): no list of Nones in or out
        values, grads = core(ext, cts, olds)
        new_weights, new_states = fn(weights, [grads[p] for p in positions], states or [None] * len(weights),
                                     *extra)
        # donated buffers go to the first outputs of their shape: the new weights and states must
        # come before the gradients, or a gradient is written over a weight still being read (and
        # XLA copies every weight first)
        return new_weights, None if stateless else new_states, values, layout.pack(grads)
    return jax.jit(program, donate_argnums=(3, 4))


_PACK_LIMIT = 16384  # elements: gradients up to this size (biases, norm scales) share output buffers


class _Packing:
    """Which gradients of a fused training step come out packed: those of at most ``_PACK_LIMIT``
    elements, flattened into one output per dtype (when there are two or more).

    Every output buffer of an XLA program costs at run time, and on CPU a reduction (a bias's
    gradient) written straight into an output buffer costs far more than one written into the
    program's scratch memory: 30-45 us each, 1.5% of the MLP benchmark's program.  After an
    update the gradients are seldom read, so a packed one is sliced out only when it is.
    """

    def __init__(self, avals: Sequence[tuple]) -> None:
        groups: dict = {}
        for t, (shape, dtype) in enumerate(avals):
            size = int(onp.prod(shape, dtype=onp.int64))
            if size <= _PACK_LIMIT:
                groups.setdefault(onp.dtype(dtype), []).append((t, size, shape))
        groups = [members for members in groups.values() if len(members) > 1]
        self.places: dict = {}  # target -> (group, offset, shape)
        self.groups: list = []  # per group: the targets packed in it, in order
        for g, members in enumerate(groups):
            offset = 0
            for t, size, shape in members:
                self.places[t] = (g, offset, tuple(shape))
                offset += size
            self.groups.append([t for t, _, _ in members])
        self.alone = [t for t in range(len(avals)) if t not in self.places]

    def pack(self, grads: list) -> list:
        """(traced) The gradients kept alone, then one flat array per group."""
        return [grads[t] for t in self.alone] + [jnp.concatenate([grads[t].ravel() for t in members])
                                                 for members in self.groups]

    def split(self, outputs: list) -> list:
        """Per target, its gradient among the program's outputs, or None if it is packed."""
        if not self.groups:
            return outputs
        grads = [None] * (len(self.alone) + len(self.places))
        for t, grad in zip(self.alone, outputs):
            grads[t] = grad
        return grads


def _as_dtype(value: jax.Array, dtype: Any) -> jax.Array:
    return value if value.dtype == dtype else value.astype(dtype)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _unpack(packed: jax.Array, offset: int, shape: tuple) -> jax.Array:
    size = int(onp.prod(shape, dtype=onp.int64))
    return jax.lax.slice(packed, (offset,), (offset + size,)).reshape(shape)


def pending_backward_of(grads: Sequence[NDArray]) -> tuple[PendingBackward, list[int]] | None:
    """The pending backward whose lazy gradient buffers these all are, with their positions."""
    var = grads[0]._var if grads else None
    if not isinstance(var, _GradLazy):
        return None
    positions = var.run.buffer_positions(grads)
    return None if positions is None else (var.run, positions)
