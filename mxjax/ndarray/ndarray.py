"""``mx.nd.ndarray``: the module of MXNet's ``NDArray`` class and its helper functions
(``from mxnet.ndarray.ndarray import NDArray`` keeps working)."""
from __future__ import annotations

from .._ndarray import NDArray
from ..device import Device, current_device
from ._extra import from_dlpack, histogram, linspace, onehot_encode, to_dlpack_for_read, to_dlpack_for_write
from ._functions import (add, arange, array, concatenate, divide, empty, equal, eye, from_numpy, full, greater,
                         greater_equal, lesser, lesser_equal, logical_and, logical_or, logical_xor, maximum,
                         minimum, modulo, moveaxis, multiply, not_equal, ones, power, split, subtract,
                         true_divide, waitall, zeros)

__all__ = [
    "NDArray", "Device", "current_device", "from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write",
    "histogram", "linspace", "onehot_encode", "add", "arange", "array", "concatenate", "divide", "empty", "equal",
    "eye", "full", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and", "logical_or",
    "logical_xor", "maximum", "minimum", "modulo", "moveaxis", "multiply", "not_equal", "ones", "power", "split",
    "subtract", "true_divide", "waitall", "zeros",
]
