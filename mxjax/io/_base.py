"""The vocabulary every ``mx.io`` iterator shares: ``DataDesc``, ``DataBatch`` and ``DataIter``.

``DataIter`` is a pull protocol: ``iter_next`` advances, the ``get*`` methods read the
current batch, and ``next`` bundles them into a ``DataBatch`` (raising ``StopIteration``
at the end of an epoch until ``reset`` is called).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as onp

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name and shape of one input (a 2-tuple), plus ``dtype`` and ``layout`` attributes.

    ``layout`` is a string such as ``'NCHW'`` or ``'NTC'`` whose ``N`` marks the batch axis.
    """

    def __new__(cls, name: str, shape: Any, dtype: Any = onp.float32, layout: str = "NCHW") -> "DataDesc":
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """Index of the batch axis ``'N'`` in ``layout`` (0 when ``layout`` is None, -1 when it has none)."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes: Any, types: Any) -> list:
        """``DataDesc`` objects from ``(name, shape)`` pairs and optional ``(name, dtype)`` pairs."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtype_of = dict(types)
        return [DataDesc(name, shape, dtype_of[name]) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, the padding count and optional indices.

    ``pad`` counts the trailing examples that only fill the batch up to ``batch_size``.
    """

    def __init__(self, data: Any, label: Any = None, pad: int | None = None, index: Any = None,
                 bucket_key: Any = None, provide_data: Any = None, provide_label: Any = None) -> None:
        # MXNet checks these with ``assert``: keep its AssertionError, but raise it explicitly.
        if data is not None and not isinstance(data, (list, tuple)):
            raise AssertionError(f"DataBatch: data must be a list of arrays, got {type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise AssertionError(f"DataBatch: label must be a list of arrays, got {type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [arr.shape for arr in self.data]
        label_shapes = [arr.shape for arr in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base class of the data iterators: Python iteration over ``DataBatch`` objects.

    Subclasses implement ``iter_next``, ``getdata``, ``getlabel`` and ``getpad`` (and
    ``reset``); ``next`` combines them.
    """

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> "DataIter":
        return self

    def reset(self) -> None:
        """Rewind to the start of the data (nothing to do in the base class)."""

    def next(self) -> DataBatch:
        """The next batch; raises ``StopIteration`` at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(), index=self.getindex())

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Advance to the next batch; False at the end (the base class has no data)."""
        return False

    def getdata(self) -> Any:
        """The data arrays of the current batch (None in the base class)."""
        return None

    def getlabel(self) -> Any:
        """The label arrays of the current batch (None in the base class)."""
        return None

    def getindex(self) -> Any:
        """The example indices of the current batch, or None."""
        return None

    def getpad(self) -> Any:
        """How many examples at the end of the current batch are padding (None in the base class)."""
        return None
