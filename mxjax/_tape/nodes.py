"""Tape nodes: variables (:class:`Leaf`), recorded ops (:class:`Node`), the lazy outputs of
deferred nodes (:class:`Deferred`) and running deferred nodes with their VJPs (:func:`materialize`),
with the compiled forward-with-VJP each node uses and the caches they live in."""
from __future__ import annotations

import functools
import itertools
import threading
import weakref
from operator import attrgetter
from typing import Any, Callable, Sequence

import jax

from ..base import MXNetError
from .._ndarray import NDArray
from .._invoke import op_error
from ..graph import compile_cache
from ..graph._bulk_run import execute, replay
from ..graph.lazy import Lazy
from .ints import inexact, vjp_of


sequence = itertools.count()  # nodes' recording order
seq_of = attrgetter("seq")  # sort key: recording order
LOCK = threading.RLock()  # materializing deferred nodes from several threads
_CACHE_LIMIT = 512
LAZY_INPUT = object()  # in a deferred node's ``datas``: the input is itself lazy, read it when running


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
    has ``datas`` (its inputs' values captured when recorded; ``LAZY_INPUT`` where
    an input is itself lazy, and then ``inputs`` holds an alias of that array: see
    ``recording._alias``) and no ``vjp`` or ``values`` until it runs.
    """

    __slots__ = ("key", "fn", "inputs", "entries", "diff", "vjp", "out_avals", "multi", "seq", "name",
                 "custom", "dynamic", "datas", "values", "fused", "sig", "region", "ints", "repeat", "__weakref__")

    def __init__(self, key: Any, fn: Callable | None, inputs: tuple, entries: tuple, diff: tuple, vjp: Any,
                 out_avals: tuple, multi: bool, name: str, custom: Any = None, dynamic: bool = False) -> None:
        self.key, self.fn, self.inputs, self.entries, self.diff = key, fn, inputs, entries, diff
        self.vjp, self.out_avals, self.multi, self.name = vjp, out_avals, multi, name
        self.custom, self.dynamic = custom, dynamic
        self.datas: tuple | None = None
        self.values: tuple | None = None
        self.fused: Any = None  # the PendingBackward that will compute this node
        self.sig: tuple | None = None  # a deferred node's input avals (("py", type name) for Python values)
        self.region: Any = None  # the region (a plan.Plan) a deferred node joined
        self.ints = False  # an integer input is differentiated: the integer outputs are too (see record)
        self.repeat = False  # a deferred op fused only once its region's structure repeats (see plan.Plan.fuse_now)
        self.seq = next(sequence)

    @property
    def deferred(self) -> bool:
        return self.datas is not None


class Deferred(Lazy):
    """The ``_var`` of an output of a deferred node: reading it runs the node (if nothing has yet).

    Who can still read the value decides whether a fused program returns it (see :func:`_kept`):
    ``owner`` and ``sharers`` (views made since) are weak references to the arrays holding it, and
    ``reads`` counts the deferred nodes that read it (each through an alias of its own, see
    :func:`_alias`)."""

    __slots__ = ("node", "index", "owner", "sharers", "reads", "__weakref__")

    def __init__(self, node: Node, index: int, owner: NDArray) -> None:
        self.node, self.index, self.owner, self.sharers, self.reads = node, index, weakref.ref(owner), (), 0

    def share(self, array: NDArray) -> None:
        self.sharers += (weakref.ref(array),)

    def held(self) -> bool:
        """Whether an array outside the tape (the user's, a view) still holds this value."""
        return self.owner() is not None or any(ref() is not None for ref in self.sharers)

    def device(self, array: NDArray) -> Any:
        """Where the node runs: where its region's program runs (where the values it takes from
        outside are), else where its first array input is (computed, or lazy in turn)."""
        region = self.node.region
        if region is not None:
            for value in region.ext_values:
                sharding = getattr(value, "sharding", None)  # (a buffer donated since still says where it was)
                if sharding is not None:
                    return next(iter(sharding.device_set))
        for x in self.node.inputs:
            if isinstance(x, NDArray):
                return x._where()
        return None

    def compute(self, array: NDArray) -> Any:
        if self.node.values is None:
            if self.node.fused is not None:
                self.node.fused.run()
            else:
                materialize([self.node])
        value = self.node.values[self.index]
        if value is None:  # see Plan.seal: only nodes of the program read it, so nothing should be here
            raise MXNetError(f"internal: the output of {self.node.name} was not kept by its fused program")
        return value


def unplanned(var: Any) -> bool:
    """Whether an array's ``_var`` is the output of a deferred node that has not run (nor been planned to)."""
    return type(var) is Deferred and var.node.values is None and var.node.fused is None


def is_deferred(x: Any) -> bool:
    """Whether ``x`` is a lazy output of a deferred node that has not run (nor been planned to)."""
    return unplanned(getattr(x, "_var", None))


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


def _todo(nodes: Sequence[Node]) -> list[Node]:
    """These deferred nodes and the deferred nodes they read, in turn: oldest first."""
    todo, stack, seen = [], list(nodes), set()
    while stack:
        node = stack.pop()
        if id(node) in seen or not node.deferred:
            continue
        seen.add(id(node))
        todo.append(node)
        stack.extend(x._var.node for x in node.inputs if is_deferred(x))
    return sorted(todo, key=seq_of)


def materialize(nodes: Sequence[Node]) -> None:
    """Run these deferred nodes and the deferred nodes they read, oldest first, as ordinary nodes,
    each with its own VJP (a read of a lazy value before ``backward``, or a backward that needs
    each node's VJP).  They run as a bulk segment does (``graph._bulk_run``), each step a node's
    forward returning its VJP too (:class:`WithVJP`): op by op the first times their structure is
    seen, then as ONE program from the compile cache that returns every node's values and VJP
    residuals (a program per op costs a dispatch each)."""
    with LOCK:
        todo = []
        for node in _todo(nodes):
            if node.fused is not None:  # planned by a lazy backward: that program computes it
                node.fused.run()
            elif node.deferred:  # (not computed by such a program run for an earlier node)
                todo.append(node)
        if not todo:
            return
        region = todo[0].region
        if region is not None and len(region.node_wiring) == len(todo) and all(n.region is region for n in todo):
            wiring, leaves = region.node_wiring, region.ext_values  # the region read whole: wired as it was recorded
        else:
            wiring, leaves = _wire(todo)
        # each step gives its node's outputs and then its VJP: an output's position moves by the VJPs before it
        shift = [k for k, node in enumerate(todo) for _ in node.out_avals]
        steps = [(NamedOp(node.name), WithVJP.of(node), None,
                  tuple([a + shift[a] if a >= 0 else a for a in w[3]]), True) for node, w in zip(todo, wiring)]
        received = [_Received() for node in todo for _ in range(len(node.out_avals) + 1)]
        if len(todo) == 1:  # one node: its own compiled forward-with-VJP is that program already
            replay(steps, leaves, received, op_error)
        else:
            execute(steps, leaves, received, tuple(range(len(received))), op_error)
        values = iter([r.value for r in received])
        for node in todo:
            node.values, node.datas, node.region = tuple([next(values) for _ in node.out_avals]), None, None
            node.vjp = next(values)  # (no longer part of a region)


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
    def of(cls, node: Node) -> "WithVJP":
        key = (node.key, node.diff, node.multi)
        found = cls._made.get(key)
        if found is None:
            found = bounded(cls._made)[key] = cls(node.key, node.fn, node.diff, node.multi)
        return found


def _wire(todo: list[Node]) -> tuple[list, list]:
    """The nodes ``todo`` (oldest first) as a straight-line graph, as ``plan.Plan.add`` wires a region:
    per node (key, diff, multi, args), and the values from outside."""
    leaves, starts, wiring, count = [], {}, [], 0
    for node in todo:
        args = []
        for x, data in zip(node.inputs, node.datas):
            if data is LAZY_INPUT:
                var = x._var
                start = starts.get(id(var.node)) if type(var) is Deferred else None
                if start is not None:  # an output of an earlier node of the program
                    args.append(start + var.index)
                    continue
                data = x.to_jax()
            args.append(-1 - len(leaves))
            leaves.append(data)
        starts[id(node)] = count
        count += len(node.out_avals)
        wiring.append((node.key, node.diff, node.multi, tuple(args)))
    return wiring, leaves
