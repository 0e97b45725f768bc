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
import os
import struct
import zipfile
from typing import Any, BinaryIO, Callable, Iterator, Union

import numpy as np

from ._atomic import atomic_write
from ._serialization_format import DTYPE_TO_FLAG, FLAG_TO_DTYPE, SparseRecord
from ._serialization_format import LIST_MAGIC, V1_MAGIC, V2_MAGIC, V3_MAGIC  # noqa: F401  (importable here as before)
from ._serialization_params import dumps_params, loads_params
from .base import MXNetError

__all__ = [
    "DTYPE_TO_FLAG", "FLAG_TO_DTYPE", "SparseRecord", "loads_params", "dumps_params",
    "detect_format", "loads", "load", "save", "savez", "save_npy", "file_label", "reading",
]

PathOrFile = Union[str, os.PathLike, BinaryIO]

SparseRecord.__module__ = __name__  # public as mx.serialization.SparseRecord; defined in the format module


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
