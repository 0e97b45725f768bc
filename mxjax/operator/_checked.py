"""Bounds checks for index ops, on the host before a call and inside compiled programs.

XLA cannot raise from a program: an out-of-range gather index is clamped, a
scatter index dropped.  NumPy and MXNet raise ``IndexError`` instead.  Two layers
restore that:

* ``check=`` functions (see ``OpDef.check``) read concrete indices on the host in
  imperative mode and raise before the compiled call;
* ``guard`` goes into the op's compute, so it is part of every traced program
  (hybridized blocks, ``jax.jit`` of user code).  A ``lax.cond`` on "any index out
  of range" calls back to the host only then; the callback records an
  ``MXNetIndexError`` instead of raising (a raising callback would abort the
  program with an opaque runtime error at the call), and the next wait point
  (``to_jax``, ``wait_to_read``, ``asnumpy``) raises it, as MXNet re-raises an
  asynchronous operator failure when its result is read.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as onp
from jax import lax

from ..base import MXNetIndexError

# Failures recorded by compiled programs, waiting for the next read to raise them.  The callback
# runs on an XLA thread, so the list is shared by all threads; the first failure wins.
PENDING: list[MXNetIndexError] = []
_LOCK = threading.Lock()


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


def bounds_message(op: str, value: int, axis: Any, size: int, context: str = "") -> str:
    """NumPy's wording for an out-of-range index, led by the op's name."""
    text = f"{op}: index {value} is out of bounds for axis {axis} with size {size}"
    return f"{text} ({context})" if context else text


def check_index_bounds(op: str, indices: Any, size: int, axis: Any, allow_negative: bool = True) -> None:
    """NumPy's bounds rule for integer indices into an axis of ``size``: IndexError naming the first bad one."""
    values = host_indices(indices)
    low = -size if allow_negative else 0
    bad = values[(values < low) | (values >= size)]
    if bad.size:
        raise MXNetIndexError(bounds_message(op, int(bad.flat[0]), axis, size))


# ----------------------------------------------------------------------------- inside programs

def guard(op: str, checks: Sequence[tuple[Any, int, Any]], arrays: Sequence[Any], context: str = "",
          allow_negative: bool = True) -> tuple:
    """``arrays`` passed through a check that every ``(indices, size, axis)`` in ``checks`` is in range.

    Returns ``arrays`` unchanged; the op must compute from the returned values, which
    keeps the check in the program.  When some index is out of range the host records
    an ``MXNetIndexError`` naming ``op``, the first bad value, its axis and size, and
    ``context`` (shapes); :func:`raise_pending` raises it at the next read.
    """
    arrays = tuple(arrays)
    live = [(jnp.asarray(i), int(size), axis) for i, size, axis in checks if math.prod(jnp.shape(i)) > 0]
    if not live:
        return arrays
    flags, firsts = [], []
    for indices, size, _ in live:
        bad = _out_of_range(indices, size, -size if allow_negative else 0).ravel()
        flags.append(jnp.any(bad))
        firsts.append(indices.ravel()[jnp.argmax(bad)])
    flag = jnp.any(jnp.stack(flags))
    described = tuple((size, axis) for _, size, axis in live)

    def record(flags_, firsts_):
        _record(op, described, context, flags_, firsts_)
        return onp.zeros((), onp.int32)

    if any(size <= 1 for _, size, _ in live):
        # XLA folds a gather from an axis of length 0 or 1 into a broadcast that ignores the
        # index, and would then drop a pure callback on it as dead code: use an effectful
        # one (slower to dispatch, so only here), which XLA must keep
        lax.cond(flag, lambda: jax.debug.callback(record, tuple(flags), tuple(firsts)), lambda: None)
        return arrays

    def report(*values):
        # a pure callback keeps jit's fast dispatch; the values are selected on its (zero) result, so
        # XLA keeps it.  It returns an int32 scalar and no arithmetic touches the values, so their
        # dtypes stay exact, also in a user's jax.jit with 64-bit types off
        ok = jax.pure_callback(record, jax.ShapeDtypeStruct((), jnp.int32), tuple(flags), tuple(firsts),
                               vmap_method="sequential") == 0
        return tuple(lax.select(lax.broadcast_in_dim(ok, jnp.shape(v), ()), v, lax.sub(v, v))
                     if jnp.result_type(v) != jnp.bool_ else v & ok for v in values)

    return tuple(lax.cond(flag, report, lambda *values: values, *arrays))


def _out_of_range(indices: Any, size: int, low: int) -> Any:
    """``(indices < low) | (indices >= size)`` without wrapping a bound into the index dtype
    (uint8 indices against -2, int8 against 300)."""
    info = jnp.iinfo(indices.dtype)
    never = jnp.zeros(indices.shape, bool)
    below = indices < low if low > info.min else never
    above = indices >= size if size <= info.max else never
    return below | above


def _record(op: str, described: tuple, context: str, flags: Any, firsts: Any) -> None:
    """Host side of :func:`guard`: keep the first failure for the next read."""
    for hit, value, (size, axis) in zip(flags, firsts, described):
        if bool(onp.asarray(hit)):
            with _LOCK:
                if not PENDING:
                    PENDING.append(MXNetIndexError(
                        bounds_message(op, int(onp.asarray(value)), axis, size, context)
                        + "; reported at the first read after the op ran, its result is invalid"))
            return


def raise_pending() -> None:
    """Raise (once) the failure a compiled program recorded, if any."""
    if not PENDING:
        return
    with _LOCK:
        err = PENDING[0] if PENDING else None
        PENDING.clear()
    if err is not None:
        raise MXNetIndexError(str(err))
