"""``mx.recordio``: MXNet's RecordIO files (``.rec`` + ``.idx``), read and written in pure Python.

A ``.rec`` file is a run of 4-byte aligned parts ``magic | cflag:3 length:29 | data | pad``; a
record whose payload holds the magic word at an aligned offset is cut into several parts there,
so readers can find record starts by scanning aligned words.  The bytes written here are
identical to MXNet's (dmlc-core's writer), and any MXNet-written file reads back exactly.

Reading parses a large in-memory chunk with ``struct.unpack_from`` instead of one system call
per field, which is what makes a plain Python reader faster than MXNet's ctypes loop.  Unlike
MXNet, a truncated or corrupt file always raises (naming the file and byte offset) instead of
ending early, pickling keeps a reader's position, and pickling a writer never truncates.
"""
from __future__ import annotations

import atexit
import io
import numbers
import os
import struct
import weakref
from collections import namedtuple
from typing import Any, Optional

import numpy as np

from .base import MXNetError, MXNetValueError

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img", "unpack_img"]

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
        if offset:
            self.seek(offset)
        _LIVE.add(self)

    def _forked(self) -> None:
        self._reopen = True

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
        """The record stored under key ``idx``."""
        self.seek(idx)
        record = self.read()
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


def _pillow() -> Any:
    try:
        from PIL import Image
    except ImportError:  # Pillow is a declared dependency; without it only the image helpers fail
        raise MXNetError("pack_img/unpack_img need Pillow (pip install Pillow)") from None
    return Image


def _encode(img: np.ndarray, quality: int, img_fmt: str) -> bytes:
    Image = _pillow()
    ext = img_fmt.lower() if img_fmt.startswith(".") else "." + img_fmt.lower()
    fmt = Image.registered_extensions().get(ext)
    if fmt is None:
        raise MXNetValueError(f"pack_img: unknown image format {img_fmt!r}, expected e.g. '.jpg' or '.png'")
    img = np.asarray(img)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 2 and img.dtype == np.uint16 and fmt == "PNG":
        pil = Image.fromarray(img)
    elif img.dtype != np.uint8:
        raise MXNetValueError(f"pack_img: expected a uint8 image (or uint16 gray for PNG), got {img.dtype}")
    elif img.ndim == 2:
        pil = Image.fromarray(img)
    elif img.ndim == 3 and img.shape[2] in (3, 4):
        # OpenCV's channel order, as MXNet's pack_img expects: BGR / BGRA.
        order = [2, 1, 0] if img.shape[2] == 3 else [2, 1, 0, 3]
        pil = Image.fromarray(np.ascontiguousarray(img[:, :, order]))
    else:
        raise MXNetValueError(f"pack_img: expected an HxW, HxWx3 (BGR) or HxWx4 (BGRA) image, "
                              f"got shape {img.shape}")
    options: dict = {}
    if fmt == "JPEG":
        if pil.mode == "RGBA":
            raise MXNetValueError("pack_img: JPEG cannot store an alpha channel; drop it or use '.png'")
        options["quality"] = int(quality)
    elif fmt == "PNG":
        options["compress_level"] = min(max(int(quality), 0), 9)
    out = io.BytesIO()
    pil.save(out, format=fmt, **options)
    return out.getvalue()


def pack_img(header: Any, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode ``img`` (uint8, HxW gray or HxWx3 **BGR** as OpenCV gives it) and ``pack`` it.

    ``quality`` is the JPEG quality (1-100) or, for PNG, the zlib compression level (0-9).
    """
    return pack(header, _encode(img, quality, img_fmt))


def _decode_unchanged(body: bytes) -> np.ndarray:
    Image = _pillow()
    try:
        with Image.open(io.BytesIO(body)) as pil:
            pil.load()
            mode = pil.mode
            if mode in ("I;16", "I;16B", "I;16L"):
                return np.asarray(pil, dtype=np.uint16).copy()
            if mode == "1":
                pil = pil.convert("L")
            elif mode == "P":
                pil = pil.convert("RGBA" if "transparency" in pil.info else "RGB")
            elif mode == "LA":
                pil = pil.convert("RGBA")
            elif mode not in ("L", "RGB", "RGBA"):
                pil = pil.convert("RGB")
            pixels = np.asarray(pil)
    except Exception as err:  # Pillow raises several kinds (UnidentifiedImageError, OSError, ...)
        raise MXNetError(f"unpack_img: {len(body)} bytes are not a valid image "
                         f"({type(err).__name__}: {err})") from None
    if pixels.ndim == 3:
        order = [2, 1, 0] if pixels.shape[2] == 3 else [2, 1, 0, 3]
        pixels = pixels[:, :, order]
    return np.ascontiguousarray(pixels)


def unpack_img(s: bytes, iscolor: int = -1) -> tuple:
    """``(IRHeader, image)`` from a record made by ``pack_img``; the image follows OpenCV's
    ``imdecode(buf, iscolor)``: 1 gives HxWx3 BGR, 0 gives HxW gray, -1 keeps the stored
    channels (gray HxW, BGR, BGRA, 16-bit gray)."""
    header, body = unpack(s)
    return header, _imdecode(body, iscolor)


def _imdecode(body: bytes, iscolor: int, op: str = "unpack_img") -> np.ndarray:
    """Encoded image bytes to pixels in OpenCV's ``imdecode`` layout (see ``unpack_img``)."""
    from ._image_codec import decode
    if iscolor < 0:
        return _decode_unchanged(body)
    if iscolor == 0:
        return decode(body, op, flag=0)[:, :, 0]
    return decode(body, op, flag=1, to_rgb=False)
