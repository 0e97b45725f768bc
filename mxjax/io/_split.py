"""Partitioned reading of RecordIO files: part ``k`` of ``n`` as MXNet's ``ImageRecordIter`` reads it.

Two modes, as dmlc-core's input splits (which MXNet uses) define them:

* byte range (no index): the files are one concatenated byte stream cut into ``n`` equal,
  4-aligned ranges; each cut moves forward to the next record start, and part ``k`` reads the
  records that start in its range.
* indexed (``index_path`` given): the offsets listed in the ``.idx`` file(s) are sorted and
  cut into ``n`` runs of ``ceil(N / n)`` records; ``shuffle`` visits a part's records in a
  seeded random order that changes every epoch.

``uri`` is one path or several joined by ``;``. An entry naming a directory stands for the
non-empty files in it; an entry with a directory part whose last component is not a file in
that directory is a regular expression over the names there. Empty files are skipped.
"""
from __future__ import annotations

import os
import re
import struct
from typing import List, Optional, Tuple

import numpy as np

from ..base import MXNetError, MXNetValueError
from ..recordio import _MAGIC_BYTES, _Reader, RecordFileNotFound

__all__ = ["RecordSplit", "expand_uri"]

_WORD = struct.Struct("<I")


def expand_uri(uri: str) -> List[Tuple[str, int]]:
    """The ``(path, size)`` of every non-empty file that a ``;``-separated uri names, in order."""
    found: List[str] = []
    for entry in str(uri).split(";"):
        if not entry:
            continue
        cut = entry.rfind("/")
        if cut < 0 or cut + 1 == len(entry):
            found.append(entry)
            continue
        folder, name = entry[:cut] or "/", entry[cut + 1:]
        try:
            listing = [e for e in os.scandir(folder)]
        except OSError as err:
            raise RecordFileNotFound(f"RecordSplit: cannot list directory {folder!r} for uri "
                                     f"entry {entry!r}: {err.strerror}") from None
        if any(e.name == name for e in listing):
            found.append(entry)
            continue
        try:
            pattern = re.compile(name)
        except re.error as err:
            raise MXNetValueError(f"RecordSplit: {entry!r} names no file and {name!r} is not a "
                                  f"valid regular expression ({err})") from None
        matched = [e for e in listing if pattern.fullmatch(e.name)]
        if not matched:
            # dmlc silently skips such an entry; a misspelt file name would then go unnoticed.
            raise RecordFileNotFound(f"RecordSplit: uri entry {entry!r} is neither a file in "
                                     f"{folder!r} nor a pattern matching one")
        found.extend(e.path for e in matched if e.is_file() and e.stat().st_size > 0)
    files: List[Tuple[str, int]] = []
    for path in found:
        try:
            info = os.stat(path)
        except OSError:
            raise RecordFileNotFound(f"RecordSplit: no such file or directory {path!r} "
                                     f"(from uri {uri!r})") from None
        if os.path.isdir(path):
            files.extend((e.path, e.stat().st_size) for e in os.scandir(path)
                         if e.is_file() and e.stat().st_size > 0)
        elif info.st_size > 0:
            files.append((path, info.st_size))
    if not files:
        raise MXNetError(f"RecordSplit: cannot find any non-empty file matching the uri {uri!r}")
    for path, size in files:
        if size % 4:
            raise MXNetError(f"RecordSplit: {path!r} is {size} bytes, not a multiple of 4, so it "
                             "is not a RecordIO file")
    return files


def _next_record_start(path: str, pos: int, size: int) -> int:
    """The offset of the first record start at or after ``pos`` (a multiple of 4) in one file:
    an aligned magic word followed by a part header with cflag 0 or 1; ``size`` if none."""
    block_size = 1 << 16
    with open(path, "rb") as f:
        while pos < size:
            f.seek(pos)
            block = f.read(block_size + 4)   # 4 extra bytes: the header word after a magic
            span = min(block_size, len(block))
            hit = block.find(_MAGIC_BYTES, 0, span + 3)
            while 0 <= hit < span:
                if hit % 4 == 0:
                    if hit + 8 > len(block):
                        return size
                    if _WORD.unpack_from(block, hit + 4)[0] >> 29 in (0, 1):
                        return pos + hit
                hit = block.find(_MAGIC_BYTES, hit + 1, span + 3)
            if span < block_size:
                break
            pos += span
    return size


class RecordSplit:
    """Part ``part_index`` of ``num_parts`` of one or more RecordIO files.

    Iterating yields each record's payload bytes (its parts joined) in file order (or shuffled,
    in indexed mode with ``shuffle=True``); ``reset()`` starts the next epoch; ``len()`` is the
    number of records in the part. ``locations()`` gives ``(path, offset)`` of each record of
    the current epoch, in the order iteration yields them, and ``read_at(path, offset)`` reads
    one of them, for callers that want random access to a part.
    """

    def __init__(self, uri: str, part_index: int = 0, num_parts: int = 1,
                 index_path: Optional[str] = None, shuffle: bool = False, seed: int = 0) -> None:
        if int(num_parts) < 1 or not 0 <= int(part_index) < int(num_parts):
            raise MXNetValueError(f"RecordSplit: part_index={part_index} with num_parts={num_parts}"
                                  ", expected num_parts >= 1 and 0 <= part_index < num_parts")
        self.uri = uri
        self.part_index, self.num_parts = int(part_index), int(num_parts)
        self.index_path = index_path
        self.shuffle = bool(shuffle)
        self._rng = np.random.RandomState(seed)
        self.files = expand_uri(uri)
        self._readers: dict = {}
        # ranges: [(path, begin, end)] in byte-range mode; entries: [(path, offset)] when known
        self._entries: Optional[List[Tuple[str, int]]] = None
        self._ranges: List[Tuple[str, int, int]] = []
        if index_path is not None:
            self._entries = self._indexed_entries(str(index_path))
        else:
            self._ranges = self._byte_ranges()
            if self.shuffle:
                self._entries = self._scan_entries()
        self._order: List[Tuple[str, int]] = []
        self._cursor: Tuple[int, int] = (0, 0)
        self.reset()

    # -- partitioning
    def _byte_ranges(self) -> List[Tuple[str, int, int]]:
        starts = [0]
        for _, size in self.files:
            starts.append(starts[-1] + size)
        total = starts[-1]
        step = -(-total // self.num_parts)
        step = -(-step // 4) * 4
        begin = min(step * self.part_index, total)
        end = min(step * (self.part_index + 1), total)
        if begin == end:
            return []
        begin, end = self._to_record_start(begin, starts), self._to_record_start(end, starts)
        ranges = []
        for (path, size), lo in zip(self.files, starts):
            a, b = max(begin, lo), min(end, lo + size)
            if a < b:
                ranges.append((path, a - lo, b - lo))
        return ranges

    def _to_record_start(self, pos: int, starts: List[int]) -> int:
        if pos in starts:
            return pos
        i = next(j for j in range(len(self.files)) if starts[j] < pos < starts[j + 1])
        path, size = self.files[i]
        return starts[i] + _next_record_start(path, pos - starts[i], size)

    def _indexed_entries(self, index_path: str) -> List[Tuple[str, int]]:
        idx_files = [p for p in index_path.split(";") if p]
        if len(idx_files) != len(self.files):
            raise MXNetValueError(f"RecordSplit: {len(idx_files)} index file(s) in {index_path!r} "
                                  f"for {len(self.files)} record file(s); expected one per file")
        entries: List[Tuple[str, int]] = []
        for (path, size), idx in zip(self.files, idx_files):
            offsets = []
            try:
                with open(idx) as f:
                    lines = f.read().split("\n")
            except FileNotFoundError:
                raise RecordFileNotFound(f"RecordSplit: index file {idx!r} does not exist") from None
            for number, line in enumerate(lines, 1):
                fields = line.split()
                if not fields:
                    continue
                try:
                    offset = int(fields[1])
                except (IndexError, ValueError):
                    raise MXNetValueError(f"RecordSplit: line {number} of {idx!r} is {line!r}, "
                                          "expected '<key>\\t<offset>'") from None
                if not 0 <= offset < size:
                    raise MXNetValueError(f"RecordSplit: line {number} of {idx!r} gives offset "
                                          f"{offset}, outside {path!r} ({size} bytes)")
                offsets.append(offset)
            entries.extend((path, off) for off in sorted(offsets))
        # dmlc sorts the offsets of all files together; files keep their order, so this matches.
        count = len(entries)
        step = -(-count // self.num_parts)
        return entries[min(step * self.part_index, count):min(step * (self.part_index + 1), count)]

    def _scan_entries(self) -> List[Tuple[str, int]]:
        entries = []
        for path, begin, end in self._ranges:
            reader = self._reader(path)
            reader.seek(begin)
            while reader.tell() < end:
                entries.append((path, reader.tell()))
                if not reader.skip():
                    break
        return entries

    # -- reading
    def _reader(self, path: str) -> _Reader:
        reader = self._readers.get(path)
        if reader is None:
            reader = self._readers[path] = _Reader(path)
        return reader

    def read_at(self, path: str, offset: int) -> bytes:
        """The payload of the record starting at byte ``offset`` of ``path``."""
        reader = self._reader(path)
        reader.seek(offset)
        record = reader.read()
        if record is None:
            raise MXNetError(f"RecordSplit: no record at byte offset {offset} of {path!r}")
        return record

    def locations(self) -> List[Tuple[str, int]]:
        """``(path, byte offset)`` of each record of this epoch, in iteration order."""
        self._known_entries()
        return list(self._order)

    def _known_entries(self) -> List[Tuple[str, int]]:
        if self._entries is None:   # byte-range mode: one pass over the part headers
            self._entries = self._scan_entries()
            self._order = list(self._entries)   # unshuffled: this epoch's order is file order
        return self._entries

    def reset(self) -> None:
        """Start the next epoch from the part's first record (reshuffled when ``shuffle``)."""
        if self._entries is not None:
            self._order = list(self._entries)
            if self.shuffle:
                perm = self._rng.permutation(len(self._order))
                self._order = [self._order[i] for i in perm]
            self._cursor = (-1, 0)           # position in _order
        else:
            self._cursor = (0, self._ranges[0][1] if self._ranges else 0)  # (range, offset)

    def next(self) -> Optional[bytes]:
        """The next payload, or None at the end of the part."""
        which, at = self._cursor
        if which == -1:
            if at >= len(self._order):
                return None
            self._cursor = (-1, at + 1)
            return self.read_at(*self._order[at])
        while which < len(self._ranges):
            path, _, end = self._ranges[which]
            if at < end:
                reader = self._reader(path)
                reader.seek(at)
                record = reader.read()
                if record is not None:
                    self._cursor = (which, reader.tell())
                    return record
            which += 1
            at = self._ranges[which][1] if which < len(self._ranges) else 0
            self._cursor = (which, at)
        return None

    def __iter__(self) -> "RecordSplit":
        return self

    def __next__(self) -> bytes:
        record = self.next()
        if record is None:
            raise StopIteration
        return record

    def __len__(self) -> int:
        return len(self._known_entries())

    def __getstate__(self) -> dict:
        # Open files stay behind; the copy reopens them lazily and continues at the same record.
        state = dict(self.__dict__)
        state["_readers"] = {}
        return state

    def close(self) -> None:
        """Close the open files; the split can still be reset and read again."""
        for reader in self._readers.values():
            reader.close()
        self._readers = {}

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to do
            pass
