"""Atomic file replacement: every file mxjax saves goes through here.

A save writes a temporary file in the target's directory, flushes and fsyncs it,
then renames it over the target (``os.replace``), so a save that fails halfway
(disk full, an exception in the middle) leaves the previous file byte-identical
and no partial or temporary file behind.  :func:`atomic_write_group` does the same
for files that belong together (``export``'s ``-symbol.json`` and ``.params``):
all are written before any is replaced, and a failed replace puts the earlier ones
back, so a reader never sees a new file beside an old partner.

MXNet itself opens the target and writes into it; a failure there destroys the old file.
"""
from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from typing import IO, Any, Iterator

__all__ = ["atomic_write", "atomic_write_group"]

_TEMP_SUFFIX = ".tmp"


def _temp_name(path: str) -> str:
    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{secrets.token_hex(4)}{_TEMP_SUFFIX}")


def _create_temp(path: str) -> tuple[str, int]:
    """A new, empty temporary file beside ``path``: (its name, an open descriptor).

    Created with mode 0o666 so that the process umask applies, as for a plain ``open``.
    """
    for _ in range(100):
        temp = _temp_name(path)
        try:
            return temp, os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            continue
        except OSError as err:  # e.g. a missing directory: name the file being saved, as open() would
            raise type(err)(err.errno, err.strerror, path) from None
    raise FileExistsError(f"atomic_write: could not create a temporary file beside {path!r}")


def _target(path: str | os.PathLike) -> str:
    """The file a save replaces: a symbolic link is written through (as ``open`` does), not replaced."""
    path = os.fsdecode(path)
    return os.path.realpath(path) if os.path.islink(path) else path


def _keep_mode(temp: str, path: str) -> None:
    """Give the new file the permission bits of the one it replaces (as writing in place would)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.chmod(temp, mode & 0o7777)


def _sync_dir(path: str) -> None:
    """Make the rename durable (POSIX); silently skipped where directories cannot be opened."""
    try:
        fd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


@contextlib.contextmanager
def _staged(path: str, mode: str, encoding: str | None) -> Iterator[tuple[IO[Any], str]]:
    """Open a temporary file for ``path``; on leaving without error it is flushed, fsynced and
    closed (not yet renamed); on an error it is removed."""
    if mode not in ("w", "wb", "wt"):
        raise ValueError(f"atomic_write: mode must be 'w', 'wt' or 'wb', got {mode!r}")
    if "b" not in mode and encoding is None:
        encoding = "utf-8"
    temp, fd = _create_temp(path)
    try:
        handle = os.fdopen(fd, mode, encoding=encoding)
    except BaseException:
        os.close(fd)
        _remove(temp)
        raise
    try:
        with handle:
            yield handle, temp
            handle.flush()
            os.fsync(handle.fileno())
        _keep_mode(temp, path)
    except BaseException:
        _remove(temp)
        raise


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """Write ``path`` all at once: ``with atomic_write(path, "wb") as f: f.write(...)``.

    ``mode`` is ``"wb"`` or ``"w"`` (text, UTF-8 unless ``encoding``).  Until the block
    ends without an error the old file (if any) is untouched; then the new one replaces it.
    """
    target = _target(path)
    with _staged(target, mode, encoding) as (handle, temp):
        yield handle
    try:
        os.replace(temp, target)
    except BaseException:
        _remove(temp)
        raise
    _sync_dir(target)


def _backup(path: str) -> str | None:
    """A second name for the current ``path`` (a hard link, else a copy), or None if it does not exist."""
    if not os.path.lexists(path):
        return None
    spare = _temp_name(path)
    try:
        os.link(path, spare)
    except OSError:
        shutil.copy2(path, spare)
    return spare


def atomic_write_group(contents: dict[str | os.PathLike, bytes | str]) -> None:
    """Replace several files together: ``{path: bytes or str}``; str is written as UTF-8.

    Every new file is written and synced before any target is touched; if replacing one
    fails, the targets already replaced get their old contents back (or are removed if
    they did not exist), so the group is never left mixed.
    """
    staged: list[tuple[str, str]] = []
    try:
        for path, data in contents.items():
            target = _target(path)
            with _staged(target, "wb", None) as (handle, temp):
                staged.append((target, temp))
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    except BaseException:
        for _, temp in staged:
            _remove(temp)
        raise
    backups: list[tuple[str, str | None]] = []
    done: list[int] = []
    try:
        for target, _ in staged:
            backups.append((target, _backup(target)))
        for i, (target, temp) in enumerate(staged):
            os.replace(temp, target)
            done.append(i)
    except BaseException:
        for i in reversed(done):
            target, spare = backups[i]
            if spare is None:
                _remove(target)
            else:
                os.replace(spare, target)
                backups[i] = (target, None)
        for _, temp in staged:
            _remove(temp)
        raise
    finally:
        for _, spare in backups:
            if spare is not None:
                _remove(spare)
    for target, _ in staged:
        _sync_dir(target)
