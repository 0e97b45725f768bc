"""The vocabulary of MXNet's NDArray list format: magics, the dtype-flag table, sparse records.

Constants and :class:`SparseRecord` are shared by the reader and the writer
(:mod:`mxjax._serialization_params`) and by layers that only need the type-flag table
(symbol, amp), so they live apart from the byte-level encoding.  See
``shared/formats/FORMATS.md`` section 1 for the layout they describe.
"""
from __future__ import annotations

import struct
import sys
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .base import MXNetError

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

