"""Graph passes of MXNet 2.0 extension libraries: symbol JSON in, rewritten symbol JSON out.

A library registers a pass (``REGISTER_PASS``) as a C++ function over its own graph type;
``lib_api.cc`` exports ``_passCallGraphPass``, which parses the JSON it is given, hands
the pass the argument/auxiliary values by name, and prints the graph back.  A pass may
allocate new parameter arrays (``PassResource::alloc_arg``/``alloc_aux``) through a host
callback; this module supplies it and returns the arrays it made.
"""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as onp

from ._library_abi import Extension, _Attrs, _Tensors, code_dtype, _c_str_p, _c_void_pp

__all__ = ["GraphPass"]

_c_int64_p = ctypes.POINTER(ctypes.c_int64)
_ND_MALLOC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, _c_int64_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                              ctypes.c_int, ctypes.c_char_p, ctypes.c_int, _c_void_pp)


class _NewParams:
    """The arrays a pass allocates, by name: arguments and auxiliary states."""

    def __init__(self, pass_name: str) -> None:
        self.pass_name = pass_name
        self.args: dict[str, onp.ndarray] = {}
        self.aux: dict[str, onp.ndarray] = {}
        self.error: str | None = None
        self.callback = _ND_MALLOC(self._alloc)

    def _alloc(self, handle: Any, shapes: Any, ndim: int, dev: bytes, dev_id: int, dtype: int, name: bytes,
               is_arg: int, data: Any) -> None:
        try:
            array = onp.zeros(tuple(shapes[i] for i in range(ndim)),
                              code_dtype(dtype, f"graph pass {self.pass_name!r}"))
        except Exception as err:  # (an exception cannot cross the C call: reported after it)
            self.error = str(err)
            data[0] = None
            return
        (self.args if is_arg else self.aux)[name.decode()] = array
        data[0] = array.ctypes.data


class GraphPass:
    """One graph pass of a loaded library."""

    def __init__(self, ext: Extension, name: str, fn: int) -> None:
        self.ext, self.name, self.fn = ext, name, fn
        v, i, p = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER
        named = [_c_str_p, i, _c_void_pp, p(_c_int64_p), p(i), p(i), p(ctypes.c_size_t), _c_str_p, p(i)]
        self._call = ext._symbol("_passCallGraphPass", i, [v, ctypes.c_char_p, p(ctypes.c_char_p), _c_str_p,
                                                           _c_str_p, i, ctypes.c_char_p, *named, *named,
                                                           _ND_MALLOC, v])

    def run(self, json_text: str, args: dict[str, onp.ndarray], aux: dict[str, onp.ndarray],
            options: dict[str, str]) -> tuple[str, dict, dict]:
        """``(new JSON, new arguments, new auxiliary states)`` for a graph and its named values."""
        opts = _Attrs(options)
        out = ctypes.c_char_p()
        params = _NewParams(self.name)
        groups = []
        for values in (args, aux):
            names = list(values)
            arrays = [onp.ascontiguousarray(values[n]) for n in names]
            tensors = _Tensors(arrays)
            keys = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() for n in names])
            groups.append((keys, len(names), tensors.data, tensors.shapes, tensors.dims, tensors.types,
                           tensors.ids, tensors.dev_type, tensors.dev_id, tensors, arrays))
        ext = self.ext
        with ext._lock:
            start = ext._msg_size()
            ok = self._call(self.fn, json_text.encode(), ctypes.byref(out), opts.keys, opts.vals, opts.num,
                            self.name.encode(), *groups[0][:9], *groups[1][:9], params.callback, None)
            if not ok:
                raise ext.failure(f"Error calling graph pass for {self.name!r}", start)
        if params.error is not None:
            raise ext.failure(f"graph pass {self.name!r}: allocating a parameter failed: {params.error}", start)
        try:
            text = out.value.decode("utf-8") if out.value else ""
        finally:
            ext._free(ctypes.cast(out, ctypes.c_void_p))
        return text, params.args, params.aux
