"""Tape nodes: variables (:class:`Leaf`), recorded ops (:class:`Node`; a deferred node's outputs
are ``graph.lazy.Pending`` values of its region) and running deferred nodes with their VJPs (:func:`run_with_vjps`),
with the compiled forward-with-VJP each node uses and the caches they live in."""
from __future__ import annotations

import functools
import itertools
import threading
from operator import attrgetter
from typing import Any, Callable

import jax

from .._ndarray import NDArray
from .._invoke import op_error
from ..graph import compile_cache
from ..graph._bulk_run import execute, replay
from ..graph.recorded import Straight
from .ints import inexact, vjp_of


sequence = itertools.count()  # nodes' recording order
seq_of = attrgetter("seq")  # sort key: recording order
LOCK = threading.RLock()  # materializing deferred nodes from several threads
_CACHE_LIMIT = 512
LAZY_INPUT = object()  # among the input values a deferred node is recorded with: the input is itself lazy


class Leaf:
    """A variable: an array marked with ``attach_grad`` (its gradient buffer and request).

    ``fresh``: a backward has written the gradient since an optimizer last consumed it (MXNet's
    ``_fresh_grad``; the Trainer's stale-gradient check).
    """

    __slots__ = ("grad", "grad_req", "fresh")

    def __init__(self, grad: NDArray | None, grad_req: str) -> None:
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False


class Node:
    """One recorded op: its pure function, inputs, VJP residuals and output avals.

    ``fn`` is a pure function of the input values (parameters baked in), stable per
    ``key``; ``vjp`` is JAX's VJP closure from the forward (``None`` once freed);
    ``diff`` lists the input positions that are differentiated.  A deferred node
    has a ``region`` (which holds what computes it, and the values of its inputs; ``inputs``
    holds an alias of an input that is itself lazy: see ``recording._alias``) and no ``vjp``
    until it runs; its outputs' values are ``Pending`` values of its region, which hands them
    what it computes.  A node holds what backward needs, no more.
    """

    __slots__ = ("key", "fn", "inputs", "entries", "diff", "vjp", "out_avals", "multi", "seq", "name",
                 "custom", "dynamic", "fused", "region", "ints", "__weakref__")

    def __init__(self, key: Any, fn: Callable | None, inputs: tuple, entries: tuple, diff: tuple, vjp: Any,
                 out_avals: tuple, multi: bool, name: str, custom: Any = None, dynamic: bool = False) -> None:
        self.key, self.fn, self.inputs, self.entries, self.diff = key, fn, inputs, entries, diff
        self.vjp, self.out_avals, self.multi, self.name = vjp, out_avals, multi, name
        self.custom, self.dynamic = custom, dynamic
        self.fused: Any = None  # the PendingBackward that will compute this node
        self.region: Any = None  # the region (a plan.Plan) a deferred node joined
        self.ints = False  # an integer input is differentiated: the integer outputs are too (see record)
        self.seq = next(sequence)

    @property
    def deferred(self) -> bool:
        return self.region is not None


def differentiable(x: Any) -> bool:
    return isinstance(x, NDArray) and x._ag is not None and inexact(x._data.dtype)


class NamedOp:
    """Just enough of an OpDef for error messages about recorded functions."""

    def __init__(self, name: str) -> None:
        self.name = name


# ----------------------------------------------------------------------------- compiled pieces

_FORWARD_CACHE: dict = {}
SHAPE_CACHE: dict = {}
FUSED_CACHE = compile_cache.Programs("tape")  # fused forward+backward(+update) programs: bounded LRU


def clear_caches() -> None:
    """Ops read the default dtype at trace time: drop compiled programs when it changes."""
    for cache in (_FORWARD_CACHE, SHAPE_CACHE, WithVJP._made):
        cache.clear()
    compile_cache.drop(FUSED_CACHE)


def fused_program(key: Any, core: Callable[[], Callable]) -> Callable:
    """The jitted ``core()`` kept in the compile cache under ``key`` (a region's or a chain's structure)."""
    program = compile_cache.lookup(FUSED_CACHE, key)
    if program is None:
        program = compile_cache.store(FUSED_CACHE, key, jax.jit(core()))
    return program


def bounded(cache: dict) -> dict:
    """``cache``, emptied first when it reached the limit (a crude bound on compiled programs kept)."""
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    return cache


def forward_with_vjp(key: Any, fn: Callable, diff: tuple, dynamic: bool) -> Callable:
    """``(*inputs) -> (outputs, vjp)`` differentiating ``fn`` at the ``diff`` positions; jitted, cached by key."""
    cache_key = (key, diff)
    forward = _FORWARD_CACHE.get(cache_key)
    if forward is None:
        def forward(*inputs: Any) -> Any:
            return vjp_of(fn, inputs, diff)
        if not dynamic:
            forward = jax.jit(forward)
        bounded(_FORWARD_CACHE)[cache_key] = forward
    return forward


@jax.jit
def apply_vjp(vjp: Any, cotangents: Any) -> Any:
    return vjp(cotangents)


def aval_key(x: Any) -> Any:
    data = getattr(x, "_data", x)
    shape = getattr(data, "shape", None)
    if shape is not None:
        return (tuple(shape), data.dtype)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return ("const", type(x).__name__, x)






def shape_entry(out: Any) -> tuple:
    multi = isinstance(out, (tuple, list))
    outs = tuple(out) if multi else (out,)
    return multi, tuple((o.shape, o.dtype) for o in outs), tuple(struct_of(o.shape, o.dtype) for o in outs)


@functools.lru_cache(maxsize=1024)
def struct_of(shape: tuple, dtype: Any) -> jax.ShapeDtypeStruct:
    """One ShapeDtypeStruct per shape and dtype: the stand-in ``_data`` of lazy arrays."""
    return jax.ShapeDtypeStruct(shape, dtype)


def run_with_vjps(nodes: list, ops: list, wiring: list, leaves: list, outs: list) -> None:
    """Run these steps of a region (oldest first; ``ops`` and ``wiring`` as ``plan.Plan.add`` records
    them, the values from outside ``leaves``) as ordinary nodes, each living node (``nodes``; None
    where one is no longer held) with its own VJP: a read of a lazy value before ``backward``, or a
    backward that needs each node's VJP.  ``outs``: the ``Pending`` values of their outputs, in
    order (None where one is gone), which receive the values (or the error of the op that failed,
    and of every op after it, as a bulk segment's do).  They run as a bulk segment does
    (``graph._bulk_run``), each step a forward returning a VJP too (:class:`WithVJP`; of no input
    for a node no longer held): op by op the first times their structure is seen, then as ONE
    program from the compile cache that returns every node's values and VJP residuals (a program
    per op costs a dispatch each)."""
    # each step gives its node's outputs and then its VJP: an output's position moves by the VJPs before it
    shift = [k for k, op in enumerate(ops) for _ in op[3]]
    steps = [(NamedOp(op[1]), _Replayed(op[0]) if type(op[0]) is Straight else
              WithVJP.of(w[0], op[0], w[1] if node is not None else (), w[2]), None,
              tuple([a + shift[a] if a >= 0 else a for a in w[3]]), True) for node, op, w in zip(nodes, ops, wiring)]
    outs, received, vjp_at = iter(outs), [], []
    for op in ops:
        received.extend([_Received() if out is None else out for out in itertools.islice(outs, len(op[3]))])
        vjp_at.append(len(received))
        received.append(_Received())
    if len(steps) == 1:  # one node: its own compiled forward-with-VJP is that program already
        replay(steps, leaves, received, op_error)
    else:
        execute(steps, leaves, received, tuple(range(len(received))), op_error)
    for node, at in zip(nodes, vjp_at):
        if node is not None:
            node.region, node.vjp = None, received[at].value  # (no longer part of a region)


class _Replayed:
    """A bulk segment taken into a region (``plan.Plan.adopt``) as a step of :func:`run_with_vjps`:
    its outputs, then no VJP (autograd does not track it).  Called, its ops run one by one, as the
    segment's would; ``pure``, what a program traces."""

    __slots__ = ("graph",)

    def __init__(self, graph: Straight) -> None:
        self.graph = graph

    def __call__(self, *ins: Any) -> tuple:
        return (*self.graph.replay(*ins), None)

    def __eq__(self, other: Any) -> bool:  # (a program's structure names it: equal graphs, one program)
        return type(other) is _Replayed and other.graph.key == self.graph.key

    def __hash__(self) -> int:
        return hash(self.graph.key)

    def pure(self, *ins: Any) -> tuple:
        return (*self.graph(*ins), None)


class _Received:
    """Where a materialized node's output (or VJP) is written (as a bulk segment's ``Pending``)."""

    __slots__ = ("value", "error")


class WithVJP:
    """A node's forward with its VJP as a step of ``graph.recorded``'s straight-line graphs: its
    outputs, then its VJP (a pytree of residuals).  Called, the node's compiled forward-with-VJP
    (:func:`forward_with_vjp`, which a node recorded eagerly runs too); ``pure``, what a program
    traces.  One per op, differentiated positions and arity: a program's structure names it."""

    __slots__ = ("forward", "multi", "pure")
    _made: dict = {}

    def __init__(self, key: Any, fn: Callable, diff: tuple, multi: bool) -> None:
        self.forward, self.multi = forward_with_vjp(key, fn, diff, False), multi

        def pure(*ins: Any) -> tuple:
            out, vjp = vjp_of(fn, ins, diff)
            return (*out, vjp) if multi else (out, vjp)
        self.pure = pure

    def __call__(self, *ins: Any) -> tuple:
        out, vjp = self.forward(*ins)
        return (*out, vjp) if self.multi else (out, vjp)

    @classmethod
    def of(cls, key: Any, fn: Callable, diff: tuple, multi: bool) -> "WithVJP":
        """The one for op ``key`` (its function ``fn``) differentiated at ``diff``."""
        found = cls._made.get((key, diff, multi))
        if found is None:
            found = bounded(cls._made)[(key, diff, multi)] = cls(key, fn, diff, multi)
        return found
