"""The rest of ``mx.np``: window functions, index generators, Array-API spellings, dtype utilities."""
from __future__ import annotations

from typing import Any

import numpy as onp

from .._array_io import load_arrays, save_npx, savez
from .._ndarray import NDArray
from .._invoke import np_class
from ._maker import np_function

__all__ = [
    "hanning", "hamming", "blackman", "bartlett", "kaiser", "tril_indices", "triu_indices",
    "diag_indices_from", "divmod", "modf", "frexp", "cov", "corrcoef", "digitize", "gradient", "compress",
    "extract", "vecdot", "matrix_transpose", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh",
    "pow", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift", "concat", "permute_dims",
    "isscalar", "result_type", "promote_types", "can_cast", "issubdtype", "broadcast_shapes",
    "save", "savez", "load",
]

hanning = np_function("hanning", positional=("M", "dtype"))
hamming = np_function("hamming", positional=("M", "dtype"))
blackman = np_function("blackman", positional=("M", "dtype"))
bartlett = np_function("bartlett", positional=("M", "dtype"))
kaiser = np_function("kaiser", positional=("M", "beta", "dtype"))
tril_indices = np_function("tril_indices")
triu_indices = np_function("triu_indices")
diag_indices_from = np_function("diag_indices_from")
divmod = np_function("divmod")  # noqa: A001
modf = np_function("modf")
frexp = np_function("frexp")
cov = np_function("cov", positional=("m", "y", "rowvar", "bias", "ddof", "fweights", "aweights", "dtype"))
corrcoef = np_function("corrcoef", positional=("x", "y", "rowvar", "dtype"))
digitize = np_function("digitize")
compress = np_function("compress", positional=("condition", "a", "axis", "out"))
extract = np_function("extract")
vecdot = np_function("vecdot")
matrix_transpose = np_function("matrix_transpose")
_gradient = np_function("gradient")

# Array-API spellings MXNet 2 also offers, bound to the same ops
acos = np_function("arccos", name="acos")
acosh = np_function("arccosh", name="acosh")
asin = np_function("arcsin", name="asin")
asinh = np_function("arcsinh", name="asinh")
atan = np_function("arctan", name="atan")
atan2 = np_function("arctan2", name="atan2")
atanh = np_function("arctanh", name="atanh")
pow = np_function("power", name="pow")  # noqa: A001
bitwise_invert = np_function("invert", name="bitwise_invert")
bitwise_left_shift = np_function("left_shift", name="bitwise_left_shift")
bitwise_right_shift = np_function("right_shift", name="bitwise_right_shift")
concat = np_function("concatenate", name="concat")
permute_dims = np_function("transpose", name="permute_dims")


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """NumPy's ``gradient``: a list of arrays (one per axis), or one array for a 1-D input/one axis."""
    result = _gradient(f, spacing=tuple(float(v) for v in varargs), axis=axis, edge_order=edge_order)
    return list(result) if isinstance(result, tuple) else result


gradient.op = _gradient.op  # type: ignore[attr-defined]


def isscalar(element: Any) -> bool:
    """Python/NumPy scalars are scalars; arrays (even 0-d) are not, as in NumPy."""
    return not isinstance(element, NDArray) and onp.isscalar(element)


def result_type(*arrays_and_dtypes: Any) -> onp.dtype:
    """NumPy's promotion of the given arrays and dtypes."""
    return onp.result_type(*(a.dtype if isinstance(a, NDArray) else a for a in arrays_and_dtypes))


promote_types = onp.promote_types
can_cast = onp.can_cast
issubdtype = onp.issubdtype
broadcast_shapes = onp.broadcast_shapes


def save(file: Any, arr: Any) -> None:
    """Save one array to ``.npy`` (MXNet 2's ``np.save``)."""
    save_npx(file, arr)


def load(file: Any) -> Any:
    """Load ``.npy``/``.npz``/``.params`` into ``mx.np.ndarray`` (one array, a dict or a list)."""
    return load_arrays(file, np_class())

