"""Bulk execution of imperative ops: record them now, run a segment as one XLA program at a read.

With bulk execution on (the default; ``MXNET_EXEC_BULK_EXEC_IMPERATIVE=0`` or
``engine.set_imperative_bulk(False)`` turns it off) an imperative op on concrete arrays
does not run at once: NDArray's invoke infers the outputs' shapes and dtypes (cached per
op, parameters and input types, so a shape error is still raised at the user's line) and
appends the op to this thread's :class:`Segment`; its outputs are arrays whose ``_var`` is
a :class:`Pending` (:func:`record`: the C version in ``_record.c`` where it was built, else
:func:`record_python`).  A segment runs when one of its values is read (``asnumpy``,
``wait_to_read``, an op that needs values on the host), at ``waitall``, at either end of
an ``engine.bulk`` scope, before an update donates buffers, or when it holds
``MXNET_EXEC_BULK_EXEC_MAX_NODE_IMPERATIVE`` ops (default 64; ``engine.bulk(n)`` sets it
for a scope).  Inside ``autograd.record`` a deferred node that reads one of its values takes the
segment whole into its region instead (``Segment.hand_over``), and one program computes both.

How a segment runs -- op by op the first times its structure is seen, then as one program --
is ``_bulk_run``'s.

Python scalars are constants of the program, as MXNet's scalar ops hold them as
parameters: a scalar that changes at every step makes a new structure each time, which
keeps running op by op.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Sequence

import jax
import numpy as onp
from jax._src.array import ArrayImpl

from .. import _config
from ..base import MXNetValueError
from ..device import jax_default_device
from ._bulk_policy import Sightings, _settings
from ._bulk_run import execute, replay
from .lazy import Pending

__all__ = ["Pending", "Segment", "Sightings", "before_donation", "current", "flush_all", "on_donation", "record",
           "record_python", "settings", "configure", "configure_methods", "configure_tape", "operator_method",
           "try_record", "use_native"]

_swap_x64, _restore_x64 = _config.swap_x64, _config.restore_x64
_ArrayImpl = ArrayImpl  # a concrete jax.Array (never a tracer); named without building one (which
# would start JAX's backend at import: the DataLoader's fork server must not)
_CONST = (int, float, bool, complex)
_HostArray = onp.ndarray
_new = object.__new__


# Set by the NDArray layer (``configure``): its array class, how it names a failed op, and how
# it infers an op's outputs.
_array_type: type = type(None)
_op_error: Callable[..., Exception] = lambda op, inputs, params, err: err  # noqa: E731
_infer: Callable[..., Any] = lambda op, inputs, params: None  # noqa: E731


def configure(array_type: type, op_error: Callable[..., Exception], infer: Callable[..., Any]) -> None:
    """Called once by the NDArray layer: the array class whose ops are recorded;
    ``op_error(op, inputs, params, err)``, the error that names a failed op and its inputs; and
    ``infer(op, inputs, params)``, the op's output structs (raising the op's error)."""
    global _array_type, _op_error, _infer
    _array_type, _op_error, _infer = array_type, op_error, infer
    if _native is not None:
        _native.configure(array_type, Pending, Segment, _ArrayImpl, _INFERRED, _inferred, _HostArray, host_leaf)
        use_native(True)


class Segment:
    """One thread's recorded ops, not run yet.  ``lock`` guards recording against a run from
    another thread (a read of a value this thread recorded)."""

    __slots__ = ("nodes", "leaves", "leaf_refs", "handles", "lock", "cap", "__weakref__")

    def __init__(self, cap: int) -> None:
        self.lock = threading.Lock()
        self.cap = cap
        self._reset()

    def _reset(self) -> None:
        self.nodes: list = []      # (op, fn, params, args, multi); (fn, args) of each: the structure key
        self.leaves: list = []     # concrete input arrays, in order of first use
        self.leaf_refs: dict = {}  # id(leaf) -> its ref (-1 - position)
        self.handles: list = []    # Pending outputs, in order

    def device_of(self, handle: Pending) -> Any:
        """Where a value not computed yet will be: where its op's first array input is (``source``:
        a leaf's ref, or a handle of the segment), or, for an op that makes new arrays, JAX's
        default device (such ops are recorded only where that is the current device)."""
        while handle.value is None:
            source = handle.source
            if source is None:
                return jax_default_device()
            if source < 0:
                return next(iter(self.leaves[-1 - source].devices()))
            handle = self.handles[source]
        return next(iter(handle.value.devices()))

    def hand_over(self, receive: Callable[[list, list, list], None]) -> bool:
        """Give what this segment recorded, not run yet, to another graph: ``receive(nodes, leaves,
        handles)`` takes it in (and points the handles at itself) while no read can run it; a new
        segment starts.  False if there was nothing to give (it ran meanwhile)."""
        with self.lock:
            if not self.nodes:
                return False
            receive(self.nodes, self.leaves, self.handles)
            self._reset()
            return True

    def run(self) -> None:
        """Compute every value of this segment an array still holds, and start a new segment."""
        with self.lock:
            nodes = self.nodes
            if not nodes:
                return
            leaves, handles = self.leaves, self.handles
            self._reset()
            wanted = tuple([i for i, h in enumerate(handles)  # (``Pending.held``, inlined: per op)
                            if h.owner() is not None or (h.sharers is not None and h.held())])
            if not wanted:
                return
            if len(nodes) == 1:  # one op: its own compiled function is that program already
                replay(nodes, leaves, handles, _op_error)
            else:
                execute(nodes, leaves, handles, wanted, _op_error)


_local = threading.local()
_segments: "weakref.WeakSet[Segment]" = weakref.WeakSet()
_segments_lock = threading.Lock()


def current() -> Segment | None:
    """This thread's segment, or None while bulk execution is off."""
    if not _settings["enabled"]:
        return None
    try:
        return _local.segment
    except AttributeError:
        segment = _local.segment = Segment(_settings["max_nodes"])
        with _segments_lock:
            _segments.add(segment)
        return segment


def flush_all() -> None:
    """Run every thread's segment (``waitall``, and before buffers are donated)."""
    with _segments_lock:  # (the WeakSet's references read directly: its iterator costs microseconds)
        segments = [s for s in map(weakref.ref.__call__, _segments.data) if s is not None and s.nodes]
    for segment in segments:
        segment.run()


_donation_hooks: list = []


def before_donation(buffers: list, keep: Any = None) -> None:
    """An update is about to donate ``buffers``: compute what was recorded and not run yet that may
    read them -- every thread's segment, and what other recorders registered (:func:`on_donation`:
    autograd's regions not run, but ``keep``, the backward the update runs with)."""
    flush_all()
    for hook in _donation_hooks:
        hook(buffers, keep)


def on_donation(hook: Callable[[list, Any], None]) -> None:
    """``hook(buffers, keep)`` runs before an update donates ``buffers`` (see :func:`before_donation`)."""
    _donation_hooks.append(hook)


def set_cap(size: int | None) -> int:
    """This thread's segment size limit (None: the default); returns the previous one."""
    segment = current()
    if segment is None:  # bulk execution is off: nothing to size
        return size if size is not None else _settings["max_nodes"]
    previous = segment.cap
    segment.run()
    segment.cap = max(1, int(size)) if size is not None else _settings["max_nodes"]
    return previous


def settings(enabled: bool | None = None, max_nodes: int | None = None,
             compile_after: int | None = None) -> dict:
    """Change the bulk policy (None keeps a setting); returns the previous settings."""
    previous = dict(_settings)
    for name, value, minimum in (("max_nodes", max_nodes, 1), ("compile_after", compile_after, 1)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
            raise MXNetValueError(f"set_imperative_bulk: {name} must be an integer >= {minimum}, got {value!r}")
    flush_all()
    if enabled is not None:
        _settings["enabled"] = bool(enabled)
    if compile_after is not None:
        _settings["compile_after"] = compile_after
    if max_nodes is not None:
        _settings["max_nodes"] = max_nodes
        with _segments_lock:
            for segment in _segments:
                segment.cap = max_nodes
    return previous


# ----------------------------------------------------------------------------- recording

_INFERRED: dict = {}  # (fn, input aval keys) -> (output structs, output avals, multi)


def record(segment: Segment, op: Any, fn: Any, inputs: Sequence[Any], params: dict | None,
           out_cls: type) -> Any:
    """Append ``op`` (``fn``: its compiled callable, with ``fn.pure`` its traceable function) on
    ``inputs`` to ``segment`` and return its lazy outputs; None when it cannot be recorded (an
    input that is traced, on the engine, or of a kind a program cannot take): run it now then.
    The outputs' shapes and dtypes are inferred once per op, parameters and input types.
    (This runs for every imperative op: written for speed, each branch in order of frequency.)"""
    array_type = _array_type
    with segment.lock:
        args, keys, source = [], [fn], None
        for x in inputs:
            if isinstance(x, array_type):
                var = x._var
                if var is None:
                    data = x._data
                    if type(data) is not _ArrayImpl:
                        return None
                elif type(var) is Pending:
                    if var.segment is segment and var.value is None:
                        index = var.index
                        if source is None:
                            source = index
                        args.append(index)
                        keys.append(var.aval)
                        continue
                    if var.value is None:  # another thread's segment, or a failed one
                        return None
                    data = x._data = var.value  # computed already: settle the array
                    x._var = None
                else:
                    return None
            else:
                kind = type(x)
                if kind is _ArrayImpl:
                    data = x
                elif kind in _CONST:
                    if kind is float and (x == 0.0 or x != x):  # -0.0 == 0.0 and nan != nan: key by text
                        args.append((float, x, repr(x)))
                    else:
                        args.append((kind, x))
                    keys.append(kind)
                    continue
                elif x is None:
                    args.append((None, None))
                    keys.append(None)
                    continue
                elif kind is _HostArray:  # a NumPy array: a leaf of its own (never a value's source)
                    leaf = host_leaf(x)
                    if leaf is None:
                        return None
                    data, aval = leaf
                    leaves = segment.leaves
                    args.append(-1 - len(leaves))
                    leaves.append(data)
                    keys.append(aval)
                    continue
                else:
                    return None
            leaf_refs = segment.leaf_refs  # a leaf: each array once, however often it is read
            ref = leaf_refs.get(id(data))
            if ref is None:
                leaves = segment.leaves
                ref = leaf_refs[id(data)] = -1 - len(leaves)
                leaves.append(data)
            if source is None:
                source = ref
            args.append(ref)
            keys.append(data.aval)
        key = tuple(keys)
        found = _INFERRED.get(key)
        if found is None:
            found = _INFERRED[key] = _inferred(op, inputs, params)
        structs, avals, multi = found
        handles = segment.handles
        if multi:
            out = tuple([_output(segment, handles, struct, aval, source, out_cls)
                         for struct, aval in zip(structs, avals)])
        else:
            out = _output(segment, handles, structs[0], avals[0], source, out_cls)
        nodes = segment.nodes
        nodes.append((op, fn, params, tuple(args), multi))
        full = len(nodes) >= segment.cap
    if full:
        segment.run()
    return out


_HOST_AVALS: dict = {}  # (shape, dtype) -> the abstract value of a NumPy leaf (ShapedArray costs ~2 us)
_HOST_LEAF_BYTES = 1 << 16  # a larger NumPy input runs its op now


def host_leaf(x: Any) -> tuple | None:
    """A NumPy array input as a leaf: a copy (a write to ``x`` after the op was recorded must not
    reach it: the program reads its leaves when it runs), and its abstract value, as JAX sees the
    array with 64-bit types on (the program runs with them on).  None for an array of a kind JAX
    does not take (strings, objects: the op runs now and reports it) and for a large one (its op
    runs now, as it did before NumPy inputs were recorded: a copy of it would cost more than the
    held-back op saves)."""
    if x.dtype.kind not in "biufc" or x.nbytes > _HOST_LEAF_BYTES:
        return None
    data = x.copy()
    key = (data.shape, data.dtype)
    aval = _HOST_AVALS.get(key)
    if aval is None:
        if len(_HOST_AVALS) >= 4096:
            _HOST_AVALS.clear()
        aval = _HOST_AVALS[key] = jax.core.ShapedArray(data.shape, data.dtype)
    return data, aval


def _output(segment: Segment, handles: list, struct: Any, aval: Any, source: int | None, out_cls: type) -> Any:
    """A recorded op's output: an ``out_cls`` array whose ``_var`` is a new :class:`Pending`."""
    array = _new(out_cls)
    array._data, array._ag, array._dc = struct, None, None
    handles.append(Pending.held_by(array, segment, len(handles), aval, source))
    return array


def _inferred(op: Any, inputs: Sequence[Any], params: dict | None) -> tuple:
    previous = _swap_x64(True)
    try:
        out = _infer(op, inputs, params)
    finally:
        _restore_x64(previous)
    multi = isinstance(out, (tuple, list))
    structs = tuple(out) if multi else (out,)
    avals = tuple(jax.core.ShapedArray(s.shape, s.dtype, weak_type=getattr(s, "weak_type", False))
                  for s in structs)
    if len(_INFERRED) > 65536:
        _INFERRED.clear()
    return structs, avals, multi


_config.on_drop_compiled(_INFERRED.clear)

record_python = record
try:  # the same recorder in C (graph/_record.c), built with the package where a C compiler was found
    from . import _record as _native
except ImportError:
    _native = None


def use_native(enabled: bool = True) -> bool:
    """Record ops with the C recorder (where it was built) or with :func:`record_python`; returns
    whether the C one is now in use.  Both do the same, the C one in a fraction of the time.
    (Off, the operator methods of :func:`operator_method` run their Python twins too.)"""
    global record
    record = _native.record if enabled and _native is not None and _array_type is not type(None) else record_python
    if _native is not None:
        _native.use_methods(record is not record_python)
    return record is not record_python


def configure_methods(handler: Any, invoke_globals: dict) -> None:
    """Called once by the invoke layer: what an :func:`operator_method` checks before it records --
    the context variable holding autograd's or deferred compute's handler, and the module globals
    holding the profiler's hook (``_profile_hook``); either set, the method runs its Python twin."""
    if _native is not None:
        _native.configure_methods(handler, invoke_globals, _settings, _local)


def configure_tape(handler: Any, recording_globals: dict, bound: dict) -> None:
    """Called once by autograd: its recorder (the handler it installs), the tape recorder's module
    globals (``_native``, the tape's C recorder while in use) and its table of ops with bound
    parameters.  While that handler is installed, an :func:`operator_method` or :data:`try_record`
    whose input autograd tracks hands the op to the tape's C recorder as the handler would (ops
    it cannot take, and every other case, go through the handler)."""
    if _native is not None:
        _native.configure_tape(handler, recording_globals, bound)


def _no_fast_path(op: Any, inputs: tuple, params: dict | None, bind_key: tuple, out_cls: type) -> None:
    """:data:`try_record` where the C recorder was not built: always the caller's own path."""
    return None


# try_record(op, inputs, params, bind_key, out_cls): ``op`` with ``params`` (``bind_key``, OpDef.bind's
# cache key for them) on the tuple ``inputs``, recorded in one C call where nothing asks for the
# Python path (the checks an operator_method makes): the lazy output(s), or None, where the caller
# goes through ``invoke`` as usual.  A front-end function's common call takes it.
try_record: Callable[..., Any] = _native.try_record if _native is not None else _no_fast_path


def operator_method(op: Any, method: Callable[..., Any], arity: int, reflected: bool = False) -> Any:
    """``method`` -- an array operator that invokes ``op`` on ``(self, other)`` (``(other, self)``
    when ``reflected``) or on ``(self,)`` (``arity`` 1), without parameters, giving ``type(self)``
    -- as one C call where the C recorder was built: an array and a Python float or int, or two
    arrays, recorded into this thread's segment without running Python; any other case calls
    ``method``.  Where the C recorder was not built, ``method`` itself."""
    if _native is None:
        return method
    return _native.OpMethod(op, method, arity, reflected)
