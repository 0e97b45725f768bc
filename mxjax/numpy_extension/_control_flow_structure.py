"""Flat lists of arrays for ``npx.foreach`` / ``npx.while_loop`` / ``npx.cond``, and their checks.

The user functions take and return arrays or nested lists of arrays; the control-flow
ops work on flat lists.  This module flattens and regroups those structures, checks the
user functions' results (pairs, conditions, matching shapes) and picks the execution
mode (eager, graph, JAX).  It is separate from the tracing machinery and from the three
public functions, which both build on it.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as onp

from .._deferred_compute import is_deferred_compute
from ..base import MXNetTypeError, MXNetValueError
from .._ndarray import NDArray
from .._invoke import invoke
from ..operator import get_op

_EAGER, _GRAPH, _JAX = "eager", "graph", "jax"


# ----------------------------------------------------------------------------- structures

def _flatten(value: Any, what: str, op: str) -> tuple[list, Any]:
    """``(arrays, fmt)``: fmt is None for one array, else the list of its items' fmts."""
    if isinstance(value, NDArray):
        return [value], None
    if isinstance(value, (list, tuple)):
        flat, fmt = [], []
        for item in value:
            items, item_fmt = _flatten(item, what, op)
            flat.extend(items)
            fmt.append(item_fmt)
        return flat, fmt
    raise MXNetTypeError(f"{op}: {what} must be an array or a (nested) list of arrays, got {type(value).__name__}")


def _regroup(flat: list, fmt: Any) -> Any:
    items = iter(flat)

    def build(f: Any) -> Any:
        return next(items) if f is None else [build(sub) for sub in f]
    return build(fmt)


def _aval(x: NDArray) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(tuple(x._data.shape), x._data.dtype)


def _describe(avals: list, fmt: Any) -> str:
    text = [f"{tuple(a.shape)} {onp.dtype(a.dtype).name}" for a in avals]
    return str(_regroup(text, fmt)).replace("'", "")


def _check_like(op: str, what: str, arrays: list, fmt: Any, want: list, want_fmt: Any, reference: str) -> None:
    got = [_aval(x) for x in arrays]
    same = fmt == want_fmt and all(g.shape == w.shape and g.dtype == w.dtype for g, w in zip(got, want))
    if not same:
        raise MXNetValueError(f"{op}: {what} must have the structure, shapes and dtypes of {reference}: "
                              f"got {_describe(got, fmt)}, expected {_describe(want, want_fmt)}")


def _callable(fn: Any, op: str, role: str) -> None:
    if not callable(fn):
        raise MXNetTypeError(f"{op}: {role} must be a function, got {type(fn).__name__}")


def _pair(result: Any, op: str, role: str) -> tuple:
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise MXNetValueError(f"{op}: {role} must return a pair (outputs, new states), got {type(result).__name__}"
                              + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
    return result[0], result[1]


def _condition(value: Any, op: str, role: str) -> Any:
    """A condition result: a size-1 array (returned as is) or a Python truth value (returned as bool)."""
    if isinstance(value, NDArray):
        if value.size != 1:
            raise MXNetValueError(f"{op}: {role} must give a single value (size-1 array), got shape {value.shape}")
        return value
    if isinstance(value, (bool, int, float, onp.bool_, onp.number)):
        return bool(value)
    raise MXNetTypeError(f"{op}: {role} must give a size-1 array or a bool, got {type(value).__name__}")


def _truth(value: Any) -> bool:
    return value if isinstance(value, bool) else bool(value.asnumpy().reshape(()))


def _mode(arrays: list) -> str:
    if is_deferred_compute():
        return _GRAPH
    if any(isinstance(x._data, jax.core.Tracer) for x in arrays if isinstance(x, NDArray)):
        return _JAX
    return _EAGER


def _stack(rows: list, cls: type) -> list:
    """Per output position, the rows' arrays stacked along a new axis 0 (recorded by autograd)."""
    op = get_op("stack")
    return [invoke(op, list(items), {"axis": 0}, cls) for items in zip(*rows)]
