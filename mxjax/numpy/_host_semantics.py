"""``mx.np`` functions that MXNet 2.0 runs on host NumPy, bound here to real ops
(``operator/numpy_poly.py``, ``operator/numpy_misc.py``): choose, i0, unwrap, trapz, the
polynomial family, packbits/unpackbits, msort, in1d, tril/triu_indices_from.

Unlike MXNet's fallbacks they record for autograd and trace under ``hybridize``; their
result dtypes are NumPy's, as MXNet's fallbacks give.  Also the Array-API-era aliases
``product`` (= ``prod``) and ``sometrue`` (= ``any``), which MXNet 2.0 keeps.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .._ndarray import NDArray
from ._maker import np_function
from ._manipulation import stack
from ._reduction import any as _any
from ._reduction import prod as _prod

__all__ = [
    "choose", "i0", "unwrap", "trapz", "polyadd", "polysub", "polymul", "polyint", "poly", "packbits",
    "unpackbits", "msort", "in1d", "tril_indices_from", "triu_indices_from", "product", "sometrue",
]

_choose = np_function("choose", positional=("a", "choices", "out", "mode"))
i0 = np_function("i0")
unwrap = np_function("unwrap", positional=("p", "discont", "axis"))
trapz = np_function("trapz", positional=("y", "x", "dx", "axis"))
polyadd = np_function("polyadd")
polysub = np_function("polysub")
polymul = np_function("polymul")
polyint = np_function("polyint", positional=("p", "m", "k"))
poly = np_function("poly")
packbits = np_function("packbits", positional=("a", "axis", "bitorder"))
unpackbits = np_function("unpackbits", positional=("a", "axis", "count", "bitorder"))
msort = np_function("msort")
in1d = np_function("in1d", positional=("ar1", "ar2", "assume_unique", "invert"))
tril_indices_from = np_function("tril_indices_from", positional=("arr", "k"))
triu_indices_from = np_function("triu_indices_from", positional=("arr", "k"))


def choose(a: Any, choices: Any, out: NDArray | None = None, mode: str = "raise") -> Any:
    """Construct an array from an index array and a list of arrays to choose from: element i is
    ``choices[a[i]][i]`` (all broadcast together).  ``choices`` is an array whose first axis
    enumerates the choices, or a sequence of arrays (stacked first)."""
    if isinstance(choices, (list, tuple)) and any(isinstance(c, NDArray) for c in choices):
        dtype = onp.result_type(*(c.dtype if isinstance(c, NDArray) else onp.asarray(c).dtype for c in choices))
        choices = stack([c.astype(dtype) if isinstance(c, NDArray) else onp.asarray(c, dtype) for c in choices])
    return _choose(a, choices, out=out, mode=mode)


choose.op = _choose.op  # type: ignore[attr-defined]


def product(a: Any, axis: Any = None, dtype: Any = None, out: NDArray | None = None,
            keepdims: bool = False) -> Any:
    """Product of array elements over the given axis (MXNet 2.0's alias of :func:`prod`)."""
    return _prod(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)


def sometrue(a: Any, axis: Any = None, keepdims: bool = False, out: NDArray | None = None) -> Any:
    """Whether any element along the given axis is true (MXNet 2.0's alias of :func:`any`)."""
    return _any(a, axis=axis, keepdims=keepdims, out=out)


product.op = _prod.op  # type: ignore[attr-defined]
sometrue.op = _any.op  # type: ignore[attr-defined]
