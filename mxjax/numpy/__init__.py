"""``mx.np``: NumPy's API on mxjax arrays, built from the op registry.

Default dtype float32 (MXNet); ``npx.set_np(dtype=True)`` switches to NumPy's float64.
"""
from __future__ import annotations

import numpy as onp

from .multiarray import ndarray
from . import _creation_ops, _elemwise, _extra, _host_semantics, _manipulation, _reduction, _sorting
from ._elemwise import *  # noqa: F401,F403
from ._creation import array, asarray, from_dlpack  # noqa: F401
from ._creation_ops import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._reduction import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._extra import *  # noqa: F401,F403
from ._host_semantics import *  # noqa: F401,F403
from . import linalg, random  # noqa: F401
from . import arrayprint, fallback, fallback_linalg, function_base, io, set_functions, stride_tricks  # noqa: F401
from . import type_functions, utils  # noqa: F401
# MXNet 2.0 runs these on host NumPy only (callables, value-dependent shapes, float64 fits)
from .fallback import (  # noqa: F401
    alltrue, apply_along_axis, apply_over_axes, histogram2d, histogram_bin_edges, histogramdd, ix_,
    min_scalar_type, mirr, npv, piecewise, pmt, polydiv, polyfit, ppmt, pv, rate, roots, trim_zeros,
)
from .arrayprint import set_printoptions  # noqa: F401
from .io import genfromtxt  # noqa: F401
from .set_functions import unique_all, unique_inverse, unique_values  # noqa: F401
from .utils import (  # noqa: F401
    NAN, NINF, NZERO, PINF, PZERO, NaN, boolean_dtypes, floating_dtypes, integer_dtypes, numeric_dtypes,
)

# NumPy's scalar types and constants, shared so mx.np.float32 == numpy.float32
from numpy import (  # noqa: F401
    bool_, complex64, complex128, dtype, e, euler_gamma, finfo, float16, float32, float64, iinfo,
    inf, int8, int16, int32, int64, nan, newaxis, pi, uint8, uint16, uint32, uint64,
)

bool = onp.bool_  # noqa: A001  (mx.np.bool, as in MXNet)

__all__ = ["ndarray", "array", "asarray", "linalg", "random",
           *_elemwise.__all__, *_creation_ops.__all__, *_manipulation.__all__, *_reduction.__all__,
           *_sorting.__all__, *_extra.__all__, *_host_semantics.__all__, "from_dlpack",
           "alltrue", "apply_along_axis", "apply_over_axes", "histogram2d", "histogram_bin_edges", "histogramdd",
           "ix_", "min_scalar_type", "mirr", "npv", "piecewise", "pmt", "polydiv", "polyfit", "ppmt", "pv", "rate",
           "roots", "trim_zeros", "set_printoptions", "genfromtxt", "unique_all", "unique_inverse", "unique_values",
           "NAN", "NINF", "NZERO", "PINF", "PZERO", "NaN", "boolean_dtypes", "floating_dtypes",
           "integer_dtypes", "numeric_dtypes"]
