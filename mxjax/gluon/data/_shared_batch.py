"""Moving a batch from a worker process to the training process through shared memory.

The worker pickles the batch structure with every array leaf replaced by a slot number and
copies the leaves, 64-byte aligned, into one anonymous memory file (``memfd``).  The file
descriptor travels over the worker's Unix socket; it never has a name, so no ``/dev/shm``
entry can leak, and the kernel frees the memory once the last mapping and descriptor are gone.

The training process maps the file, closes the descriptor, and hands the aligned leaf views
to XLA's CPU client, which adopts aligned host memory without copying.  The mapping is
unmapped when the last array using it is garbage collected.
"""
from __future__ import annotations

import ctypes
import io
import mmap
import os
import pickle
from typing import Any

import jax
import numpy as onp

from ... import _config
from ... import numpy as _mxnp
from ..._ndarray import NDArray, from_jax
from ...device import cpu

_ALIGN = 64
_PROT = mmap.PROT_READ | mmap.PROT_WRITE

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long]
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value


class _Mapping:
    """A shared mapping of a whole memory file that keeps no descriptor open.

    (Python's ``mmap`` duplicates the descriptor for its whole life; a user holding on to many
    batches would run out of descriptors.)  NumPy views hold this object through
    ``__array_interface__``; the memory is unmapped when the last one goes.
    """

    def __init__(self, fd: int, size: int):
        addr = _libc.mmap(None, size, _PROT, mmap.MAP_SHARED, fd, 0)
        if addr is None or addr == _MAP_FAILED:
            err = ctypes.get_errno()
            raise OSError(err, f"DataLoader: cannot map a {size}-byte batch segment: {os.strerror(err)}")
        self.address, self.size = addr, size
        self.__array_interface__ = {'shape': (size,), 'typestr': '|u1', 'data': (addr, False),
                                    'version': 3}

    def __del__(self) -> None:
        if self.address and _libc is not None:
            _libc.munmap(self.address, self.size)
            self.address = 0


class HostLeaf:
    """A NumPy array that the training process should receive as an mx array of ``kind``."""

    __slots__ = ('array', 'kind')

    def __init__(self, array: onp.ndarray, kind: str):
        self.array, self.kind = array, kind


class HostStack:
    """The default collate of worker processes: ``batchify.Stack``'s results, built with
    NumPy in the worker (no JAX dispatch there) and turned into mx arrays on arrival."""

    def __init__(self, fallback: Any):
        self._fallback = fallback  # batchify.Stack, for samples that are mx arrays

    def __call__(self, data: Any) -> Any:
        head = data[0] if len(data) else None
        if isinstance(head, NDArray):
            return self._fallback(data)
        if isinstance(head, (tuple, list)):
            return [self(list(field)) for field in zip(*data)]
        host = onp.asarray(data) if head is not None else None
        if host is None or host.dtype.kind not in 'biufc':  # let Stack raise its own error
            return self._fallback(data)
        return HostLeaf(host, 'np' if _config.is_np_array() else 'nd')


def _leaf_kind(obj: Any) -> str | None:
    if isinstance(obj, HostLeaf):
        return obj.kind
    if isinstance(obj, _mxnp.ndarray):
        return 'np'
    if isinstance(obj, NDArray):
        return 'nd'
    if isinstance(obj, onp.ndarray) and not obj.dtype.hasobject:
        return 'host'
    return None


class _LeafPickler(pickle.Pickler):
    """Pickles a batch with its array leaves pulled out into ``self.leaves``."""

    def __init__(self, file: io.BytesIO):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.leaves: list[tuple[str, onp.ndarray]] = []

    def persistent_id(self, obj: Any) -> Any:
        kind = _leaf_kind(obj)
        if kind is None:
            return None
        if isinstance(obj, HostLeaf):
            host = obj.array
        else:
            host = obj if kind == 'host' else obj.asnumpy()
        self.leaves.append((kind, onp.ascontiguousarray(host)))
        return len(self.leaves) - 1


def _write_all(fd: int, data: memoryview, offset: int) -> None:
    while len(data):
        written = os.pwrite(fd, data, offset)
        data, offset = data[written:], offset + written


def _new_segment() -> int:
    """A descriptor of fresh anonymous memory: a memfd on Linux, else an unlinked temp file."""
    if hasattr(os, 'memfd_create'):
        return os.memfd_create('mxjax-batch', os.MFD_CLOEXEC)
    import tempfile
    fd, path = tempfile.mkstemp(prefix='mxjax-batch-')
    os.unlink(path)
    return fd


def pack(batch: Any) -> tuple[bytes, int | None]:
    """Worker side: ``(message, fd)``; ``fd`` is a memory file holding the leaves (or None)."""
    buf = io.BytesIO()
    pickler = _LeafPickler(buf)
    pickler.dump(batch)
    layout, total = [], 0
    for kind, host in pickler.leaves:
        total = -(-total // _ALIGN) * _ALIGN
        layout.append((kind, total, host.shape, host.dtype))
        total += host.nbytes
    fd = None
    if total:
        fd = _new_segment()
        try:
            os.ftruncate(fd, total)
            for (kind, offset, _, _), (_, host) in zip(layout, pickler.leaves):
                if host.nbytes:
                    _write_all(fd, memoryview(host.reshape(-1).view(onp.uint8)), offset)
        except BaseException:
            os.close(fd)
            raise
    return pickle.dumps((buf.getvalue(), layout, total), protocol=pickle.HIGHEST_PROTOCOL), fd


class _LeafUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, leaves: list):
        super().__init__(io.BytesIO(data))
        self._leaves = leaves

    def persistent_load(self, pid: Any) -> Any:
        return self._leaves[pid]


@_config.with_x64  # int64/float64 leaves stay 64-bit
def _to_frontend(layout: list, views: list) -> list:
    device = cpu().jax_device
    wanted = [i for i, (kind, *_) in enumerate(layout) if kind != 'host']
    # one batched device_put adopts the aligned host buffers on the CPU (no copy) and keeps
    # the views (hence the mapping) alive as long as the arrays live
    placed = jax.device_put([views[i] for i in wanted], device) if wanted else []
    out = list(views)
    for i, data in zip(wanted, placed):
        out[i] = from_jax(data, _mxnp.ndarray if layout[i][0] == 'np' else NDArray)
    return out


def unpack(message: bytes, fd: int | None) -> Any:
    """Training-process side: rebuild the batch from ``pack``'s output; closes ``fd``."""
    structure, layout, total = pickle.loads(message)
    mapping = None
    if fd is not None:
        try:
            mapping = onp.asarray(_Mapping(fd, total))
        finally:
            os.close(fd)
    views = []
    for _, offset, shape, dtype in layout:
        if mapping is None or int(onp.prod(shape, dtype=onp.int64)) == 0:
            views.append(onp.empty(shape, dtype))
        else:
            views.append(onp.ndarray(shape, dtype, buffer=mapping, offset=offset))
    return _LeafUnpickler(structure, _to_frontend(layout, views)).load()


def discard(fd: int | None) -> None:
    """Drop a batch nobody will read: closing the descriptor frees its memory."""
    if fd is not None:
        os.close(fd)
