"""Value checks for ops whose NumPy errors XLA cannot raise from inside a program.

NumPy raises ``IndexError`` for an out-of-range ``take`` index; a compiled XLA
program can only clamp or wrap.  Such an op is registered with ``check=`` (see
``OpDef.check``): the check runs on concrete inputs in imperative mode, before the
compiled call.  Under an outer trace (``hybridize``, ``jax.jit``) the inputs are
tracers: the check is skipped and the op's in-program behaviour (documented by
each op, usually clipping) applies.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..base import MXNetIndexError


def host(x: Any) -> onp.ndarray:
    """The values of a concrete array-like on the host."""
    return onp.asarray(x)


def host_indices(x: Any) -> onp.ndarray:
    """Concrete index values on the host as integers (float and bool indices truncated, as the ops do);
    other dtypes give an empty array and are left for the op to reject."""
    values = onp.asarray(x)
    if values.dtype.kind in "fb":
        return values.astype(onp.int64)
    return values if values.dtype.kind in "iu" else onp.zeros(0, onp.int64)


def check_index_bounds(op: str, indices: Any, size: int, axis: Any, allow_negative: bool = True) -> None:
    """NumPy's bounds rule for integer indices into an axis of ``size``: IndexError naming the first bad one."""
    values = host_indices(indices)
    low = -size if allow_negative else 0
    bad = values[(values < low) | (values >= size)]
    if bad.size:
        raise MXNetIndexError(f"{op}: index {int(bad.flat[0])} is out of bounds for axis {axis} with size {size}")
