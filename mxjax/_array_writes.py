"""NDArray's in-place writes and indexing (a base class of ``NDArray``): every write replaces
the array's buffer under one lock, after the pending work on it, so every holder of the array
sees the new values (JAX arrays are immutable: ``x[1:3] = v`` makes a new buffer).
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as onp

from . import _config, _indexing, _invoke
from ._invoke import current_handler, invoke
from .base import MXNetValueError
from .graph import bulk as _bulk
from .graph.bulk import try_record
from .graph.lazy import Lazy
from .operator import get_op

__all__ = ["Writes", "SWAP_LOCK", "data_of"]

_GETITEM_WINDOW = get_op("_getitem_window")
_WINDOW_PARAMS: dict = {}  # a window's layout -> (its parameters, OpDef.bind's key for them)
SWAP_LOCK = threading.Lock()  # guards buffer swaps of in-place writes (held for an assignment only)


def data_of(x: Any) -> Any:
    """The value of an array (computed), or ``x`` itself."""
    return x.to_jax() if isinstance(x, Writes) else x


def _slices(name: str, array: Any, begin: Any, end: Any, step: Any) -> tuple:
    """The index ``begin:end:step`` per axis (step may be shorter, or empty): ``slice_assign``'s."""
    begin, end, step = tuple(begin), tuple(end), tuple(step or ())
    if len(begin) != len(end) or len(step) > len(begin) or len(begin) > array.ndim:
        raise MXNetValueError(f"{name}: begin {begin}, end {end} and step {step} must have equal lengths "
                              f"(step may be empty) of at most ndim={array.ndim} (array shape {array.shape})")
    step = step + (None,) * (len(begin) - len(step))
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


class Writes:
    """In-place writes and indexing; the array class supplies ``_data``, ``_var``, ``to_jax``."""

    __slots__ = ()
    _float_index_arrays = True  # MXNet 1.x's NDArray takes float index arrays (mx.np.ndarray: NumPy's rule)

    @property
    def writable(self) -> bool:
        """Whether in-place writes are allowed: always True (mxjax has no read-only arrays; a write
        replaces the buffer, so a DLPack export made earlier keeps the old values)."""
        return True

    def slice_assign(self, rhs: Any, begin: Any, end: Any, step: Any) -> "Writes":
        """Assign ``rhs`` to the slice ``begin:end:step`` (per axis; None entries mean the default)
        in place, and return this array."""
        self[_slices("slice_assign", self, begin, end, step)] = rhs
        return self

    def slice_assign_scalar(self, value: Any, begin: Any, end: Any, step: Any) -> "Writes":
        """Assign the scalar ``value`` (cast to this array's dtype) to the slice ``begin:end:step`` in
        place, and return this array."""
        self[_slices("slice_assign_scalar", self, begin, end, step)] = value
        return self

    def _set_data(self, data: Any) -> None:
        """Replace the buffer now, without waiting: for engine ops that write this array (a lazy
        value not computed yet -- one held back in a bulk segment, say -- is superseded)."""
        with SWAP_LOCK:
            self._data = data
            if isinstance(self._var, Lazy):
                self._var = None

    @staticmethod
    def _set_datas(arrays: Sequence["Writes"], datas: Sequence[Any]) -> None:
        """:meth:`_set_data` of several arrays (an optimizer's new weights) under one lock."""
        with SWAP_LOCK:
            for array, data in zip(arrays, datas):
                array._data = data
                if type(array._var) is _bulk.Pending:
                    array._var = None

    def _overwrite(self, data: Any, lazy: Lazy | None = None) -> None:
        """Replace the value without reading the old one: a lazy value is dropped uncomputed (a
        zeroed gradient need not run the backward that was to write it); pending engine writes are
        waited for.  With ``lazy``, the new value is that lazy one (``data``: its shape and dtype),
        set together: no other thread sees the array between the two."""
        var = self._var
        if var is not None and not isinstance(var, Lazy):
            self.to_jax()
        with SWAP_LOCK:  # (lazy: ``_var`` first -- a reader without the lock checks it after ``_data``)
            if lazy is None:
                self._data, self._var = data, None
            else:
                self._var, self._data = lazy, data

    def _take_value(self, other: "Writes") -> None:
        """Adopt ``other``'s value (a write-back such as BatchNorm's running statistics); a lazy value
        stays lazy, computed when this array is read."""
        if self._var is not None:
            self.to_jax()  # after pending work on the old value
        if isinstance(other._var, Lazy) and other._dc is None:
            other._var.share(self)
            self._overwrite(other._data, other._var)
        else:
            self._set_data(other.to_jax())

    def _check_writable(self) -> None:
        """An active mode (autograd recording, deferred compute) may forbid writing this array."""
        handler = current_handler()
        if handler is not None and (self._ag is not None or self._dc is not None):
            handler.on_write(self)

    def _write(self, data: Any) -> None:
        """Replace the buffer after pending engine work on it: every holder sees the new values."""
        self._check_writable()
        if self._var is not None:
            self.to_jax()  # after pending engine work (or the deferred computation) of this array
        self._set_data(data)

    def _assign(self, result: "Writes", opname: str) -> None:
        """Store an op result into self, keeping self's shape and dtype (NumPy's in-place rule)."""
        self._write(self._checked_result(result, opname))

    def _checked_result(self, result: "Writes", opname: str) -> Any:
        data = result.to_jax()
        if tuple(data.shape) != self.shape:
            raise MXNetValueError(
                f"{opname}: non-broadcastable output operand with shape {self.shape} "
                f"doesn't match the broadcast shape {tuple(data.shape)}")
        if data.dtype == self._data.dtype:
            return data
        with _config.x64():
            return data.astype(self._data.dtype)

    def _update(self, compute: Any, opname: str) -> None:
        """Read-modify-write as one step: ``compute(current)`` gives the new value.

        Optimistic: compute on a snapshot, swap it in only if no other thread
        replaced the buffer meanwhile (else retry), so concurrent ``x += 1`` from
        several threads equals some serial order of them.  No lock is held while
        computing, so waiting on the engine inside ``compute`` cannot deadlock.
        """
        self._check_writable()
        while True:
            if self._var is not None:
                self.to_jax()
            snapshot = self._data
            data = self._checked_result(compute(type(self)._wrap(snapshot)), opname)
            with SWAP_LOCK:
                if self._data is snapshot:
                    self._data = data
                    return

    def __setitem__(self, key: Any, value: Any) -> None:
        static, arrays, has_mask = _indexing.split_key(key, data_of, self._float_index_arrays)
        if not has_mask:
            _indexing.check_bounds(static, self.shape, "__setitem__")
        value = value if isinstance(value, Writes) else data_of(value)
        window = self._eager_window(_indexing.window, static)
        if window is not None:
            op, attrs, starts = get_op("_setitem_window"), {"layout": window[0]}, window[1]
            self._update(lambda current: invoke(op, (current, value, starts), attrs, type(self)), "__setitem__")
            return
        op = get_op("_setitem_mask" if has_mask else "_setitem")

        def compute(current: "Writes") -> "Writes":
            out = invoke(op, (current, value, *arrays), {"key": static}, type(self))
            if arrays:  # an index array out of range shows while the program runs: raise before the write lands
                out.wait_to_read()
            return out
        self._update(compute, "__setitem__")

    def __getitem__(self, key: Any) -> "Writes":
        kind = type(key)
        window = self._eager_window(_indexing.leading_window, key) if kind is int or kind is slice or \
            kind is tuple else None
        if window is None:
            static, arrays, has_mask = _indexing.split_key(key, data_of, self._float_index_arrays)
            if not has_mask:
                _indexing.check_bounds(static, self.shape, "__getitem__")
            window = self._eager_window(_indexing.window, static)
            if window is None:
                op = get_op("_getitem_mask" if has_mask else "_getitem")
                return invoke(op, (self, *arrays), {"key": static}, type(self))
        layout, starts = window
        bound = _WINDOW_PARAMS.get(layout)
        if bound is None:
            if len(_WINDOW_PARAMS) >= 4096:
                _WINDOW_PARAMS.clear()
            params = {"layout": layout}
            bound = _WINDOW_PARAMS[layout] = (params, tuple(params.items()))
        out = try_record(_GETITEM_WINDOW, (self, starts), bound[0], bound[1], type(self))
        return invoke(_GETITEM_WINDOW, (self, starts), bound[0], type(self)) if out is None else out

    def _eager_window(self, find: Any, key: Any) -> tuple | None:
        """Basic indexing run eagerly goes through a window with run-time offsets (one compile per
        window size, not per index); under deferred compute the key stays static in the graph.
        ``find(key, shape)``: ``_indexing.window`` of a static key, or ``leading_window`` of ints
        and slices (``x[i]``, ``x[a:b]``, ``x[:, j]``: no static form built first)."""
        if _invoke.tracing_graph():
            return None
        window = find(key, self.shape)
        return None if window is None else (window[0], onp.asarray(window[1], dtype=onp.int64))
