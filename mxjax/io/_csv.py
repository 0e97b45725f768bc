"""``CSVIter`` (dense rows from CSV files) and ``LibSVMIter`` (sparse, so unsupported in mxjax).

Each CSV row is one example reshaped to ``data_shape``; labels come from a second CSV file or
are all zero.  Batching and the ``round_batch`` wrap-around follow MXNet's batch loader.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as onp

from ..base import MXNetError
from ._native import (MXDataIter, NativeBatch, RoundBatcher, check_batch_size, check_dtype, check_shape,
                      warn_unknown)

__all__ = ["CSVIter", "LibSVMIter"]


def _csv_files(where: str, path: str) -> list:
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if os.path.isfile(os.path.join(path, f)))
        if not files:
            raise MXNetError(f"{where}: directory {path!r} holds no CSV files")
        return files
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}: CSV file {path!r} does not exist")
    return [path]


def _read_rows(where: str, path: str, width: int, what: str) -> onp.ndarray:
    """All rows of the CSV file(s) at ``path`` as a float64 matrix with ``width`` columns."""
    rows = []
    for fname in _csv_files(where, path):
        with open(fname, "r", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                fields = line.rstrip(",").split(",")
                if len(fields) != width:
                    raise MXNetError(f"{where}: row {lineno} of {fname!r} has {len(fields)} values but the "
                                     f"{what} shape needs {width}")
                try:
                    rows.append([float(v) for v in fields])
                except ValueError:
                    raise MXNetError(f"{where}: row {lineno} of {fname!r} holds a value that is not a "
                                     f"number: {line!r}") from None
    return onp.asarray(rows, dtype=onp.float64).reshape(len(rows), width)


class CSVIter(MXDataIter):
    """Batches of examples read from CSV files (MXNet's ``mx.io.CSVIter``).

    ``data_csv`` / ``label_csv`` are files or directories of files; each row holds one example
    of ``data_shape`` (label ``label_shape``; all-zero labels without ``label_csv``).  With
    ``round_batch`` (default) the last batch is completed from the start of the data and the
    next epoch starts after the borrowed rows.  ``dtype`` sets the output type (float32 when None).
    """

    def __init__(self, data_csv: str, data_shape: Any, batch_size: int, label_csv: str | None = None,
                 label_shape: Any = (1,), round_batch: bool = True, prefetch_buffer: int = 4,
                 ctx: str = "gpu", device_id: int = -1, dtype: Any = None, data_name: str = "data",
                 label_name: str = "softmax_label", **kwargs: Any) -> None:
        super().__init__(data_name, label_name, prefetch_buffer, **kwargs)
        where = "CSVIter"
        warn_unknown(where, kwargs)
        self._data_shape = check_shape(where, "data_shape", data_shape)
        self._label_shape = check_shape(where, "label_shape", label_shape)
        size = check_batch_size(where, batch_size)
        out_dtype = check_dtype(where, dtype) or onp.float32
        self._data = _read_rows(where, data_csv, int(onp.prod(self._data_shape)), "data")
        width = int(onp.prod(self._label_shape))
        if label_csv is None or label_csv == "NULL":
            self._label = onp.zeros((len(self._data), width))
        else:
            self._label = _read_rows(where, label_csv, width, "label")
            if len(self._label) < len(self._data):
                raise MXNetError(f"{where}: label_csv {label_csv!r} has {len(self._label)} rows but data_csv "
                                 f"{data_csv!r} has {len(self._data)}; every data row needs a label row")
        if not len(self._data):
            raise MXNetError(f"{where}: data_csv {data_csv!r} holds no rows")
        self._cursor = 0
        self._batcher = RoundBatcher(self._next_example, self._restart, size, self._data_shape,
                                     self._label_shape, round_batch, out_dtype, out_dtype)
        self._start()

    def _restart(self) -> None:
        self._cursor = 0

    def _next_example(self) -> Any:
        row = self._cursor
        if row >= len(self._data):
            return None
        self._cursor += 1
        return self._data[row].reshape(self._data_shape), self._label[row], row

    def _produce(self) -> NativeBatch | None:
        return self._batcher.next_batch()

    def _rewind(self) -> None:
        self._batcher.rewind(self._after_wrap)


class LibSVMIter:
    """MXNet's LibSVM iterator yields sparse ``CSRNDArray`` batches, which mxjax does not have.

    Constructing it raises ``MXNetError``; read the file into dense NumPy arrays and use
    ``NDArrayIter`` instead.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise MXNetError("LibSVMIter: MXNet's LibSVMIter produces sparse CSRNDArray batches and mxjax has only "
                         "dense arrays (storage type 'csr' is unsupported); load the data as dense NumPy "
                         "arrays and use mx.io.NDArrayIter")
