"""``mx.nd``'s vision layers, tensor utilities and 1.x helper functions added in MXNet 1.x and kept
in 2.0: one line per op binding, plus the few names that need Python around an op
(``histogram``, ``linspace``, ``split_v2``, ``onehot_encode``, ``cast_storage``, DLPack and
buffer loading).
"""
from __future__ import annotations

import io
import numbers
from typing import Any

import numpy as onp

from .._array_io import load_arrays
from .._frontend import create, store_out
from .._ndarray import NDArray
from .._invoke import invoke
from ..base import MXNetTypeError, MXNetValueError, normalize_dtype
from ..numpy.multiarray import ndarray as _np_ndarray
from ..numpy_extension.utils import array_from_dlpack, to_dlpack_for_read, to_dlpack_for_write
from ..operator import get_op
from ._maker import nd_function

# vision layers
ROIPooling = nd_function("ROIPooling")
GridGenerator = nd_function("GridGenerator")
BilinearSampler = nd_function("BilinearSampler")
SpatialTransformer = nd_function("SpatialTransformer")
Correlation = nd_function("Correlation")
Crop = nd_function("Crop")
SVMOutput = nd_function("SVMOutput")
im2col = nd_function("im2col")
col2im = nd_function("col2im")

# tensor utilities
moments = nd_function("moments")
khatri_rao = nd_function("khatri_rao")
fill_element_0index = nd_function("fill_element_0index")
batch_take = nd_function("batch_take", name="batch_take")
masked_softmax = nd_function("masked_softmax")
masked_log_softmax = nd_function("masked_log_softmax")
cumsum = nd_function("cumsum")
ravel_multi_index = nd_function("_ravel_multi_index", name="ravel_multi_index")
unravel_index = nd_function("_unravel_index", name="unravel_index")
shuffle = nd_function("_npi_shuffle", name="shuffle", rename={"data": "x"})
linalg_gelqf = nd_function("_linalg_gelqf", name="linalg_gelqf")
linalg_extracttrian = nd_function("_linalg_extracttrian", name="linalg_extracttrian")
linalg_maketrian = nd_function("_linalg_maketrian", name="linalg_maketrian")

_SPARSE_REMOVED = ("mxjax arrays are dense only: sparse storage ({stype!r}) is not supported (MXNet 2.0 "
                   "deprecates it). Use dense arrays (stype='default') instead")


def sparse_error(function: str, stype: str) -> MXNetValueError:
    """The error for a sparse storage type, naming the function."""
    return MXNetValueError(f"{function}: " + _SPARSE_REMOVED.format(stype=stype))


def cast_storage(data: NDArray, stype: str = "default", out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """Storage-type conversion: only 'default' (dense) exists, so this copies ``data``."""
    if stype != "default":
        raise sparse_error("cast_storage", stype)
    result = invoke(get_op("cast_storage"), (data,), {"stype": stype}, NDArray)
    return store_out(out, result, "cast_storage") if out is not None else result


def histogram(a: NDArray, bins: Any = 10, range: Any = None) -> tuple:  # noqa: A002  (MXNet's name)
    """``(counts, bin_edges)`` of ``a`` over ``bins`` equal bins of ``range`` or over the edges ``bins``."""
    if isinstance(bins, NDArray):
        return tuple(invoke(get_op("histogram"), (a, bins, None), None, NDArray))
    if not isinstance(bins, numbers.Integral):
        raise MXNetTypeError(f"histogram: bins must be an int or an NDArray of edges, got {type(bins).__name__}")
    if range is None:  # MXNet falls back to NumPy here, converting the counts to float32
        counts, edges = onp.histogram(a.asnumpy(), bins=int(bins))
        return NDArray(counts.astype(onp.float32)), NDArray(edges.astype(onp.float32))
    params = {"bin_cnt": int(bins), "range": tuple(float(r) for r in range)}
    return tuple(invoke(get_op("histogram"), (a, None, None), params, NDArray))


def linspace(start: float, stop: float, num: int, endpoint: bool = True, ctx: Any = None,
             dtype: Any = onp.float32) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop`` (float32 unless ``dtype``)."""
    params = {"num": int(num), "endpoint": bool(endpoint), "dtype": normalize_dtype(dtype).name}
    return create(get_op("linspace"), (float(start), float(stop)), params, NDArray, ctx)


def split_v2(ary: NDArray, indices_or_sections: Any, axis: int = 0, squeeze_axis: bool = False) -> Any:
    """Split along ``axis`` into equal sections (an int) or at the given indices (a tuple): a list of
    arrays (one array when there is one part); ``squeeze_axis`` drops ``axis`` from size-1 parts."""
    if isinstance(indices_or_sections, numbers.Integral):
        params = {"sections": int(indices_or_sections), "indices": ()}
    elif isinstance(indices_or_sections, (tuple, list)):
        params = {"sections": 0, "indices": (0, *(int(i) for i in indices_or_sections))}
    else:
        raise MXNetValueError("split_v2: indices_or_sections must be an int or a tuple of ints, got "
                              f"{type(indices_or_sections).__name__}")
    params.update(axis=int(axis), squeeze_axis=bool(squeeze_axis))
    parts = invoke(get_op("_split_v2"), (ary,), params, NDArray)
    return list(parts) if isinstance(parts, tuple) else parts


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """Write the one-hot rows of ``indices`` into ``out`` (N, depth), in ``out``'s dtype."""
    if not isinstance(out, NDArray) or out.ndim != 2 or indices.shape != (out.shape[0],):
        raise MXNetValueError(f"onehot_encode: expected indices (N,) and out (N, depth), got "
                              f"{getattr(indices, 'shape', None)} and {getattr(out, 'shape', None)}")
    params = {"depth": out.shape[1], "dtype": onp.dtype(out.dtype).name}
    return store_out(out, invoke(get_op("one_hot"), (indices,), params, NDArray), "onehot_encode")


def from_dlpack(dlpack: Any) -> NDArray:
    """An NDArray sharing the buffer of a DLPack capsule or of an object with ``__dlpack__``."""
    return array_from_dlpack(dlpack, NDArray)


def load_frombuffer(buf: bytes) -> Any:
    """``mx.nd.load`` from bytes in memory: a list or dict of arrays."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise MXNetTypeError(f"load_frombuffer: expected bytes, got {type(buf).__name__}")
    return load_arrays(io.BytesIO(bytes(buf)), NDArray, np_cls=_np_ndarray)


cast_storage.op = get_op("cast_storage")  # type: ignore[attr-defined]
histogram.op = get_op("histogram")  # type: ignore[attr-defined]
linspace.op = get_op("linspace")  # type: ignore[attr-defined]
split_v2.op = get_op("_split_v2")  # type: ignore[attr-defined]
onehot_encode.op = get_op("one_hot")  # type: ignore[attr-defined]
for _fn in (cast_storage, histogram, linspace, split_v2, onehot_encode, from_dlpack, load_frombuffer):
    _fn.__module__ = "mxjax.ndarray"

__all__ = [
    "ROIPooling", "SVMOutput", "GridGenerator", "BilinearSampler", "SpatialTransformer", "Correlation", "Crop",
    "im2col", "col2im", "moments", "khatri_rao", "fill_element_0index", "batch_take", "masked_softmax",
    "masked_log_softmax", "cumsum", "ravel_multi_index", "unravel_index", "shuffle", "linalg_gelqf",
    "linalg_extracttrian", "linalg_maketrian", "cast_storage", "histogram", "linspace", "split_v2",
    "onehot_encode", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write", "load_frombuffer",
]
