"""Recording an op on the tape: run now with its VJP, or deferred (lazy outputs) so that a
region of ops runs later as one program.

``_record.c`` does exactly what :func:`record`, :func:`_record_deferred`, :func:`_alias` and
``Plan.add`` do for a deferred node whose input avals were seen before (the usual op of a
training step); a change to one of them is a change to both."""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Sequence

import jax

from ..base import MXNetError
from .._ndarray import NDArray
from .._invoke import op_error, wrap_outputs
from .ints import INEXACT, inexact, int_tracked, integer_only
from ..graph import bulk as _bulk
from ..graph.lazy import Pending
from .nodes import (LAZY_INPUT, LOCK, SHAPE_CACHE, Leaf, NamedOp, Node, aval_key, bounded, forward_with_vjp, sequence,
                    shape_entry)
from .plan import UNRUN, Plan

try:  # the deferred case in C (_tape/_record.c), built with the package where a C compiler was found
    from ._record import configure as _configure_c, record as _record_c
except ImportError:
    _configure_c = _record_c = None
_native = None  # the C recorder while in use (see use_native)
_local = threading.local()  # ``region``: a weak reference to the thread's region (see current_region)


def current_region() -> Plan | None:
    """The thread's open region: the deferred nodes it records join it (None: the next one starts
    one).  Held weakly: a region nobody's nodes hold is gone."""
    ref = getattr(_local, "region", None)
    region = ref() if ref is not None else None
    return region if region is not None and region.open else None


def _open_region() -> Plan:
    """The thread's open region, or a new one made its open region (call under ``LOCK``)."""
    region = current_region()
    if region is None:
        region = Plan()
        _local.region = weakref.ref(region)
    return region


def reads_region(inputs: Sequence[Any]) -> bool:
    """Whether an input is a value of the thread's open region (not computed yet)."""
    region = current_region()
    if region is not None:
        for x in inputs:
            if isinstance(x, NDArray) and type(x._var) is Pending and x._var.segment is region:
                return True
    return False


def _adopt_segment(value: Pending) -> bool:
    """A deferred node reads ``value``, a value of this thread's bulk segment not run yet (an op
    inside ``record`` on concrete arrays, ``x / 255`` before ``net``): move the segment into the
    thread's open region (``Plan.adopt``), so that one program computes both.  False where
    ``value`` is another thread's, or computed meanwhile: it is read then."""
    segment = value.segment
    if type(segment) is not _bulk.Segment or segment is not _bulk.current():
        return False
    with LOCK:
        region = _open_region()
        return segment.hand_over(region.adopt) and value.segment is region and region.open


def native_adopting(key: Any, fn: Callable, inputs: Sequence[Any], out_cls: type | None, name: str, defer: bool,
                    repeat: bool) -> Any:
    """Where the C recorder declined a deferred node: if an input is a value of this thread's bulk
    segment, the segment is taken in (:func:`_adopt_segment`) and the C recorder records the node;
    else NotImplemented (the Python recorder does).  ``graph/_record.c``'s operator methods call this
    too, so ``net(x / 255)`` inside ``record`` stays on the C path but for the adoption."""
    for x in inputs:
        if isinstance(x, NDArray) and type(x._var) is Pending and _adopt_segment(x._var):
            return _native(key, fn, inputs, out_cls, name, defer, repeat)
    return NotImplemented


def run_readers(buffers: list, keep: Any) -> None:
    """An update is about to donate ``buffers`` (``graph.bulk.before_donation``): run each region not
    run yet that reads one -- its values would be computed from deleted buffers -- but the one whose
    backward runs with the update (``keep``, a ``pending.PendingBackward``: it takes the new values)."""
    held = getattr(keep, "plan", None)
    skip = getattr(held, "plan", held)  # (a region's, or the region of a ``composed.Composed``)
    regions = [region for region in list(UNRUN) if region is not skip and not region.done]
    if regions:  # (a training step's usual case: none but the update's own)
        ids = set(map(id, buffers))
        for region in regions:
            if any(id(value) in ids for value in region.ext_values):
                region.run()


_bulk.on_donation(run_readers)


def use_native(enabled: bool = True) -> bool:
    """Record deferred nodes with the C recorder (where it was built) or in Python only; returns
    whether the C one is now in use.  Both do the same, the C one in a fraction of the time."""
    global _native
    _native = _record_c if enabled and _record_c is not None and _configure_c(
        NDArray, Node, Pending, Plan, Leaf, SHAPE_CACHE, INEXACT, LAZY_INPUT, aval_key, sequence, _local,
        LOCK) else None
    return _native is not None


def record(key: Any, fn: Callable, inputs: Sequence[Any], out_cls: type | None, name: str,
           dynamic: bool = False, defer: bool = False, repeat: bool = False, tracked: bool = True) -> Any:
    """Record ``fn`` on the inputs and return its outputs wrapped.

    The node runs now, unless ``defer`` is set or an input is a lazy output of a
    deferred node of this thread's open region (and ``fn`` has static shapes): then it is deferred
    too, and joins the region.  A lazy input of another region (closed, or another thread's) is
    read first.  With
    ``repeat`` (an imperative op, whose own programs every structure shares) its
    region compiles into one program only from the second time its structure is seen.  Not
    ``tracked`` (no input is differentiated: an op on a detached value of the region), the op
    joins the region as a step its outputs do not point back to (``_ag`` None): computed while
    they are held, without a VJP.
    """
    if _native is not None and not dynamic and tracked:  # the common deferred case, in C; else NotImplemented
        out = _native(key, fn, inputs, out_cls, name, defer, repeat)
        if out is NotImplemented and defer:
            out = native_adopting(key, fn, inputs, out_cls, name, defer, repeat)
        if out is not NotImplemented:
            return out
    n = len(inputs)
    region = current_region()
    diff, entries, datas, shape_key, lazy, ints = [], [None] * n, list(inputs), [key], False, False
    for i, x in enumerate(inputs):  # one pass: this runs for every recorded op
        if isinstance(x, NDArray):
            var = x._var  # (before _data: a read settling x in another thread sets _data, then _var)
            data = x._data
            dtype = data.dtype
            if out_cls is None:
                out_cls = type(x)
            ag = x._ag
            if ag is not None:
                if INEXACT.get(dtype) or inexact(dtype):
                    diff.append(i)
                    entries[i] = ag
                elif int_tracked(ag, dtype):
                    diff.append(i)
                    entries[i] = ag
                    ints = True
            shape_key.append((data.shape, dtype))
            if var is None:
                datas[i] = data
            elif type(var) is Pending and region is not None and var.segment is region:
                lazy = True
                datas[i] = LAZY_INPUT
            elif defer and not dynamic and type(var) is Pending and _adopt_segment(var):
                region = current_region()  # (the segment's values are the region's now)
                lazy = True
                datas[i] = LAZY_INPUT
            else:
                datas[i] = x.to_jax()
        else:
            shape_key.append(aval_key(x))
    if ints:
        ints = integer_only(inputs, diff, entries)
    diff, entries = tuple(diff), tuple(entries)
    if not dynamic and (defer or lazy):
        return _record_deferred(tuple(shape_key), fn, inputs, out_cls, name, diff, entries, datas, ints,
                                repeat and defer, tracked)
    if lazy:  # a dynamic-shape op reads its lazy inputs now
        datas = [x.to_jax() if d is LAZY_INPUT else d for x, d in zip(inputs, datas)]
    try:
        out, vjp = forward_with_vjp(key, fn, diff, dynamic)(*datas)
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
    if tracked:
        for i, r in enumerate(results):
            r._ag = (node, i)
    return outs


def _record_deferred(cache_key: tuple, fn: Callable, inputs: Sequence[Any], out_cls: type, name: str,
                     diff: tuple, entries: tuple, datas: list, ints: bool = False, repeat: bool = False,
                     tracked: bool = True) -> Any:
    """A deferred node; ``cache_key`` is ``(key, *input avals)``, ``datas`` the input values with
    lazy ones marked ``LAZY_INPUT``."""
    out = SHAPE_CACHE.get(cache_key)
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
        out = bounded(SHAPE_CACHE)[cache_key] = (*shape_entry(out), sig)
    multi, avals, structs, sig = out
    held = [_alias(x) if data is LAZY_INPUT else x for x, data in zip(inputs, datas)]
    node = Node(cache_key[0], fn, tuple(held), entries, diff, None, avals, multi, name)
    node.ints = ints
    with LOCK:  # (a read from another thread closes the region under it: it finds the outputs made)
        region = _open_region()
        node.region = region
        region.add(node, tuple(datas), sig, repeat)  # (a lazy input whose region closed meanwhile is read there)
        results = [_output(node, i, region, struct, out_cls, tracked) for i, struct in enumerate(structs)]
    return tuple(results) if multi else results[0]


def _output(node: Node, index: int, region: Plan, struct: Any, out_cls: type, tracked: bool = True) -> NDArray:
    """Output ``index`` of ``node``, just added to ``region``: an ``out_cls`` array (its ``_data`` the
    shared stand-in struct: a lazy ``_data`` is read-only) whose ``_var`` is a new ``Pending`` of the
    region (its position among the region's outputs, as the region's wiring refers to it, and by
    which the region hands it its value)."""
    result = out_cls._wrap(struct)
    if tracked:
        result._ag = (node, index)
    region.handles.append(weakref.ref(Pending.held_by(result, region, region.starts[-2] + index, None, None)))
    return result


def _alias(x: NDArray) -> NDArray:
    """What a deferred node holds for a lazy input ``x``: another array object with ``x``'s value
    and graph entry, so that whether anyone else still holds ``x`` stays observable (by weak
    reference: see ``plan.Plan._kept``)."""
    alias = object.__new__(type(x))
    alias._data, alias._var, alias._ag, alias._dc = x._data, x._var, x._ag, x._dc
    return alias


use_native()
