"""Helpers for checking ops against NumPy references (imported by the op tests)."""
from __future__ import annotations

from typing import Any

import numpy as onp

import mxjax as mx
from mxjax.ndarray import invoke
from mxjax.operator import get_op


def run_op(op: str, arrays: list, **params: Any) -> Any:
    """Invoke a registered op directly (the path legacy front-ends and executors take)."""
    inputs = [mx.np.array(a) if isinstance(a, onp.ndarray) else a for a in arrays]
    return invoke(get_op(op), inputs, params or None, mx.np.ndarray)


def check(got: Any, want: Any, dtype: str = "float32", rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """``got`` (an mxjax array) has ``want``'s shape, the given dtype, and its values within tolerance."""
    values = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    assert values.shape == onp.shape(want), (values.shape, onp.shape(want))
    assert values.dtype == onp.dtype(dtype), (values.dtype, dtype)
    onp.testing.assert_allclose(values.astype(onp.float64), onp.asarray(want, onp.float64), rtol=rtol, atol=atol)
