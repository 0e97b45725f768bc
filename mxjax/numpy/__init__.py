"""``mx.np``: NumPy's API on mxjax arrays, built from the op registry.

Default dtype float32 (MXNet); ``npx.set_np(dtype=True)`` switches to NumPy's float64.
"""
from __future__ import annotations

import numpy as onp

from .multiarray import ndarray
from . import _creation_ops, _elemwise, _extra, _manipulation, _reduction, _sorting
from ._elemwise import *  # noqa: F401,F403
from ._creation import array, asarray  # noqa: F401
from ._creation_ops import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._reduction import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._extra import *  # noqa: F401,F403
from . import linalg, random  # noqa: F401

# NumPy's scalar types and constants, shared so mx.np.float32 == numpy.float32
from numpy import (  # noqa: F401
    bool_, complex64, complex128, dtype, e, euler_gamma, finfo, float16, float32, float64, iinfo,
    inf, int8, int16, int32, int64, nan, newaxis, pi, uint8, uint16, uint32, uint64,
)

bool = onp.bool_  # noqa: A001  (mx.np.bool, as in MXNet)

__all__ = ["ndarray", "array", "asarray", "linalg", "random",
           *_elemwise.__all__, *_creation_ops.__all__, *_manipulation.__all__, *_reduction.__all__,
           *_sorting.__all__, *_extra.__all__]
