"""``mx.io.io``: the data iterators of ``mx.io`` gathered in one module, as in MXNet.

Python iterators (``NDArrayIter``, ``ResizeIter``, ``PrefetchingIter``) and the file iterators
MXNet implements in C++ (``CSVIter``, ``MNISTIter``, ``ImageRecordIter`` and its integer
variants), here written in Python on NumPy with background prefetching.
"""
from ._base import DataBatch, DataDesc, DataIter
from ._csv import CSVIter, LibSVMIter
from ._mnist import MNISTIter
from ._native import MXDataIter
from ._ndarray_iter import NDArrayIter
from ._wrappers import PrefetchingIter, ResizeIter
from .image_record_iter import (ImageRecordInt8Iter, ImageRecordIter, ImageRecordIter_v1, ImageRecordUInt8Iter,
                                ImageRecordUInt8Iter_v1)

__all__ = ["DataDesc", "DataBatch", "DataIter", "MXDataIter", "ResizeIter", "PrefetchingIter", "NDArrayIter",
           "CSVIter", "LibSVMIter", "MNISTIter", "ImageRecordIter", "ImageRecordUInt8Iter",
           "ImageRecordInt8Iter", "ImageRecordIter_v1", "ImageRecordUInt8Iter_v1"]
