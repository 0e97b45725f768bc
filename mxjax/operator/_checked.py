"""Ops whose NumPy semantics need a check of input VALUES that XLA cannot raise from inside a program.

NumPy raises ``IndexError`` for an out-of-range ``take`` index; a compiled XLA
program can only clamp or wrap.  A ``CheckedOp`` runs its ``check`` on the
concrete inputs in imperative mode, before the compiled call, and raises the
NumPy error there.  Under an outer trace (``hybridize``, ``jax.jit``) the inputs
are tracers: the check is skipped and the compute function's in-program
behaviour (documented by each op, usually clipping) applies.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax
import numpy as onp

from .registry import OpDef, register

_Tracer = jax.core.Tracer


def is_concrete(*xs: Any) -> bool:
    """True when no argument is a tracer (values can be read on the host)."""
    return not any(isinstance(x, _Tracer) for x in xs)


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


@dataclass(eq=False)
class CheckedOp(OpDef):
    """An op with a value check ``check(*inputs, **params)`` run on concrete inputs before the call."""

    check: Callable[..., None] | None = None

    def _make_callable(self, params: dict[str, Any]) -> Callable[..., Any]:
        fn = OpDef._make_callable(self, params)
        check = self.check

        def call(*arrays: Any) -> Any:
            if is_concrete(*arrays):
                check(*arrays, **params)
            return fn(*arrays)
        return call


def defchecked(name: str, check: Callable[..., None], **options: Any) -> Callable[[Callable], OpDef]:
    """Like ``defop``, registering a :class:`CheckedOp` with this value check."""

    def wrap(compute: Callable) -> OpDef:
        return register(CheckedOp(name, compute, check=check, **options))

    return wrap


def check_index_bounds(op: str, indices: Any, size: int, axis: Any, allow_negative: bool = True) -> None:
    """NumPy's bounds rule for integer indices into an axis of ``size``: IndexError naming the first bad one."""
    from ..base import MXNetIndexError

    values = host_indices(indices)
    low = -size if allow_negative else 0
    bad = values[(values < low) | (values >= size)]
    if bad.size:
        raise MXNetIndexError(f"{op}: index {int(bad.flat[0])} is out of bounds for axis {axis} with size {size}")
