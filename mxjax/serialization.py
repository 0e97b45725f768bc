"""MXNet's binary NDArray list format (``.params``) and the ``.npz``/``.npy`` dispatch, in NumPy.

The layout is documented in ``shared/formats/FORMATS.md`` section 1: a header
(list magic 0x112, reserved, count N), N array records (v0/v1 legacy, v2
classic shapes, v3 NumPy shapes), and a names section (0 or N UTF-8 names).
Everything is little-endian. This module is pure NumPy (+ ``ml_dtypes`` for
bfloat16) so that the JAX layers can wrap its results however they like.

Reading notes (decisions):
* Records of any version may be mixed in one file.
* ndim 0 in v0/v1/v2 records and an unknown shape (ndim or a dim == -1) in v3
  records are "none" arrays; they load as ``None``. (MXNet 1.9.1 misreads
  ndim-0 v0/v1 records; we follow the writers of those versions instead.)
* Bytes after the names section are ignored, as MXNet's loader ignores them.
* Every malformed input raises :class:`MXNetError` naming the record and what
  was expected; nothing is ever partially loaded.  ``load`` and :func:`reading` add the
  file's name.
* Saving to a path is atomic (``_atomic``): a failed save leaves the old file as it was.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import struct
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterator, Union

import ml_dtypes
import numpy as np

from ._atomic import atomic_write
from .base import MXNetError

__all__ = [
    "DTYPE_TO_FLAG", "FLAG_TO_DTYPE", "SparseRecord", "loads_params", "dumps_params",
    "detect_format", "loads", "load", "save", "savez", "save_npy", "file_label", "reading",
]

PathOrFile = Union[str, os.PathLike, BinaryIO]

LIST_MAGIC = 0x112
V1_MAGIC, V2_MAGIC, V3_MAGIC = 0xF993FAC8, 0xF993FAC9, 0xF993FACA
_MAGIC_TO_VERSION = {V1_MAGIC: 1, V2_MAGIC: 2, V3_MAGIC: 3}
_VERSION_TO_MAGIC = {2: V2_MAGIC, 3: V3_MAGIC}
_STYPE_FLAGS = {"row_sparse": 1, "csr": 2}
_MAX_NDIM = 64          # NumPy's limit; anything bigger is garbage (e.g. a bad v0 "ndim")
_CPU_CONTEXT = struct.pack("<ii", 1, 0)   # dev_type cpu, dev_id 0: what a CPU save writes
_LITTLE = sys.byteorder == "little"

_U32, _I32, _U64 = struct.Struct("<I"), struct.Struct("<i"), struct.Struct("<Q")
_HEADER = struct.Struct("<QQQ")

FLAG_TO_DTYPE: dict[int, np.dtype] = {
    0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16),
    3: np.dtype(np.uint8), 4: np.dtype(np.int32), 5: np.dtype(np.int8),
    6: np.dtype(np.int64), 7: np.dtype(np.bool_), 8: np.dtype(np.int16),
    9: np.dtype(np.uint16), 10: np.dtype(np.uint32), 11: np.dtype(np.uint64),
    12: np.dtype(ml_dtypes.bfloat16),
}
DTYPE_TO_FLAG: dict[np.dtype, int] = {dt: flag for flag, dt in FLAG_TO_DTYPE.items()}
# MXNet 1.x's Python exposes bfloat16 as a structured dtype wrapping uint16; accept it on write.
_MX_BF16 = np.dtype([("bfloat16", np.uint16)])


def _flag_of(dtype: np.dtype, where: str) -> int:
    """Type flag for a NumPy dtype (any byte order), or a clear error."""
    if dtype == _MX_BF16:
        return 12
    key = dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype
    flag = DTYPE_TO_FLAG.get(key)
    if flag is None:
        raise MXNetError(f"{where}: dtype {dtype} cannot be stored in an NDArray file; "
                         f"supported: {', '.join(str(d) for d in FLAG_TO_DTYPE.values())}")
    return flag


@dataclass
class SparseRecord:
    """A row_sparse or csr array as stored: data plus int64 index arrays.

    row_sparse: ``data`` has shape ``(len(indices),) + shape[1:]`` and ``indices``
    lists the stored rows. csr (2-D): ``data`` and ``indices`` (columns) have nnz
    entries and ``indptr`` has ``rows + 1`` (or, for an empty array, 0) entries.
    """

    stype: str
    shape: tuple
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray | None = None
    dtype: np.dtype | None = None

    def __post_init__(self) -> None:
        self.shape = tuple(int(d) for d in self.shape)
        self.data = np.asarray(self.data)
        self.indices = np.asarray(self.indices)
        if self.indptr is not None:
            self.indptr = np.asarray(self.indptr)
        self.dtype = self.data.dtype if self.dtype is None else np.dtype(self.dtype)

    def validate(self) -> None:
        """Raise MXNetError unless the components describe one consistent array."""
        shp, d, idx, ptr = self.shape, self.data, self.indices, self.indptr
        ints = idx.dtype.kind in "iu" and (ptr is None or ptr.dtype.kind in "iu")
        if self.stype == "row_sparse":
            ok = len(shp) == d.ndim >= 1 and d.shape[1:] == shp[1:] and idx.shape == d.shape[:1]
            bound = shp[0] if shp else 0
        elif self.stype == "csr":
            ok = len(shp) == 2 and d.ndim == 1 and idx.shape == d.shape and ptr is not None
            # indptr: rows + 1 offsets from 0 to nnz, or empty for an array with nothing stored
            ok = ok and ints and ptr.ndim == 1 and (
                (ptr.size == 0 and d.size == 0) or (ptr.size == shp[0] + 1 and ptr[0] == 0
                                                    and ptr[-1] == d.size
                                                    and bool(np.all(ptr[1:] >= ptr[:-1]))))
            bound = shp[1] if len(shp) == 2 else 0
        else:
            raise MXNetError(f"unknown sparse storage type {self.stype!r}")
        if not (ok and ints):
            raise MXNetError(f"inconsistent {self.stype} array: shape {shp}, data {d.shape}, "
                             f"indices {idx.shape} {idx.dtype}"
                             + ("" if ptr is None else f", indptr {ptr.shape} {ptr.dtype}"))
        if idx.size and (idx.min() < 0 or idx.max() >= bound):
            raise MXNetError(f"{self.stype} indices out of range [0, {bound})")

    def todense(self) -> np.ndarray:
        """The dense NumPy array this record stands for."""
        self.validate()
        out = np.zeros(self.shape, dtype=self.dtype)
        if self.stype == "row_sparse":
            out[self.indices.astype(np.intp)] = self.data
        elif self.data.size:
            rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
            out[rows, self.indices.astype(np.intp)] = self.data
        return out


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


# ----------------------------------------------------------------------------- files and dispatch

def detect_format(buf: bytes | bytearray | memoryview) -> str:
    """'npz', 'npy' or 'params' from the first bytes, as MXNet 2's loader decides."""
    head = bytes(buf[:6])
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "npz"
    if head == b"\x93NUMPY":
        return "npy"
    return "params"


def loads(buf: bytes | bytearray | memoryview) -> Any:
    """Decode file bytes by their first bytes: npz → dict, npy → ndarray, else the list format."""
    kind = detect_format(buf)
    if kind == "params":
        return loads_params(buf)
    try:
        loaded = np.load(io.BytesIO(bytes(buf)), allow_pickle=False)
        if kind == "npy":
            return loaded
        with loaded as z:
            return {k: z[k] for k in z.files}
    except Exception as e:   # NumPy/zipfile raise many kinds on corrupt input; report one
        raise MXNetError(f"cannot read {kind} data: {type(e).__name__}: {e}") from e


def file_label(fname: Any) -> str:
    """How an error names a file given as a path or as an open file object."""
    if isinstance(fname, (str, bytes, os.PathLike)):
        return os.fsdecode(fname)
    name = getattr(fname, "name", None)
    return os.fsdecode(name) if isinstance(name, (str, bytes)) else f"<{type(fname).__name__}>"


# What corrupt bytes make decoders raise besides MXNetError (a .json that is not UTF-8, a
# zip whose directory is garbage, JSON nested deeper than Python recurses).
_DECODE_ERRORS = (UnicodeError, struct.error, EOFError, zipfile.BadZipFile, json.JSONDecodeError,
                  RecursionError)


@contextlib.contextmanager
def reading(fname: Any, what: str = "file") -> Iterator[None]:
    """Turn errors raised while decoding ``fname``'s contents into MXNetError naming the file.

    MXNetError subclasses keep their class (an MXNetValueError stays one); decode errors
    of other kinds become MXNetError.  OSError (a missing file) passes through unchanged.
    """
    label = file_label(fname)
    try:
        yield
    except MXNetError as err:
        text = str(err)
        if label in text:
            raise
        try:
            new = type(err)(f"{what} {label}: {text}")
        except Exception:   # a subclass with another constructor: keep the class chain simple
            new = MXNetError(f"{what} {label}: {text}")
        raise new from None
    except _DECODE_ERRORS as err:
        raise MXNetError(f"{what} {label} is corrupt or not of the expected format: "
                         f"{type(err).__name__}: {err}") from None


def load(fname: PathOrFile) -> Any:
    """Load a ``.params`` list file, an ``.npz`` (dict) or an ``.npy`` (bare array)."""
    if hasattr(fname, "read"):
        with reading(fname, "NDArray file"):
            return loads(fname.read())
    with open(fname, "rb") as f:
        buf = f.read()
    with reading(fname, "NDArray file"):
        return loads(buf)


def _write_with(fname: PathOrFile, write: Callable[[BinaryIO], None]) -> None:
    """Call ``write`` on an open file object as given, or on a path through an atomic write."""
    if hasattr(fname, "write"):
        write(fname)
    else:
        with atomic_write(fname, "wb") as f:
            write(f)


def save(fname: PathOrFile, data: Any, np_semantics: bool = False) -> None:
    """Write ``data`` (dict, list or one array) as an NDArray list file (v2; v3 if np_semantics)."""
    blob = dumps_params(data, np_semantics=np_semantics)   # encode fully before touching the file
    _write_with(fname, lambda f: f.write(blob))


def _write_npy(fp: BinaryIO, value: Any) -> None:
    """Write one .npy; dtypes NumPy cannot describe natively (bfloat16) get their name as descr.

    ``np.save`` would write bfloat16 as the anonymous ``'<V2'`` and the type
    would be lost; a ``'bfloat16'`` descr loads back with ``np.load`` whenever
    ``ml_dtypes`` is imported (and fails loudly, not silently, without it).
    """
    a = np.asarray(value, order="C")   # (ascontiguousarray would make 0-d 1-d)
    if a.dtype.hasobject:
        raise MXNetError(f"cannot save an object array ({a.dtype}) to .npy without pickle")
    header = np.lib.format.header_data_from_array_1_0(a)
    dt = a.dtype
    if dt.kind == "V" and dt.names is None and np.dtype(dt.str) != dt:
        header["descr"] = dt.name
    try:
        np.lib.format.write_array_header_1_0(fp, header)
    except ValueError:   # header longer than 64 KiB (huge ndim): needs format 2.0
        np.lib.format.write_array_header_2_0(fp, header)
    # The header states the array's own byte order, so its memory goes out as is.
    fp.write(memoryview(a.reshape(-1).view(np.uint8)))


def save_npy(fname: PathOrFile, array: Any) -> None:
    """Write one array as a standard ``.npy`` file (to exactly ``fname``; no suffix added)."""
    _write_with(fname, lambda f: _write_npy(f, array))


def savez(fname: PathOrFile, *args: Any, **kwds: Any) -> None:
    """Write a standard uncompressed ``.npz`` like ``numpy.savez`` (positional → ``arr_0``, ...)."""
    named = dict(kwds)
    for i, a in enumerate(args):
        key = f"arr_{i}"
        if key in named:
            raise MXNetError(f"cannot use un-named variables and keyword {key}")
        named[key] = a

    def write(fp: BinaryIO) -> None:
        with zipfile.ZipFile(fp, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for key, val in named.items():
                with zf.open(key + ".npy", "w", force_zip64=True) as fid:
                    _write_npy(fid, val)
    _write_with(fname, write)
