"""``mx.np.utils``: the dtype objects, dtype groups and special floating-point constants MXNet 2.0
keeps in ``mxnet.numpy.utils`` (re-exported by ``mx.np``)."""
from __future__ import annotations

import builtins

import numpy as onp
from numpy import (  # noqa: F401
    bool_, e, float16, float32, float64, inf, int8, int16, int32, int64, nan, newaxis, pi, uint8, uint16,
    uint32, uint64,
)

__all__ = [
    "bool", "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "pi", "inf", "nan", "PZERO", "NZERO", "NINF", "PINF", "NAN", "NaN", "e", "newaxis",
    "integer_dtypes", "floating_dtypes", "numeric_dtypes", "boolean_dtypes",
]

py_bool = builtins.bool
bool = onp.bool_  # noqa: A001  (mx.np.bool is NumPy's bool type, as in MXNet)

# IEEE special values under NumPy 1.x's names (NumPy 2 removed them)
PZERO = 0.0
NZERO = -0.0
PINF = float("inf")
NINF = float("-inf")
NAN = float("nan")
NaN = NAN

integer_dtypes = [onp.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
floating_dtypes = [onp.dtype(t) for t in ("float16", "float32", "float64")]
numeric_dtypes = [*integer_dtypes, *floating_dtypes]
boolean_dtypes = [onp.dtype(onp.bool_)]
