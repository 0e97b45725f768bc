"""The C side of MXNet 2.0 extension libraries: ctypes calls into what ``lib_api.cc`` exports.

A library built against MXNet's ``include/mxnet/lib_api.h`` compiles ``src/lib_api.cc``
into itself; that file exports plain C entry points (``_opVersion``, ``_opRegGet``,
``_opCallFCompute``, ...) which turn C arrays into the ``MXTensor``/attribute maps the
library's C++ callbacks take.  This module is the host end of those calls: it opens a
library, checks its API version, lists its operators, and runs their callbacks on NumPy
buffers (CPU tensors), supplying the workspace allocator and random states that
``OpResource`` hands to the library.  Nothing here knows about NDArrays.
"""
from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass
from typing import Any, Sequence

import ml_dtypes
import numpy as onp

from ._library_abi_resources import (  # the cpu-state functions are public here (mx.library, tests)
    _SPARSE_MALLOC, _WORKSPACES, _XPU_MALLOC, _c_int64_p, _c_void_pp, _cpu_states_pointer, ensure_cpu_states,
    reseed_cpu_states,
)
from .base import MXNetError
from .operator.custom import _DTYPE_CODES

__all__ = ["LIB_API_VERSION", "MXNET_VERSION", "Extension", "OpEntry", "dtype_code", "code_dtype",
           "ensure_cpu_states", "reseed_cpu_states"]

LIB_API_VERSION = 11      # the lib_api.h version of MXNet 2.0 (MX_LIBRARY_VERSION)
MXNET_VERSION = 20000     # what initialize() receives: major * 10000 + minor * 100 + patch

_CODE_DTYPES = {code: name for name, code in _DTYPE_CODES.items()}

_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_uint_p = ctypes.POINTER(ctypes.c_uint)
_c_str_p = ctypes.POINTER(ctypes.c_char_p)


def dtype_code(dtype: Any) -> int:
    """MXNet's type code (``MXDType``) of a NumPy dtype."""
    code = _DTYPE_CODES.get(onp.dtype(dtype).name)
    if code is None:
        raise MXNetError(f"extension library ops: dtype {onp.dtype(dtype).name} has no MXNet type code")
    return code


def code_dtype(code: int, who: str) -> onp.dtype:
    """The NumPy dtype of an MXNet type code returned by a library callback."""
    name = _CODE_DTYPES.get(int(code))
    if name is None:
        raise MXNetError(f"{who}: the library returned type code {code}, which is not an MXNet dtype")
    return onp.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else onp.dtype(name)


# --------------------------------------------------------------------------- C arrays

def _strings(values: Sequence[str]) -> Any:
    arr = (ctypes.c_char_p * max(len(values), 1))()
    for i, v in enumerate(values):
        arr[i] = v.encode("utf-8")
    return arr


class _Attrs:
    """An op's attributes as the two ``const char**`` arrays the entry points take."""

    def __init__(self, attrs: dict[str, str]) -> None:
        self.keys = _strings(list(attrs))
        self.vals = _strings(list(attrs.values()))
        self.num = len(attrs)


def _uint_shapes(shapes: Sequence[Sequence[int]]) -> tuple:
    rows = [(ctypes.c_uint * max(len(s), 1))(*s) for s in shapes]
    ptrs = (_c_uint_p * max(len(rows), 1))(*[ctypes.cast(r, _c_uint_p) for r in rows])
    dims = (ctypes.c_int * max(len(shapes), 1))(*[len(s) for s in shapes])
    return ptrs, dims, rows


class _Tensors:
    """The parallel C arrays describing dense CPU tensors (shapes, data, types, devices, ...)."""

    def __init__(self, arrays: Sequence[onp.ndarray]) -> None:
        n = len(arrays)
        size = max(n, 1)
        self.rows = [(ctypes.c_int64 * max(a.ndim, 1))(*a.shape) for a in arrays]
        self.shapes = (_c_int64_p * size)(*[ctypes.cast(r, _c_int64_p) for r in self.rows])
        self.dims = (ctypes.c_int * size)(*[a.ndim for a in arrays])
        self.data = (ctypes.c_void_p * size)(*[a.ctypes.data for a in arrays])
        self.types = (ctypes.c_int * size)(*[dtype_code(a.dtype) for a in arrays])
        self.ids = (ctypes.c_size_t * size)()
        self.dev_type = (ctypes.c_char_p * size)(*([b"cpu"] * n))
        self.dev_id = (ctypes.c_int * size)()
        self.stypes = (ctypes.c_int * size)()
        self.indices = (ctypes.c_void_p * size)()
        self.indptr = (ctypes.c_void_p * size)()
        self.indices_len = (ctypes.c_int64 * size)()
        self.indptr_len = (ctypes.c_int64 * size)()
        self.count = n

    def head(self) -> tuple:
        return (self.shapes, self.dims, self.data, self.types, self.ids, self.dev_type, self.dev_id, self.count)


# --------------------------------------------------------------------------- the library

@dataclass
class OpEntry:
    """One operator a library registers: its name and callback pointers (CPU ones resolved)."""

    name: str
    is_subgraph_op: bool
    forward: int | None
    backward: int | None
    create_state: int | None
    parse_attrs: int | None
    infer_type: int | None
    infer_shape: int | None
    mutate_inputs: int | None
    contexts: tuple


def _resolve(names: Any, fps: Any, count: int) -> dict[str, int]:
    return {names[i].decode(): fps[i] for i in range(count)}


class Extension:
    """An opened extension library: version-checked, initialised, with its operators listed."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.lib = ctypes.CDLL(path, mode=os.RTLD_LOCAL | getattr(os, "RTLD_LAZY", 1))
        except OSError as err:
            raise MXNetError(f"library.load: cannot open {path!r}: {err}") from None
        self._lock = threading.Lock()  # the library's message list is one global vector
        version_fn = self._symbol("_opVersion", ctypes.c_int, [])
        version = version_fn()
        if version != LIB_API_VERSION:
            raise MXNetError(f"library.load: {path!r} was built for lib_api version {version}, but mxjax "
                             f"implements MXNet 2.0's lib_api version {LIB_API_VERSION}; rebuild it against "
                             "MXNet 2.0's include/mxnet/lib_api.h")
        self._msg_size = self._symbol("_msgSize", ctypes.c_int, [])
        self._msg_get = self._symbol("_msgGet", None, [ctypes.c_int, _c_str_p])
        init = self._symbol("initialize", ctypes.c_int, [ctypes.c_int])
        seen = self._msg_size()
        if not init(MXNET_VERSION):
            raise MXNetError(f"library.load: {path!r} failed to initialize (MXNet version {MXNET_VERSION})"
                             + self._messages(seen))
        self._bind_op_calls()
        self.ops = [self._op_entry(i) for i in range(self._call("_opRegSize", ctypes.c_int, []))]
        self.partitioners = self._partitioner_names()
        self.passes = self._pass_names()

    # -- symbols and messages -------------------------------------------------------
    def _symbol(self, name: str, restype: Any, argtypes: list) -> Any:
        try:
            fn = getattr(self.lib, name)
        except AttributeError:
            raise MXNetError(f"library.load: {self.path!r} does not export {name}(); is it an MXNet 2.0 "
                             "extension library (built with src/lib_api.cc)?") from None
        fn.restype, fn.argtypes = restype, argtypes
        return fn

    def _call(self, name: str, restype: Any, argtypes: list, *args: Any) -> Any:
        return self._symbol(name, restype, argtypes)(*args)

    def _messages(self, start: int) -> str:
        """The library's error messages (``MX_ERROR_MSG``) added since ``start``.

        MXNet reports the whole list, which the library never clears, so every error repeats
        the earlier ones; only the new ones are reported here."""
        found = []
        for i in range(start, self._msg_size()):
            text = ctypes.c_char_p()
            self._msg_get(i, ctypes.byref(text))
            found.append((text.value or b"").decode("utf-8", "replace").strip())
        return ("\nlibrary messages:\n" + "\n".join(f"  {m}" for m in found)) if found else ""

    def failure(self, message: str, start: int) -> MXNetError:
        """An MXNetError: ``message`` and the library's messages added since ``start``."""
        return MXNetError(f"{message} ({os.path.basename(self.path)})" + self._messages(start))

    def check(self, ok: int, what: str, op: str, start: int) -> None:
        """Raise MXNetError with the library's messages when a callback returned MX_FAIL."""
        if not ok:
            raise self.failure(f"Custom operator {op!r}: the library's {what} failed", start)

    # -- registration -----------------------------------------------------------------
    def _bind_op_calls(self) -> None:
        v, i, p = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER
        tensors = [p(_c_int64_p), _c_int_p, _c_void_pp, _c_int_p, p(ctypes.c_size_t), _c_str_p, _c_int_p, i]
        resource = [_XPU_MALLOC, v, _XPU_MALLOC, v, v, _SPARSE_MALLOC, v, _c_int_p, _c_int_p,
                    _c_void_pp, _c_void_pp, _c_void_pp, _c_void_pp, _c_int64_p, _c_int64_p, _c_int64_p,
                    _c_int64_p, v, v]
        attrs = [v, _c_str_p, _c_str_p, i]
        self._parse = self._symbol("_opCallParseAttrs", i, attrs + [_c_int_p, _c_int_p])
        self._shape = self._symbol("_opCallInferShape", i, attrs + [p(_c_uint_p), _c_int_p, i, p(p(_c_uint_p)),
                                                                    p(_c_int_p), p(p(_c_uint_p)), p(_c_int_p), i])
        self._type = self._symbol("_opCallInferType", i, attrs + [_c_int_p, i, _c_int_p, i])
        self._fcompute = self._symbol("_opCallFCompute", i, attrs + tensors + tensors + resource)
        self._mutate = self._symbol("_opCallMutateInputs", i, attrs + [p(_c_int_p), _c_int_p])
        self._create = self._symbol("_opCallCreateOpState", i, attrs + [ctypes.c_char_p, i, p(_c_uint_p),
                                                                        _c_int_p, i, _c_int_p, _c_void_pp])
        self._destroy = self._symbol("_opCallDestroyOpState", None, [v])
        self._stateful = self._symbol("_opCallFStatefulCompute", i, [i, v] + tensors + tensors + resource)
        self._free = self._symbol("_opCallFree", None, [v])

    def _op_entry(self, idx: int) -> OpEntry:
        name, is_sg = ctypes.c_char_p(), ctypes.c_int()
        ctx = [_c_str_p() for _ in range(3)]
        fps = [_c_void_pp() for _ in range(3)]
        counts = [ctypes.c_int() for _ in range(3)]
        hooks = [ctypes.c_void_p() for _ in range(5)]
        p = ctypes.POINTER
        get = self._symbol("_opRegGet", None, [ctypes.c_int, _c_str_p, _c_int_p] + [p(_c_str_p), p(_c_void_pp),
                                                                                    _c_int_p] * 3
                           + [_c_void_pp] * 5)
        get(idx, ctypes.byref(name), ctypes.byref(is_sg),
            *[ctypes.byref(x) for k in range(3) for x in (ctx[k], fps[k], counts[k])],
            *[ctypes.byref(h) for h in hooks])
        forward, backward, create = (_resolve(ctx[k], fps[k], counts[k].value) for k in range(3))
        parse, infer_type, _stype, infer_shape, mutate = (h.value for h in hooks)
        return OpEntry(name.value.decode(), bool(is_sg.value), forward.get("cpu"), backward.get("cpu"),
                       create.get("cpu"), parse, infer_type, infer_shape, mutate,
                       tuple(sorted(set(forward) | set(create))))

    def _partitioner_names(self) -> list[str]:
        size = self._optional("_partRegSize")
        names = []
        for idx in range(size):
            name = ctypes.c_char_p()
            self._call("_partRegGetCount", ctypes.c_int, [ctypes.c_int, _c_str_p], idx, ctypes.byref(name))
            names.append(name.value.decode())
        return names

    def _pass_names(self) -> list[str]:
        self.pass_fns: dict[str, int] = {}
        for idx in range(self._optional("_passRegSize")):
            fp, name = ctypes.c_void_p(), ctypes.c_char_p()
            self._call("_passRegGet", None, [ctypes.c_int, _c_void_pp, _c_str_p], idx, ctypes.byref(fp),
                       ctypes.byref(name))
            self.pass_fns[name.value.decode()] = fp.value
        return list(self.pass_fns)

    def _optional(self, name: str) -> int:
        return self._call(name, ctypes.c_int, []) if hasattr(self.lib, name) else 0

    # -- operator callbacks -----------------------------------------------------------
    def parse_attrs(self, op: OpEntry, attrs: dict[str, str]) -> tuple[int, int]:
        """``(num_inputs, num_outputs)`` from the op's parseAttrs."""
        a, n_in, n_out = _Attrs(attrs), ctypes.c_int(-1), ctypes.c_int(-1)
        with self._lock:
            start = self._msg_size()
            ok = self._parse(op.parse_attrs, a.keys, a.vals, a.num, ctypes.byref(n_in), ctypes.byref(n_out))
            self.check(ok, "parseAttrs", op.name, start)
        return n_in.value, n_out.value

    def infer_shape(self, op: OpEntry, attrs: dict[str, str], shapes: Sequence[tuple],
                    num_out: int) -> tuple[list, list]:
        """``(input shapes as the library sees them, output shapes)`` from the op's inferShape."""
        a = _Attrs(attrs)
        ptrs, dims, _rows = _uint_shapes(shapes)
        mod_shapes, mod_dims = ctypes.POINTER(_c_uint_p)(), _c_int_p()
        out_shapes, out_dims = ctypes.POINTER(_c_uint_p)(), _c_int_p()
        with self._lock:
            start = self._msg_size()
            ok = self._shape(op.infer_shape, a.keys, a.vals, a.num, ptrs, dims, len(shapes),
                             ctypes.byref(mod_shapes), ctypes.byref(mod_dims), ctypes.byref(out_shapes),
                             ctypes.byref(out_dims), num_out)
            self.check(ok, "inferShape", op.name, start)
        try:
            ins = [tuple(mod_shapes[i][j] for j in range(mod_dims[i])) for i in range(len(shapes))]
            outs = [tuple(out_shapes[i][j] for j in range(out_dims[i])) for i in range(num_out)]
        finally:
            for rows, n in ((mod_shapes, len(shapes)), (out_shapes, num_out)):
                for i in range(n):
                    self._free(ctypes.cast(rows[i], ctypes.c_void_p))
            for block in (mod_shapes, mod_dims, out_shapes, out_dims):
                self._free(ctypes.cast(block, ctypes.c_void_p))
        return ins, outs

    def infer_type(self, op: OpEntry, attrs: dict[str, str], codes: Sequence[int],
                   num_out: int) -> tuple[list, list]:
        """``(input type codes as the library sees them, output type codes)`` from inferType."""
        a = _Attrs(attrs)
        ins = (ctypes.c_int * max(len(codes), 1))(*codes)
        outs = (ctypes.c_int * max(num_out, 1))(*([-1] * num_out))
        with self._lock:
            start = self._msg_size()
            ok = self._type(op.infer_type, a.keys, a.vals, a.num, ins, len(codes), outs, num_out)
            self.check(ok, "inferType", op.name, start)
        return list(ins[:len(codes)]), list(outs[:num_out])

    def mutate_inputs(self, op: OpEntry, attrs: dict[str, str]) -> list[int]:
        """Indices of the inputs the op writes to (mutateInputs), empty without that callback."""
        if not op.mutate_inputs:
            return []
        a, indices, size = _Attrs(attrs), _c_int_p(), ctypes.c_int(0)
        with self._lock:
            start = self._msg_size()
            ok = self._mutate(op.mutate_inputs, a.keys, a.vals, a.num, ctypes.byref(indices), ctypes.byref(size))
            self.check(ok, "mutateInputs", op.name, start)
        try:
            return [indices[i] for i in range(size.value)]
        finally:
            self._free(ctypes.cast(indices, ctypes.c_void_p))

    def create_state(self, op: OpEntry, attrs: dict[str, str], shapes: Sequence[tuple],
                     codes: Sequence[int]) -> int:
        """A new state object of a stateful op (createOpState on the CPU); free it with destroy_state."""
        a = _Attrs(attrs)
        ptrs, dims, _rows = _uint_shapes(shapes)
        types = (ctypes.c_int * max(len(codes), 1))(*codes)
        state = ctypes.c_void_p()
        with self._lock:
            start = self._msg_size()
            ok = self._create(op.create_state, a.keys, a.vals, a.num, b"cpu", 0, ptrs, dims, len(shapes), types,
                              ctypes.byref(state))
            self.check(ok, "createOpState", op.name, start)
        if not state.value:
            raise MXNetError(f"Custom operator {op.name!r}: createOpState returned no state object")
        return state.value

    def destroy_state(self, state: int) -> None:
        self._destroy(state)

    def compute(self, op: OpEntry, fn: int | None, attrs: dict[str, str], inputs: Sequence[onp.ndarray],
                outputs: Sequence[onp.ndarray], what: str, state: int | None = None,
                is_forward: bool = True) -> None:
        """Run a forward/backward callback (stateless ``fn``, or the ``state`` object's) in place
        on C-contiguous NumPy buffers: ``outputs`` (and mutated inputs) are written by the library."""
        ins, outs = _Tensors(inputs), _Tensors(outputs)
        ticket = _WORKSPACES.open()
        resource = (_WORKSPACES.cpu, ticket, _WORKSPACES.gpu, None, None, _WORKSPACES.sparse, None,
                    ins.stypes, outs.stypes, ins.indices, outs.indices, ins.indptr, outs.indptr,
                    ins.indices_len, outs.indices_len, ins.indptr_len, outs.indptr_len, _cpu_states_pointer(),
                    None)
        try:
            with self._lock:
                start = self._msg_size()
                if state is None:
                    a = _Attrs(attrs)
                    ok = self._fcompute(fn, a.keys, a.vals, a.num, *ins.head(), *outs.head(), *resource)
                else:
                    ok = self._stateful(int(is_forward), state, *ins.head(), *outs.head(), *resource)
                self.check(ok, what, op.name, start)
        finally:
            _WORKSPACES.close(ticket)
