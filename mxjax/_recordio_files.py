"""RecordIO's on-disk part format: the chunked reader and buffered writer behind ``mx.recordio``.

A ``.rec`` file is a run of 4-byte aligned parts ``magic | cflag:3 length:29 | data | pad``; a
record whose payload holds the magic word at an aligned offset is cut into several parts there,
so readers can find record starts by scanning aligned words.  The bytes written here are
identical to MXNet's (dmlc-core's writer), and any MXNet-written file reads back exactly.

Reading parses a large in-memory chunk with ``struct.unpack_from`` instead of one system call
per field, which is what makes a plain Python reader faster than MXNet's ctypes loop; a truncated
or corrupt file always raises, naming the file and byte offset.  Kept apart from the public
classes in ``recordio`` (which re-exports these names) because ``io``'s file splitter reads parts too.
"""
from __future__ import annotations

import atexit
import io
import os
import struct
import threading
import weakref
from typing import Optional

from .base import MXNetError, MXNetValueError

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_PART_HEAD = struct.Struct("<II")
_LEN_MASK = (1 << 29) - 1
_MAX_RECORD = 1 << 29
_FIRST_CHUNK = 1 << 14      # after a seek: small, so random access stays cheap
_MAX_CHUNK = 1 << 20        # sequential reading grows the chunk up to this
_WRITE_FLUSH = 1 << 20


class RecordFileNotFound(MXNetError, FileNotFoundError):
    """A RecordIO or index file that does not exist (MXNet raises ``MXNetError``; this is both)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _corrupt(path: str, offset: int, what: str) -> MXNetError:
    return MXNetError(f"invalid RecordIO file {path!r} at byte offset {offset}: {what}")


# Readers and writers opened in this process; after os.fork() the child stops sharing their file
# descriptors (whose offset is shared with the parent) by reopening lazily / refusing writes.
_LIVE: "weakref.WeakSet[_RecordFile]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for handle in list(_LIVE):
        handle._forked()


def _flush_at_exit() -> None:
    # Writers still open when the interpreter exits keep their buffered records.
    for handle in list(_LIVE):
        if isinstance(handle, _Writer) and not handle._foreign:
            try:
                handle.flush()
            except OSError:
                pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_flush_at_exit)


class _RecordFile:
    """Base of the reader and the writer: the path and the open raw file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._raw: Optional[io.FileIO] = None

    def close(self) -> None:
        raw, self._raw = self._raw, None
        if raw is not None:
            raw.close()


class _Reader(_RecordFile):
    """Sequential record parser over a chunk buffer, with seek/tell in file byte offsets."""

    def __init__(self, path: str, offset: int = 0) -> None:
        super().__init__(path)
        try:
            self._raw = open(path, "rb", buffering=0)
        except FileNotFoundError:
            raise RecordFileNotFound(f"cannot open RecordIO file {path!r} for reading: "
                                     "no such file") from None
        except OSError as err:
            raise MXNetError(f"cannot open RecordIO file {path!r} for reading: {err}") from None
        self._reopen = False
        self._buf = b""
        self._bpos = 0
        self._bstart = 0
        self._chunk = _FIRST_CHUNK
        self._lock = threading.Lock()  # one indexed read at a time: threads may share a reader (read_at)
        if offset:
            self.seek(offset)
        _LIVE.add(self)

    def _forked(self) -> None:
        self._reopen = True
        self._lock = threading.Lock()  # (a thread of the parent may have held it at the fork)

    def tell(self) -> int:
        return self._bstart + self._bpos

    def seek(self, offset: int) -> None:
        """Move to byte ``offset``; stays inside the current chunk when possible."""
        if self._bstart <= offset <= self._bstart + len(self._buf):
            self._bpos = offset - self._bstart
            return
        self._buf, self._bpos, self._bstart = b"", 0, offset
        self._chunk = _FIRST_CHUNK
        self._file().seek(offset)

    def _file(self) -> io.FileIO:
        if self._raw is None:
            raise MXNetError(f"RecordIO file {self.path!r} is closed")
        if self._reopen:
            # In a forked child: the inherited descriptor's offset moves with the parent's reads.
            self._raw = open(self.path, "rb", buffering=0)
            self._raw.seek(self._bstart + len(self._buf))
            self._reopen = False
        return self._raw

    def _fill(self, need: int) -> bool:
        """Make ``need`` bytes available from ``_bpos``; False if the file ends first."""
        buf = self._buf
        have = len(buf) - self._bpos
        want = max(need - have, self._chunk)
        more = self._file().read(want) or b""
        while len(more) < need - have:  # a short read is not necessarily the end of the file
            extra = self._raw.read(need - have - len(more))
            if not extra:
                break
            more += extra
        self._bstart += self._bpos
        self._buf = buf[self._bpos:] + more if have else more
        self._bpos = 0
        if self._chunk < _MAX_CHUNK:
            self._chunk *= 2
        return len(self._buf) >= need

    def read_at(self, offset: int) -> Optional[bytes]:
        """The record at byte ``offset``, seek and read as one step: the threads of a thread-pool
        ``DataLoader`` share one indexed reader, and another thread's seek between the two would
        hand this one the wrong record (or a torn one).  (``read`` alone takes no lock: reading in
        order is one consumer's, and the lock would cost a third of its speed.)"""
        with self._lock:
            self.seek(offset)
            return self.read()

    def read(self) -> Optional[bytes]:
        """The next record's payload, or None at the end of the file."""
        buf, p = self._buf, self._bpos
        try:
            magic, lrec = _PART_HEAD.unpack_from(buf, p)
        except struct.error:       # fewer than 8 bytes left in the chunk
            return self._read_slow()
        if magic == _MAGIC and lrec <= _LEN_MASK:   # a whole record in one part (cflag 0)
            stop = p + 8 + ((lrec + 3) & ~3)
            if stop <= len(buf):
                self._bpos = stop
                return buf[p + 8:p + 8 + lrec]
        return self._read_slow()

    def _read_slow(self) -> Optional[bytes]:
        start = self.tell()
        pieces = []
        while True:
            at = self.tell()
            if not self._fill(8):
                if len(self._buf) == self._bpos and not pieces:
                    return None
                left = len(self._buf) - self._bpos
                what = (f"file ends {left} bytes into a part header" if left else
                        f"file ends inside the multi-part record that starts at {start}")
                raise _corrupt(self.path, at, what)
            magic, lrec = _PART_HEAD.unpack_from(self._buf, self._bpos)
            if magic != _MAGIC:
                raise _corrupt(self.path, at, f"expected magic 0x{_MAGIC:08X}, found 0x{magic:08X}")
            cflag, length = lrec >> 29, lrec & _LEN_MASK
            if cflag > 3 or (cflag in (0, 1)) != (not pieces):
                expect = "0 or 1 (a record start)" if not pieces else "2 or 3 (a continuation)"
                raise _corrupt(self.path, at, f"part flag {cflag}, expected {expect}")
            padded = (length + 3) & ~3
            if not self._fill(8 + padded):
                left = len(self._buf) - self._bpos - 8
                raise _corrupt(self.path, at, f"part of {length} bytes (padded {padded}) but the "
                                              f"file ends after {left}")
            p = self._bpos + 8
            pieces.append(self._buf[p:p + length])
            self._bpos = p + padded
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(pieces)

    def skip(self) -> bool:
        """Step over the next record reading only part headers; False at the end of the file."""
        first = True
        while True:
            at = self.tell()
            if not self._fill(8):
                if len(self._buf) == self._bpos and first:
                    return False
                raise _corrupt(self.path, at, "file ends inside a record")
            magic, lrec = _PART_HEAD.unpack_from(self._buf, self._bpos)
            if magic != _MAGIC:
                raise _corrupt(self.path, at, f"expected magic 0x{_MAGIC:08X}, found 0x{magic:08X}")
            cflag = lrec >> 29
            if cflag > 3 or (cflag in (0, 1)) != first:
                raise _corrupt(self.path, at, f"unexpected part flag {cflag}")
            nxt = at + 8 + (((lrec & _LEN_MASK) + 3) & ~3)
            if nxt <= self._bstart + len(self._buf):
                self._bpos = nxt - self._bstart
            else:
                self.seek(nxt)
            if cflag in (0, 3):
                return True
            first = False


class _Writer(_RecordFile):
    """Appends records in MXNet's part layout, buffering them until ``flush``."""

    def __init__(self, path: str, append: bool = False) -> None:
        super().__init__(path)
        try:
            self._raw = open(path, "ab" if append else "wb", buffering=0)
        except OSError as err:
            raise MXNetError(f"cannot open RecordIO file {path!r} for writing: {err}") from None
        self._pending = bytearray()
        self._pos = self._raw.seek(0, os.SEEK_END) if append else 0
        self._foreign = False   # True in a forked child: the file belongs to the parent
        self.index: Optional[io.FileIO] = None   # the .idx file of an indexed writer
        self._lines: list = []
        _LIVE.add(self)

    def _forked(self) -> None:
        # The child must neither write nor flush the parent's pending bytes a second time.
        self._pending = bytearray()
        self._lines = []
        self._foreign = True

    def add_index_line(self, line: str) -> None:
        self._lines.append(line)

    def tell(self) -> int:
        return self._pos

    def write(self, payload: bytes) -> None:
        n = len(payload)
        if n >= _MAX_RECORD:
            raise MXNetValueError(f"MXRecordIO.write: a record must be shorter than 2**29 bytes, "
                                  f"got {n} bytes")
        out = self._pending
        cuts = []
        hit = payload.find(_MAGIC_BYTES)
        while hit >= 0:
            if hit % 4 == 0:
                cuts.append(hit)
                hit = payload.find(_MAGIC_BYTES, hit + 4)
            else:
                hit = payload.find(_MAGIC_BYTES, hit + 1)
        if not cuts:
            out += _PART_HEAD.pack(_MAGIC, n)
            out += payload
        else:
            begin = 0
            for i, cut in enumerate(cuts):
                out += _PART_HEAD.pack(_MAGIC, ((1 if i == 0 else 2) << 29) | (cut - begin))
                out += payload[begin:cut]
                begin = cut + 4
            out += _PART_HEAD.pack(_MAGIC, (3 << 29) | (n - begin))
            out += payload[begin:]
        pad = -len(out) % 4
        out += b"\0" * pad
        self._pos += 8 * (len(cuts) + 1) + n - 4 * len(cuts) + pad
        if len(out) >= _WRITE_FLUSH:
            self.flush()

    def flush(self) -> None:
        """Write out buffered records, then their index lines (so the index never points past
        what is on disk)."""
        if self._pending and self._raw is not None:
            self._raw.write(self._pending)
            self._pending = bytearray()
        if self._lines and self.index is not None:
            self.index.write("".join(self._lines).encode("utf-8"))
            self._lines = []

    def close(self) -> None:
        if self._raw is not None and not self._foreign:
            self.flush()
        super().close()
        index, self.index = self.index, None
        if index is not None:
            index.close()
