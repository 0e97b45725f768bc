"""The autograd tape: recorded nodes, their compiled forward-with-VJP, and deferred (fused) nodes.

A node is a pure function of arrays plus JAX's VJP closure from running it.
Usually the forward runs when the op is recorded.  A node can also be recorded
*deferred*: its outputs are lazy arrays (shape and dtype known, value not yet
computed), and ops recorded on lazy arrays are deferred too.  A hybridized block
called under ``record()`` starts such a region, so the loss computed from its
outputs stays deferred as well.  Then ``backward`` compiles the whole region
-- forward, loss and VJP -- into ONE XLA program (cached by the region's
structure), which is what a hand-written ``jax.jit(value_and_grad(...))`` is.
Reading a lazy value before ``backward`` (printing the loss, ``asnumpy``) runs
the deferred nodes one by one as ordinary recorded nodes: same values, just not
fused.
"""
from __future__ import annotations

import functools
import itertools
import sys
import threading
import weakref
from operator import attrgetter
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from . import _compile_cache
from .base import MXNetError
from ._ndarray import NDArray, op_error, wrap_outputs
from .graph import bulk as _bulk
from .graph.lazy import Lazy

_sequence = itertools.count()
seq_of = attrgetter("seq")  # sort key: recording order
_LOCK = threading.RLock()  # materializing deferred nodes from several threads
_CACHE_LIMIT = 512
_LAZY_INPUT = object()  # in a deferred node's ``datas``: the input is itself lazy, read it when running


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
    has ``datas`` (its inputs' values captured when recorded; ``_LAZY_INPUT`` where
    an input is itself lazy) and no ``vjp`` or ``values`` until it runs.
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
        self.region: _Plan | None = None  # the region a deferred node joined (see _Plan)
        self.ints = False  # an integer input is differentiated: the integer outputs are too (see record)
        self.repeat = False  # a deferred op fused only once its region's structure repeats (see _Plan.fuse_now)
        self.seq = next(_sequence)

    @property
    def deferred(self) -> bool:
        return self.datas is not None


class _Deferred(Lazy):
    """The ``_var`` of an output of a deferred node: reading it runs the node (if nothing has yet)."""

    __slots__ = ("node", "index")

    def __init__(self, node: Node, index: int) -> None:
        self.node, self.index = node, index

    def compute(self, array: NDArray) -> Any:
        if self.node.values is None:
            if self.node.fused is not None:
                self.node.fused.run()
            else:
                materialize([self.node])
        value = self.node.values[self.index]
        if value is None:  # see _Plan.seal: only nodes of the program read it, so nothing should be here
            raise MXNetError(f"internal: the output of {self.node.name} was not kept by its fused program")
        return value


def _unplanned(var: Any) -> bool:
    """Whether an array's ``_var`` is the output of a deferred node that has not run (nor been planned to)."""
    return type(var) is _Deferred and var.node.values is None and var.node.fused is None


def is_deferred(x: Any) -> bool:
    """Whether ``x`` is a lazy output of a deferred node that has not run (nor been planned to)."""
    return _unplanned(getattr(x, "_var", None))


def differentiable(x: Any) -> bool:
    return isinstance(x, NDArray) and x._ag is not None and _inexact(x._data.dtype)


class NamedOp:
    """Just enough of an OpDef for error messages about recorded functions."""

    def __init__(self, name: str) -> None:
        self.name = name


# ----------------------------------------------------------------------------- compiled pieces

_FORWARD_CACHE: dict = {}
_SHAPE_CACHE: dict = {}
_FUSED_CACHE = _compile_cache.Programs("tape")  # fused forward+backward(+update) programs: bounded LRU


def clear_caches() -> None:
    """Ops read the default dtype at trace time: drop compiled programs when it changes."""
    for cache in (_FORWARD_CACHE, _SHAPE_CACHE):
        cache.clear()
    _compile_cache.drop(_FUSED_CACHE)


def bounded(cache: dict) -> dict:
    """``cache``, emptied first when it reached the limit (a crude bound on compiled programs kept)."""
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    return cache


def _forward_with_vjp(key: Any, fn: Callable, diff: tuple, dynamic: bool) -> Callable:
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


# ----------------------------------------------------------------------------- integer gradients
# MXNet gives an integer variable a gradient of its own dtype (d(x*x)/dx = 2x for int32 x): each op's
# backward kernel runs in the input's dtype, so a fractional gradient truncates toward zero where it
# enters an integer array.  JAX has no cotangents for integers (float0), so an op with differentiated
# integer inputs is differentiated at float "twins" of them, its outputs' cotangents cast to the
# twin's output dtypes and the input gradients cast back to the integer dtypes (the truncation).

def _integer(dtype: Any) -> bool:
    return onp.dtype(dtype).kind in "iu"


def _int_tracked(entry: Any, dtype: Any) -> bool:
    """Whether an integer input is differentiated: an integer variable, or an integer output of a
    node that differentiated integers.  (An argmax of floats stays out: its gradient is zero anyway,
    and its indices feed take/one_hot, which cannot run on float twins.)"""
    return (type(entry) is Leaf or entry[0].ints) and _integer(dtype)


def _integer_only(inputs: Sequence[Any], diff: list, entries: list) -> bool:
    """An op with a float array input gives its integer inputs no gradient (MXNet's mixed int/float
    ops do not: ``(i * w).sum()`` leaves ``i.grad`` zero, tracked ``w`` or not); then they are
    dropped from ``diff``.  Returns whether integer inputs are still differentiated."""
    if not any(isinstance(x, NDArray) and _inexact(x._data.dtype) for x in inputs):
        return True
    for i in [i for i in diff if not _inexact(inputs[i]._data.dtype)]:
        diff.remove(i)
        entries[i] = None
    return False


def _twin(x: Any) -> Any:
    """The float stand-in of an integer array: exact for 16-bit integers in float32, for 32-bit (and
    53-bit) ones in float64."""
    return x.astype(jnp.float32 if x.dtype.itemsize <= 2 else jnp.float64)


def _as_float_out(out: Any) -> Any:
    """A twin's outputs, integer ones as float32 (their cotangent is zero, as MXNet's for argmax)."""
    if isinstance(out, (tuple, list)):
        return tuple(map(_as_float_out, out))
    return out if _inexact(out.dtype) else out.astype(jnp.float32)


@functools.lru_cache(maxsize=256)
def _cast_pullback(out_dtypes: tuple, in_dtypes: tuple) -> Callable:
    """The pullback of a twin: output cotangents cast to the twin's dtypes, input gradients to the
    inputs' own (one function per signature, so jitted callers see a stable static part)."""
    def pullback(vjp: Any, cotangents: Any) -> tuple:
        leaves, tree = jax.tree.flatten(cotangents)
        cast = tree.unflatten([c.astype(d) for c, d in zip(leaves, out_dtypes)])
        return tuple(g.astype(d) for g, d in zip(vjp(cast), in_dtypes))
    return pullback


def vjp_of(fn: Callable, inputs: Sequence[Any], diff: tuple) -> tuple:
    """``(outputs, pullback)`` of ``fn`` at ``inputs`` w.r.t. the ``diff`` positions (``jax.vjp``);
    integer positions get gradients of their own dtype (see above)."""
    def partial_fn(*diff_inputs: Any) -> Any:
        full = list(inputs)
        for i, value in zip(diff, diff_inputs):
            full[i] = value
        return fn(*full)
    ints = [i for i in diff if not _inexact(inputs[i].dtype)]
    if not ints:
        return jax.vjp(partial_fn, *(inputs[i] for i in diff))
    out = fn(*inputs)  # the values as the integers give them (overflow, integer division...)
    twin_out, vjp = jax.vjp(lambda *d: _as_float_out(partial_fn(*d)),
                            *(_twin(inputs[i]) if i in ints else inputs[i] for i in diff))
    pullback = _cast_pullback(tuple(o.dtype for o in jax.tree.leaves(twin_out)),
                              tuple(inputs[i].dtype for i in diff))
    return out, jax.tree_util.Partial(pullback, vjp)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _truncate_grad(x: Any, dtype: Any) -> Any:
    """Identity on a twin whose gradient is truncated as it would be in ``dtype`` (an integer
    array read by an op of a fused program: MXNet's per-op integer backward)."""
    return x


def _truncate_fwd(x: Any, dtype: Any) -> tuple:
    return x, None


def _truncate_bwd(dtype: Any, _: Any, ct: Any) -> tuple:
    return (ct.astype(dtype).astype(ct.dtype),)


_truncate_grad.defvjp(_truncate_fwd, _truncate_bwd)


def _aval_key(x: Any) -> Any:
    data = getattr(x, "_data", x)
    shape = getattr(data, "shape", None)
    if shape is not None:
        return (tuple(shape), data.dtype)
    try:
        hash(x)
    except TypeError:
        return ("id", id(x))
    return ("const", type(x).__name__, x)


# ----------------------------------------------------------------------------- recording

def record(key: Any, fn: Callable, inputs: Sequence[Any], out_cls: type | None, name: str,
           dynamic: bool = False, defer: bool = False, repeat: bool = False) -> Any:
    """Record ``fn`` on the inputs and return its outputs wrapped.

    The node runs now, unless ``defer`` is set or an input is a lazy output of a
    deferred node (and ``fn`` has static shapes): then it is deferred too.  With
    ``repeat`` (an imperative op, whose own programs every structure shares) its
    region compiles into one program only from the second time its structure is seen.
    """
    n = len(inputs)
    diff, entries, datas, shape_key, lazy, ints = [], [None] * n, list(inputs), [key], False, False
    for i, x in enumerate(inputs):  # one pass: this runs for every recorded op
        if isinstance(x, NDArray):
            data = x._data
            dtype = data.dtype
            if out_cls is None:
                out_cls = type(x)
            ag = x._ag
            if ag is not None:
                if _INEXACT.get(dtype) or _inexact(dtype):
                    diff.append(i)
                    entries[i] = ag
                elif _int_tracked(ag, dtype):
                    diff.append(i)
                    entries[i] = ag
                    ints = True
            shape_key.append((data.shape, dtype))
            var = x._var
            if var is None:
                datas[i] = data
            elif _unplanned(var):
                lazy = True
                datas[i] = _LAZY_INPUT
            else:
                datas[i] = x.to_jax()
        else:
            shape_key.append(_aval_key(x))
    if ints:
        ints = _integer_only(inputs, diff, entries)
    diff, entries = tuple(diff), tuple(entries)
    if not dynamic and (defer or lazy):
        return _record_deferred(tuple(shape_key), fn, inputs, out_cls, name, diff, entries, datas, ints,
                                repeat and defer)
    if lazy:  # a dynamic-shape op reads its lazy inputs now
        datas = [x.to_jax() if d is _LAZY_INPUT else d for x, d in zip(inputs, datas)]
    try:
        out, vjp = _forward_with_vjp(key, fn, diff, dynamic)(*datas)
    except MXNetError:
        raise
    except Exception as err:
        raise op_error(NamedOp(name), inputs, None, err) from None
    outs = wrap_outputs(out, out_cls)
    results = outs if isinstance(outs, tuple) else (outs,)
    avals = tuple((r._data.shape, r._data.dtype) for r in results)  # for zero cotangents of unused outputs
    node = Node(key, fn, tuple(inputs), entries, diff, vjp, avals, isinstance(outs, tuple), name,
                dynamic=dynamic)
    node.ints = ints
    for i, r in enumerate(results):
        r._ag = (node, i)
    return outs


_INEXACT: dict = {}


def _inexact(dtype: Any) -> bool:
    found = _INEXACT.get(dtype)
    if found is None:
        found = _INEXACT[dtype] = bool(jnp.issubdtype(dtype, jnp.inexact))
    return found


def _record_deferred(cache_key: tuple, fn: Callable, inputs: Sequence[Any], out_cls: type, name: str,
                     diff: tuple, entries: tuple, datas: list, ints: bool = False, repeat: bool = False) -> Any:
    """A deferred node; ``cache_key`` is ``(key, *input avals)``, ``datas`` the input values with
    lazy ones marked ``_LAZY_INPUT``."""
    out = _SHAPE_CACHE.get(cache_key)
    if out is None:
        avals = [jax.ShapeDtypeStruct(x._data.shape, x._data.dtype) if isinstance(x, NDArray) else x
                 for x in inputs]
        try:
            # (a new function each time: JAX would reuse a trace of ``fn`` made under another default dtype)
            out = jax.eval_shape(lambda *a: fn(*a), *avals)
        except MXNetError:
            raise
        except Exception as err:
            raise op_error(NamedOp(name), inputs, None, err) from None
        # the inputs' avals as a program sees them: a Python value is an input like any other
        sig = tuple(aval if isinstance(x, NDArray) else ("py", type(x).__name__)
                    for x, aval in zip(inputs, cache_key[1:]))
        out = bounded(_SHAPE_CACHE)[cache_key] = (*_shape_entry(out), sig)
    multi, avals, structs, sig = out
    node = Node(cache_key[0], fn, tuple(inputs), entries, diff, None, avals, multi, name)
    node.datas = tuple(datas)
    node.sig = sig
    node.ints = ints
    node.repeat = repeat
    region = None  # a node without lazy inputs starts a region; one reading only one region's joins it
    for x, data in zip(inputs, datas):
        if data is _LAZY_INPUT:
            joined = x._var.node.region
            if joined is None or region not in (None, joined):
                region = False
                break
            region = joined
    if region is not False:
        node.region = region = _Plan() if region is None else region
        region.add(node)
    if multi:
        results = tuple(out_cls._wrap(struct) for struct in structs)  # shared: a lazy _data is read-only
        for i, r in enumerate(results):
            r._ag = (node, i)
            r._var = _Deferred(node, i)
        return results
    result = out_cls._wrap(structs[0])
    result._ag = (node, 0)
    result._var = _Deferred(node, 0)
    return result


def _shape_entry(out: Any) -> tuple:
    multi = isinstance(out, (tuple, list))
    outs = tuple(out) if multi else (out,)
    return multi, tuple((o.shape, o.dtype) for o in outs), tuple(_struct(o.shape, o.dtype) for o in outs)


@functools.lru_cache(maxsize=1024)
def _struct(shape: tuple, dtype: Any) -> jax.ShapeDtypeStruct:
    """One ShapeDtypeStruct per shape and dtype: the stand-in ``_data`` of lazy arrays."""
    return jax.ShapeDtypeStruct(shape, dtype)


def materialize(nodes: Sequence[Node]) -> None:
    """Run these deferred nodes and the deferred nodes they read, oldest first, as ordinary nodes."""
    with _LOCK:
        todo, stack, seen = [], list(nodes), set()
        while stack:
            node = stack.pop()
            if id(node) in seen or not node.deferred:
                continue
            seen.add(id(node))
            todo.append(node)
            stack.extend(x._var.node for x in node.inputs if is_deferred(x))
        for node in sorted(todo, key=seq_of):
            if node.fused is not None:  # planned by a lazy backward: that program computes it
                node.fused.run()
                continue
            datas = tuple(x.to_jax() if d is _LAZY_INPUT else d for x, d in zip(node.inputs, node.datas))
            node.region = None  # run on its own: no longer part of a region's program
            try:
                out, node.vjp = _forward_with_vjp(node.key, node.fn, node.diff, False)(*datas)
            except MXNetError:
                raise
            except Exception as err:
                raise op_error(NamedOp(node.name), node.inputs, None, err) from None
            node.values = tuple(out) if node.multi else (out,)
            node.datas = None


# ----------------------------------------------------------------------------- fused backward

_STRUCTURES: dict = {}
_SIGHTINGS = _bulk.Sightings()  # regions of imperative ops run one by one (see _Plan.fuse_now)
_structure_ids = itertools.count()


def _structure_id(structure: tuple) -> int:
    """A small number standing for a region's (large) structure, so later cache keys hash cheaply;
    numbers are never reused, so a cleared table only costs recompiles."""
    found = _STRUCTURES.get(structure)
    if found is None:
        found = bounded(_STRUCTURES)[structure] = next(_structure_ids)
    return found


def _probe_refcounts() -> tuple[int, int]:
    """What ``sys.getrefcount`` says here of an object held by a list and a local name, and of one
    held by a list only: the interpreter's own references (the call's argument...) included."""
    probe = object()
    holder = [probe]
    named = sys.getrefcount(probe)
    del probe
    return named, sys.getrefcount(holder[0])


_NAMED_REFS, _HELD_REFS = _probe_refcounts()


def _kept(nodes: list[Node], internal: list) -> tuple:
    """Per node, which outputs a program returns: not those that only later nodes of the program
    read.  Nothing else holds their arrays (not the user, a view or a weak reference), so nothing
    can read them afterwards; returning them would keep every intermediate of the loss alive (a
    ``log_softmax`` over a vocabulary) and cost an output buffer each.  ``internal``: the plan's
    reads of its own nodes' outputs (see :meth:`_Plan.add`)."""
    kept = [[True] * len(node.out_avals) for node in nodes]
    read: dict = {}  # id(array) -> [array, uses, producer position, output index]
    for position, slot, k, i in internal:
        x = nodes[position].inputs[slot]
        found = read.get(id(x))
        if found is None:
            read[id(x)] = [x, 1, k, i]
        else:
            found[1] += 1
    x = None  # (the loop's last reference would count below)
    for entry in read.values():
        x, uses, k, i = entry
        # x is held by ``entry``, the name x and one consumer input per use, and nothing else; its lazy
        # _var by x only (a view shares it)
        if (sys.getrefcount(x) == _NAMED_REFS + uses and sys.getrefcount(x._var) == _HELD_REFS
                and not weakref.getweakrefcount(x)):
            kept[k][i] = False
    return tuple(map(tuple, kept))


class _Plan:
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
        self.node_wiring: list = []  # per node: (key, diff, multi, input slots)
        # once sealed, the program's structure: (node wiring, cotangent slots, diff positions, target
        # slots, kept outputs)
        self.wiring: tuple | None = None
        self.read: list = []  # per node: whether a later node reads an output
        self.unread = 0
        self.internal: list = []  # (node position, slot, producer position, output index) per such read

    def add(self, node: Node) -> None:
        """Wire ``node`` in after the nodes added so far."""
        local, read, ext_values, entries, inputs = self.local, self.read, self.ext_values, node.entries, node.inputs
        slots = []
        for slot, data in enumerate(node.datas):
            if data is _LAZY_INPUT:
                var = inputs[slot]._var
                k = local.get(id(var.node)) if type(var) is _Deferred else None
                if k is not None:
                    slots.append((k, var.index))
                    self.internal.append((len(self.refs), slot, k, var.index))
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
            slots.append((-1, len(ext_values)))
            ext_values.append(data)
        local[id(node)] = len(self.refs)
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
    def of(cls, deferred: list[Node], cotangents: dict) -> "_Plan":
        """The sealed plan of these deferred nodes (all reachable from the heads)."""
        plan = cls()
        for node in sorted(deferred, key=seq_of):
            plan.add(node)
        plan.seal(cotangents)
        return plan

    def core(self) -> Callable:
        """``(ext_values, cts, olds) -> (kept node outputs, target gradients)``; ``olds[t]`` (or None) is
        added to target t's gradient (``grad_req='add'``); ``olds`` is None when no target adds."""
        fns, multis = [n.fn for n in self.nodes], [n.multi for n in self.nodes]
        wiring, ct_refs, diff_positions, target_slots, kept = self.wiring
        slots_of = [w[3] for w in wiring]
        out_dtypes = [[aval[1] for aval in n.out_avals] for n in self.nodes]

        def forward(diff_values: list, ext_values: list, twin: bool = False) -> tuple:
            ext = list(ext_values)
            for p, v in zip(diff_positions, diff_values):
                ext[p] = v
            outs: list = []
            for fn, slots, multi in zip(fns, slots_of, multis):
                args = [ext[i] if k < 0 else outs[k][i] for k, i in slots]
                if twin:  # a float twin where the op reads an integer: truncate its gradient there
                    for a, (k, i) in enumerate(slots):
                        actual = getattr(ext_values[i], "dtype", None) if k < 0 else out_dtypes[k][i]
                        if actual is not None and _integer(actual) and _inexact(args[a].dtype):
                            args[a] = _truncate_grad(args[a], onp.dtype(actual))
                out = fn(*args)
                outs.append(tuple(out) if multi else (out,))
            return [outs[k][i] for k, i in ct_refs], outs

        def core(ext_values: list, cts: list, olds: list | None) -> tuple:
            primals = [ext_values[p] for p in diff_positions]
            if all(_inexact(v.dtype) for v in primals):
                _, vjp, outs = jax.vjp(lambda d: forward(d, ext_values), primals, has_aux=True)
                (grads,) = vjp(cts)
            else:  # integer variables: the values from the integers, the gradients from float twins
                _, outs = forward(primals, ext_values)
                twin_outs, vjp = jax.vjp(lambda d: _as_float_out(forward(d, ext_values, True)[0]),
                                         [v if _inexact(v.dtype) else _twin(v) for v in primals])
                (grads,) = vjp(tuple(c.astype(o.dtype) for c, o in zip(cts, twin_outs)))
                grads = [g.astype(v.dtype) for g, v in zip(grads, primals)]
            totals = []
            for slots, old in zip(target_slots, olds or [None] * len(target_slots)):
                total = grads[slots[0]]
                for s in slots[1:]:
                    total = total + grads[s]
                totals.append(total if old is None else old + total.astype(old.dtype))
            return [o for out, keeps in zip(outs, kept) for o, keep in zip(out, keeps) if keep], totals
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
        return self.key in _FUSED_CACHE or _SIGHTINGS.ready(self.key)

    def sighted(self) -> None:
        _SIGHTINGS.note(self.key)

    def program(self) -> Callable:
        """The jitted :meth:`core`, cached by the region's structure."""
        program = _compile_cache.lookup(_FUSED_CACHE, self.key)
        if program is None:
            program = _compile_cache.store(_FUSED_CACHE, self.key, jax.jit(self.core()))
        return program

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


def plan_backward(deferred: list[Node], cotangents: dict) -> "_Plan | None":
    """The sealed plan of a region of deferred nodes, taking the cotangents arriving at its outputs
    out of ``cotangents``; or None when the region is a first sighting of imperative ops (see
    :meth:`_Plan.fuse_now`): then its nodes ran one by one and the cotangents stay in
    ``cotangents`` for the caller's node-by-node backward."""
    with _LOCK:
        plan = _Plan.of(deferred, cotangents)
        if plan.fuse_now():
            return plan
        plan.sighted()
        cotangents.update({(id(plan.nodes[k]), i): ct for (k, i), ct in zip(plan.wiring[1], plan.cts)})
        materialize(deferred)
        return None


def fused_backward(plan: "_Plan") -> list[tuple[Any, Any]]:
    """Forward + VJP of a planned region (:func:`plan_backward`) as one compiled program, run now.
    Returns ``[(entry, gradient)]`` for the differentiable entries outside the region that feed
    it.  The nodes end up computed and freed, as after a backward."""
    with _LOCK:
        try:
            values, grads = plan.program()(plan.ext_values, plan.cts, None)  # nothing to add to
        except MXNetError:
            raise
        except Exception as err:
            raise plan.error(err) from None
        plan.finish(values)
        return list(zip(plan.targets, grads))


def defer_backward(plan: "_Plan") -> bool:
    """Like :func:`fused_backward` for a region whose gradients all go to variables, but lazily:
    their ``.grad`` buffers (and the region's values) become lazy outputs of one pending
    program, run when one is read -- or fused with the optimizer's update by
    :meth:`PendingBackward.run`.  Returns False (nothing done) if the region does not qualify."""
    if not plan.leaf_targets:
        return False
    with _LOCK:
        PendingBackward(plan)
    return True


def region_of(head: NDArray) -> _Plan | None:
    """The region (wired while recording) whose nodes computed ``head``, if any."""
    entry = head._ag
    return entry[0].region if type(entry) is tuple else None


def defer_region_backward(region: _Plan, head: NDArray, seed: Any) -> bool:
    """:func:`defer_backward` from one head whose ``region`` (see :func:`region_of`) is exactly what it
    depends on -- the usual training step -- without walking the graph.  False: nothing done."""
    if not region.leaf_targets:
        return False
    node, index = head._ag
    with _LOCK:
        if not region.chain_to(node):
            return False
        region.seal({(id(node), index): seed})
        if not region.fuse_now():
            return False
        PendingBackward(region)
        return True


class _GradLazy(Lazy):
    """The ``_var`` of a gradient buffer written by a backward that has not run yet."""

    __slots__ = ("run", "index")

    def __init__(self, run: "PendingBackward", index: int) -> None:
        self.run, self.index = run, index

    def compute(self, array: NDArray) -> Any:
        self.run.run()
        return self.run.grad(self.index, array._data.dtype)


class _PackedGrad(Lazy):
    """The ``_var`` of a gradient buffer whose value is a slice of a packed output (see _Packing)."""

    __slots__ = ("packed", "offset", "shape")

    def __init__(self, packed: jax.Array, offset: int, shape: tuple) -> None:
        self.packed, self.offset, self.shape = packed, offset, shape

    def compute(self, array: NDArray) -> Any:
        return _as_dtype(_unpack(self.packed, self.offset, self.shape), array._data.dtype)


class PendingBackward:
    """A backward pass compiled but not run: it runs when any of its results is read, or
    together with an optimizer update (``run(update=...)``) in one program."""

    def __init__(self, plan: _Plan) -> None:
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
            data = buffer._data
            if type(data) is not jax.ShapeDtypeStruct:  # (still one: a packed gradient never read)
                buffer._data = _struct(data.shape, data.dtype)
            buffer._var = _GradLazy(self, index)
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
        (donating weights and states) and its result is returned."""
        with _LOCK:
            if self.grads is not None:
                if update is not None:
                    raise MXNetError("internal: a fused update on a backward that already ran")
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
                found = _compile_cache.lookup(_FUSED_CACHE, full_key)
                if found is None:
                    layout = _Packing(plan.grad_avals(olds))
                    found = _compile_cache.store(_FUSED_CACHE, full_key,
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
            for t, buffer in enumerate(self.buffers):
                var = buffer._var if buffer is not None else None
                if type(var) is _GradLazy and var.run is self:  # (not rewritten since the backward)
                    place = places.get(t)
                    if place is None:
                        buffer._data, buffer._var = self.grad(t, buffer._data.dtype), None
                    else:  # the buffer holds its packed output only, not this run
                        buffer._var = _PackedGrad(self.packed[place[0]], *place[1:])
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
