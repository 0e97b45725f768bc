"""``mx.recordio``: MXNet's RecordIO files (``.rec`` + ``.idx``), read and written in pure Python.

``MXRecordIO`` reads or writes records in order, ``MXIndexedRecordIO`` adds the ``.idx`` text
index for random access, and ``pack``/``unpack``(``_img``) put an image record header (and an
encoded image) in front of a payload.  The bytes are identical to MXNet's; the part format itself
(chunked reader, buffered writer) is in ``_recordio_files`` and the image codec in
``_recordio_codec``, both re-exported here.

Unlike MXNet, a truncated or corrupt file always raises (naming the file and byte offset) instead
of ending early, pickling keeps a reader's position, pickling a writer never truncates, and
threads may share an indexed reader (``read_idx`` is one step: a thread-pool ``DataLoader``).
"""
from __future__ import annotations

import io
import numbers
import os
import struct
from collections import namedtuple
from typing import Any, Optional

import numpy as np

from ._recordio_codec import _encode, _imdecode
from ._recordio_files import _MAGIC_BYTES, _flush_at_exit  # noqa: F401  (io._split and the tests use them here)
from ._recordio_files import RecordFileNotFound, _Reader, _RecordFile, _Writer
from .base import MXNetError, MXNetValueError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]


def _path_str(uri: Any, what: str) -> str:
    if isinstance(uri, bytes):
        return uri.decode("utf-8")
    if isinstance(uri, (str, os.PathLike)):
        return os.fspath(uri)
    raise TypeError(f"{what}: uri must be a path string, got {type(uri).__name__}")


class MXRecordIO:
    """Sequential reader (``flag='r'``) or writer (``flag='w'``) of a RecordIO file.

    ``read()`` returns the next record's bytes (None at the end) and ``write(buf)`` appends one.
    Readers can be pickled: the copy reopens the file at the same position (MXNet restarts at
    the beginning). A reader used in a forked child reopens its file instead of sharing the
    parent's file offset.
    """

    def __init__(self, uri: Any, flag: str) -> None:
        self.uri = _path_str(uri, type(self).__name__)
        self.flag = flag
        self.pid: Optional[int] = None
        self.is_open = False
        self.writable = False
        self._io: Optional[_RecordFile] = None
        self.open()

    def _open_io(self, resume: int = 0, append: bool = False) -> None:
        if self.flag == "w":
            self._io = _Writer(self.uri, append=append)
            self.writable = True
        elif self.flag == "r":
            self._io = _Reader(self.uri, resume)
            self.writable = False
        else:
            raise ValueError(f"Invalid flag {self.flag}: expected 'r' or 'w'")
        self.pid = os.getpid()
        self.is_open = True

    def open(self) -> None:
        """Open the file: a reader starts at the first record, a writer truncates the file."""
        self._open_io()

    def close(self) -> None:
        """Close the file (a writer flushes first); closing twice is harmless."""
        if not self.is_open:
            return
        handle, self._io = self._io, None
        self.is_open = False
        self.pid = None
        if handle is not None:
            handle.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown or a file system error: nothing left to do
            pass

    def __enter__(self) -> "MXRecordIO":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def reset(self) -> None:
        """Back to the first record; for a writer this empties the file, as in MXNet."""
        self.close()
        self.open()

    def _handle(self, op: str) -> Any:
        if not self.is_open or self._io is None:
            raise MXNetError(f"{type(self).__name__}.{op}: {self.uri!r} is closed; call open() first")
        return self._io

    def write(self, buf: bytes) -> None:
        """Append ``buf`` (bytes) as one record."""
        assert self.writable, f"{type(self).__name__}.write: {self.uri!r} was opened for reading"
        if not isinstance(buf, bytes):
            raise TypeError(f"{type(self).__name__}.write: expected bytes, got {type(buf).__name__}")
        writer = self._handle("write")
        if writer._foreign:
            raise RuntimeError("Forbidden operation in multiple processes: "
                               f"{self.uri!r} was opened for writing by another process")
        writer.write(buf)

    def read(self) -> Optional[bytes]:
        """The next record as bytes, or None after the last one."""
        assert not self.writable, f"{type(self).__name__}.read: {self.uri!r} was opened for writing"
        reader = self._io
        if reader is None:
            self._handle("read")   # raises: closed
        return reader.read()

    def tell(self) -> int:
        """Byte offset where the next record will be written (or, for a reader, read)."""
        return self._handle("tell").tell()

    def __getstate__(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k != "_io"}
        if self.is_open and not self.writable:
            state["_resume"] = self._io.tell()
        elif self.is_open:
            # MXNet closes the writer here and the copy reopens with 'w', emptying the file; close
            # this one too (two writers would interleave) but let the copy append instead.
            self.close()
            state["_resume"] = "append"
        return state

    def __setstate__(self, state: dict) -> None:
        resume = state.pop("_resume", None)
        self.__dict__.update(state)
        self._io = None
        self.is_open = False
        if resume == "append":
            self._open_io(append=True)
        elif resume is not None:
            self._open_io(resume=resume)


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file plus its ``.idx`` text index (``key<TAB>offset`` lines) for random access.

    ``read_idx(key)`` reads one record, ``write_idx(key, buf)`` appends one and indexes it;
    ``keys`` lists the keys in file order and ``idx`` maps key to byte offset.
    """

    def __init__(self, idx_path: Any, uri: Any, flag: str, key_type: type = int) -> None:
        self.idx_path = _path_str(idx_path, "MXIndexedRecordIO")
        self.idx: dict = {}
        self.keys: list = []
        self.key_type = key_type
        self.fidx: Optional[io.FileIO] = None
        super().__init__(uri, flag)

    def _load_index(self) -> None:
        try:
            with open(self.idx_path, "r") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            raise RecordFileNotFound(f"MXIndexedRecordIO: index file {self.idx_path!r} "
                                     "does not exist") from None
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line:
                continue
            fields = line.split("\t") if "\t" in line else line.split()
            try:
                key, offset = self.key_type(fields[0]), int(fields[1])
            except (ValueError, IndexError):
                raise MXNetValueError(f"MXIndexedRecordIO: line {number} of {self.idx_path!r} is "
                                      f"{line!r}, expected '<key>\\t<offset>'") from None
            if key not in self.idx:
                self.keys.append(key)
            self.idx[key] = offset

    def open(self) -> None:
        super().open()
        self._open_index(append=False)

    def _open_index(self, append: bool) -> None:
        if self.writable:
            if not append:
                self.idx, self.keys = {}, []
            try:
                self.fidx = open(self.idx_path, "ab" if append else "wb", buffering=0)
            except OSError as err:
                self.close()
                raise MXNetError(f"MXIndexedRecordIO: cannot open index file {self.idx_path!r} "
                                 f"for writing: {err}") from None
            self._io.index = self.fidx   # the writer owns and closes it
        elif not self.idx:
            try:
                self._load_index()
            except BaseException:
                self.close()
                raise

    def close(self) -> None:
        if not self.is_open:
            return
        super().close()
        self.fidx = None

    def seek(self, idx: Any) -> None:
        """Position the reader at the record stored under key ``idx`` (KeyError if absent)."""
        assert not self.writable, f"MXIndexedRecordIO.seek: {self.uri!r} was opened for writing"
        self._handle("seek").seek(self.idx[idx])

    def read_idx(self, idx: Any) -> Optional[bytes]:
        """The record stored under key ``idx`` (one step: threads may share this reader, unlike MXNet's,
        where another thread's seek in between gives a wrong record)."""
        assert not self.writable, f"MXIndexedRecordIO.read_idx: {self.uri!r} was opened for writing"
        record = self._handle("read_idx").read_at(self.idx[idx])
        if record is None:   # MXNet returns None here; a stale index deserves an error
            raise MXNetError(f"MXIndexedRecordIO.read_idx: key {idx!r} points to byte offset "
                             f"{self.idx[idx]}, past the end of {self.uri!r}")
        return record

    def write_idx(self, idx: Any, buf: bytes) -> None:
        """Append ``buf`` as a record and index it under ``key_type(idx)``."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self._io.add_index_line(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["fidx"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        resume = state.get("_resume")
        super().__setstate__(state)
        if self.is_open:
            self._open_index(append=resume == "append")


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
# The repr says HEADER as in MXNet, but pickle finds the class by its qualified name (MXNet's
# headers cannot be pickled, which breaks sending them to DataLoader worker processes).
IRHeader.__qualname__ = "IRHeader"
IRHeader.__doc__ = """Image record header: ``flag`` (number of float32 labels stored after the header,
0 for a scalar label), ``label`` (a number or an array of floats), ``id`` and ``id2`` (uint64 ids)."""

_IR_FORMAT = struct.Struct("<IfQQ")
_IR_SIZE = _IR_FORMAT.size


def pack(header: Any, s: bytes) -> bytes:
    """Prefix ``s`` with an image record header; an array label is stored after the header and
    sets ``flag`` to its size, a number label is stored in the header with ``flag=0``."""
    header = IRHeader(*header)
    label = header.label
    if isinstance(label, numbers.Number):
        head = _IR_FORMAT.pack(0, label, header.id, header.id2)
        return head + s
    labels = np.asarray(label, dtype=np.float32)
    head = _IR_FORMAT.pack(labels.size, 0.0, header.id, header.id2)
    return head + labels.tobytes() + s


def unpack(s: bytes) -> tuple:
    """Split a record made by ``pack`` into ``(IRHeader, rest)``; a multi-label header's label
    is a read-only float32 array viewing ``s``."""
    flag, label, id1, id2 = _IR_FORMAT.unpack(s[:_IR_SIZE])
    rest = s[_IR_SIZE:]
    if flag > 0:
        label = np.frombuffer(rest, np.float32, flag)
        rest = rest[flag * 4:]
    return IRHeader(flag, label, id1, id2), rest


def pack_img(header: Any, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode ``img`` (uint8, HxW gray or HxWx3 **BGR** as OpenCV gives it) and ``pack`` it.

    ``quality`` is the JPEG quality (1-100) or, for PNG, the zlib compression level (0-9).
    """
    return pack(header, _encode(img, quality, img_fmt))


def unpack_img(s: bytes, iscolor: int = -1) -> tuple:
    """``(IRHeader, image)`` from a record made by ``pack_img``; the image follows OpenCV's
    ``imdecode(buf, iscolor)``: 1 gives HxWx3 BGR, 0 gives HxW gray, -1 keeps the stored
    channels (gray HxW, BGR, BGRA, 16-bit gray)."""
    header, body = unpack(s)
    return header, _imdecode(body, iscolor)
