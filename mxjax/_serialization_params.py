"""Encode and decode MXNet's NDArray list format (``.params``) to and from bytes, in NumPy.

The reader (:func:`loads_params`: v0-v3 records, dense and sparse, with or without
names) and the writer (:func:`dumps_params`: v2/v3 records, byte-compatible with
MXNet 1.9.1).  Separate from :mod:`mxjax.serialization`, which adds files, the
``.npz``/``.npy`` dispatch and error labelling on top of these two functions.
"""
from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from ._serialization_format import (
    _CPU_CONTEXT, _HEADER, _I32, _LITTLE, _MAGIC_TO_VERSION, _MAX_NDIM, _MX_BF16, _STYPE_FLAGS, _U32, _U64,
    _VERSION_TO_MAGIC, FLAG_TO_DTYPE, LIST_MAGIC, V2_MAGIC, SparseRecord, _flag_of,
)
from .base import MXNetError

__all__ = ["dumps_params", "loads_params"]


# ----------------------------------------------------------------------------- reading

class _Reader:
    """Cursor over the file bytes; every read checks the length and names the place."""

    __slots__ = ("buf", "pos", "where")

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        mv = memoryview(buf)
        self.buf = mv if (mv.format == "B" and mv.ndim == 1) else memoryview(mv.tobytes())
        self.pos = 0
        self.where = "list header"

    def need(self, n: int, what: str) -> None:
        left = len(self.buf) - self.pos
        if n > left:
            raise MXNetError(f"truncated NDArray file: {self.where}: {what} needs {n} bytes "
                             f"at offset {self.pos}, but only {left} remain")

    def unpack(self, st: struct.Struct, what: str) -> int:
        self.need(st.size, what)
        (v,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def dims(self, ndim: int, code: str, what: str) -> tuple[int, ...]:
        size = 8 if code == "q" else 4
        self.need(ndim * size, f"{what} ({ndim} dims)")
        dims = struct.unpack_from(f"<{ndim}{code}", self.buf, self.pos)
        self.pos += ndim * size
        return dims

    def fail(self, msg: str) -> MXNetError:
        return MXNetError(f"bad NDArray file: {self.where}: {msg}")


def _read_shape(r: _Reader, version: int, what: str, may_be_unknown: bool = False) -> Any:
    """A v1/v2/v3 shape (i32 ndim, i64 dims); None for v3's unknown shape (a none array)."""
    ndim = r.unpack(_I32, f"{what} ndim")
    unknown_ok = version == 3 and may_be_unknown
    if ndim == -1 and unknown_ok:
        return None
    if not 0 <= ndim <= _MAX_NDIM:
        raise r.fail(f"{what} ndim {ndim} out of range; expected 0..{_MAX_NDIM}")
    dims = r.dims(ndim, "q", what)
    if unknown_ok and -1 in dims:
        return None
    if any(d < 0 for d in dims):
        raise r.fail(f"{what} {dims} has a negative dim")
    return dims


def _read_data(r: _Reader, dtype: np.dtype, shape: tuple[int, ...], what: str) -> np.ndarray:
    """Read prod(shape) elements as a fresh, writable C-order array."""
    count = math.prod(shape)
    r.need(count * dtype.itemsize, f"{what} of {count} x {dtype} {tuple(shape)}")
    if count == 0:   # zero-size: no data bytes at all
        try:
            return np.empty(shape, dtype)
        except ValueError as e:   # e.g. (0, 2**62): NumPy refuses such extents
            raise r.fail(f"{what}: shape {tuple(shape)} is not representable ({e})") from None
    arr = np.frombuffer(r.buf, dtype=dtype, count=count, offset=r.pos).reshape(shape).copy()
    r.pos += count * dtype.itemsize
    return arr if _LITTLE else arr.byteswap()


def _read_dtype(r: _Reader, what: str) -> np.dtype:
    flag = r.unpack(_I32, what)
    if flag not in FLAG_TO_DTYPE:
        raise MXNetError(f"bad NDArray file: unknown type flag {flag} in {r.where}; expected 0-12")
    return FLAG_TO_DTYPE[flag]


def _read_record(r: _Reader) -> tuple[np.ndarray | SparseRecord | None, int]:
    """One array record of any version; returns (value, version)."""
    first = r.unpack(_U32, "record magic")
    version = _MAGIC_TO_VERSION.get(first, 0)
    stype = 0
    if version == 0:
        # No magic: the word is the ndim of a v0 record, followed by u32 dims.
        if first > _MAX_NDIM:
            raise r.fail(f"first word 0x{first:08X} is neither a record magic (0xF993FAC8, "
                         f"0xF993FAC9, 0xF993FACA) nor a plausible v0 ndim (<= {_MAX_NDIM})")
        shape: tuple[int, ...] | None = r.dims(first, "I", "v0 shape")
        if first == 0:
            return None, 0
    elif version == 1:
        shape = _read_shape(r, 1, "shape")
        if not shape:
            return None, 1
    else:
        stype = r.unpack(_I32, "storage type")
        if stype not in (0, 1, 2):
            raise r.fail(f"storage type {stype}; expected 0 (default), 1 (row_sparse) or 2 (csr)")
        sshape = _read_shape(r, version, "storage shape") if stype else ()
        shape = _read_shape(r, version, "shape", may_be_unknown=True)
        if shape is None or (version == 2 and not shape):
            return None, version
    r.need(8, "context")
    r.pos += 8   # context (dev_type, dev_id): placement only, ignored
    dtype = _read_dtype(r, "type flag")
    if stype == 0:
        return _read_data(r, dtype, shape, "data"), version
    # Sparse: aux descriptors, data (storage shape), aux data in aux order.
    aux = [(_read_dtype(r, f"aux {i} type flag"), _read_shape(r, version, f"aux {i} shape"))
           for i in range(1 if stype == 1 else 2)]
    data = _read_data(r, dtype, sshape, "data")
    auxs = [_read_data(r, adt, ashape, f"aux {i} data") for i, (adt, ashape) in enumerate(aux)]
    if stype == 1:
        rec = SparseRecord("row_sparse", shape, data, auxs[0], None, dtype)
    else:   # csr aux order on disk: indptr, then column indices
        rec = SparseRecord("csr", shape, data, auxs[1], auxs[0], dtype)
    try:
        rec.validate()
    except MXNetError as e:
        raise r.fail(str(e)) from None
    return rec, version


def loads_params(buf: bytes | bytearray | memoryview, return_versions: bool = False) -> Any:
    """Parse a whole NDArray list file.

    Returns a dict (names present; last duplicate wins) or a list of
    ``np.ndarray`` / :class:`SparseRecord` / ``None``. With ``return_versions``
    returns ``(result, versions)``, one record version (0-3) per record.
    """
    r = _Reader(buf)
    magic = r.unpack(_U64, "list magic")
    if magic != LIST_MAGIC:
        found = bytes(r.buf[:8]).hex(" ")
        raise MXNetError(f"not an MXNet NDArray list file: expected list magic 0x112 "
                         f"(bytes 12 01 00 00 00 00 00 00), found {found}")
    r.unpack(_U64, "reserved field")   # written as 0, ignored by MXNet
    count = r.unpack(_U64, "array count")
    if count > (len(r.buf) - r.pos) // 4:   # every record takes at least 4 bytes
        raise r.fail(f"array count {count} is more than the {len(r.buf) - r.pos} remaining "
                     f"bytes can hold")
    values, versions = [], []
    for i in range(count):
        r.where = f"record {i}"
        value, version = _read_record(r)
        values.append(value)
        versions.append(version)
    r.where = "names section"
    nnames = r.unpack(_U64, "name count")
    if nnames not in (0, count):
        raise r.fail(f"name count {nnames} is neither 0 nor the array count {count}")
    names = []
    for j in range(nnames):
        r.where = f"name {j}"
        length = r.unpack(_U64, "name length")
        r.need(length, "name bytes")
        raw = bytes(r.buf[r.pos:r.pos + length])
        r.pos += length
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise r.fail(f"name is not valid UTF-8 ({e})") from None
    # Trailing bytes after the names section are ignored, like MXNet does.
    result: Any = dict(zip(names, values)) if nnames else values
    return (result, versions) if return_versions else result


# ----------------------------------------------------------------------------- writing

def _shape_bytes(shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _raw(a: np.ndarray) -> memoryview:
    """Little-endian C-order bytes of an array, without copying when possible."""
    a = np.asarray(a, order="C")
    if not _LITTLE:
        a = a.byteswap()
    return memoryview(a.reshape(-1).view(np.uint8))


def _dense_record(value: Any, where: str, version: int) -> list:
    a = np.asarray(value)
    flag = _flag_of(a.dtype, where)
    if a.dtype != _MX_BF16 and a.dtype != FLAG_TO_DTYPE[flag]:
        a = a.astype(FLAG_TO_DTYPE[flag])    # e.g. big-endian input -> native
    if version == 2 and a.ndim == 0:
        raise MXNetError(f"{where}: cannot save a 0-d array as a v2 (classic shape) record: "
                         f"MXNet reads ndim 0 as a none array; reshape it to (1,) or save "
                         f"with np_semantics=True (v3)")
    head = struct.pack("<Ii", _VERSION_TO_MAGIC[version], 0) + _shape_bytes(a.shape)
    return [head, _CPU_CONTEXT, _I32.pack(flag), _raw(a)]


def _sparse_record(s: SparseRecord, where: str) -> list:
    try:
        s.validate()
    except MXNetError as e:
        raise MXNetError(f"{where}: {e}") from None
    flag = _flag_of(s.dtype, where)
    data = np.asarray(s.data, dtype=FLAG_TO_DTYPE[flag])
    # MXNet 1.9.1 always stores sparse indices as int64 (flag 6); so do we.
    aux = [s.indices] if s.stype == "row_sparse" else [s.indptr, s.indices]
    aux = [np.asarray(x, dtype=np.int64) for x in aux]
    parts = [struct.pack("<Ii", V2_MAGIC, _STYPE_FLAGS[s.stype]), _shape_bytes(data.shape),
             _shape_bytes(s.shape), _CPU_CONTEXT, _I32.pack(flag)]
    parts += [_I32.pack(6) + _shape_bytes(x.shape) for x in aux]
    return parts + [_raw(data)] + [_raw(x) for x in aux]


def dumps_params(arrays: Any, np_semantics: bool = False) -> bytes:
    """Encode arrays as an NDArray list file, byte-compatible with MXNet 1.9.1.

    ``arrays``: a dict (names written, insertion order), a list/tuple (no names)
    or a single array. v2 records by default (``mx.nd.save``); v3 records with
    ``np_semantics=True`` (``npx.save``, dense only).
    """
    if isinstance(arrays, Mapping):
        names, values = list(arrays.keys()), list(arrays.values())
    elif isinstance(arrays, (list, tuple)):
        names, values = [], list(arrays)
    else:
        names, values = [], [arrays]
    for k in names:
        if not isinstance(k, str):
            raise MXNetError(f"NDArray file names must be str, got {type(k).__name__} {k!r}")
    version = 3 if np_semantics else 2
    parts: list = [_HEADER.pack(LIST_MAGIC, 0, len(values))]
    for i, v in enumerate(values):
        where = f"entry {i}" + (f" ({names[i]!r})" if names else "")
        if v is None:   # MXNet refuses to save a none array as well
            raise MXNetError(f"{where}: cannot save None (a none array)")
        if isinstance(v, SparseRecord):
            if np_semantics:
                raise MXNetError(f"{where}: sparse arrays can only be saved as v2 records "
                                 f"(np_semantics=False)")
            parts += _sparse_record(v, where)
        else:
            parts += _dense_record(v, where, version)
    parts.append(_U64.pack(len(names)))
    for k in names:
        kb = k.encode("utf-8")
        parts += [_U64.pack(len(kb)), kb]
    return b"".join(parts)

