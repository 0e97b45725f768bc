"""Which dtype each op's inputs take under AMP: the op tables resolved to mxjax ``OpDef`` objects.

Both halves of AMP read one :class:`Policy`: ``init`` (every call of an op casts its inputs) and
the graph conversion (``amp_cast`` / ``amp_multicast`` nodes in front of an op node).  A table
names ops by any registered name; the op's ``_legacy_`` twin (the ``mx.nd`` flavour) follows it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetTypeError, MXNetValueError
from ..operator.registry import OPS, OpDef
from . import lists

LP16, FP32, CONDITIONAL, WIDEST, NEUTRAL = "lp16", "fp32", "conditional", "widest", "neutral"

BFLOAT16 = onp.dtype(jnp.bfloat16)
FLOAT16 = onp.dtype(onp.float16)


class AMPUsageError(MXNetValueError, AssertionError):
    """A misuse MXNet reports with ``assert``: catchable as ``AssertionError`` there, ``ValueError`` here."""


def target_dtype_of(value: Any, caller: str) -> onp.dtype:
    """float16 or bfloat16 from a name, NumPy type or dtype (MXNet's structured bfloat16 included)."""
    if isinstance(value, onp.dtype) and value.names == ("bfloat16",):
        return BFLOAT16
    try:
        dtype = onp.dtype(value) if not isinstance(value, str) else onp.dtype(jnp.dtype(value))
    except TypeError:
        dtype = None
    if dtype not in (FLOAT16, BFLOAT16):
        raise AMPUsageError(f"{caller}: target_dtype must be 'float16' or 'bfloat16', got {value!r}")
    return dtype


@dataclass(frozen=True)
class Rule:
    """What an op does under AMP: ``kind`` plus, for LP16 ops, the inputs kept out of the cast
    (``keep``), for conditional ops the parameter and the values that send it to float32."""

    kind: str
    keep: tuple = ()
    param: str = ""
    values: tuple = ()

    def input_dtypes(self, dtypes: list, params: dict, target: onp.dtype) -> list:
        """The dtype each input should be cast to (None: leave it), given the inputs' float dtypes
        (None for a non-float or absent input)."""
        if self.kind == LP16:
            return [None if d is None or (i < len(self.keep) and self.keep[i]) else target
                    for i, d in enumerate(dtypes)]
        if self.kind == FP32 or (self.kind == CONDITIONAL and params.get(self.param) in self.values):
            return [None if d is None else FP32_DTYPE for d in dtypes]
        if self.kind == WIDEST:
            floats = {d for d in dtypes if d is not None}
            if len(floats) < 2:
                return [None] * len(dtypes)
            widest = widest_float(floats)
            return [None if d is None else widest for d in dtypes]
        return [None] * len(dtypes)


FP32_DTYPE = onp.dtype(onp.float32)


def widest_float(dtypes: Iterable[onp.dtype]) -> onp.dtype:
    """The float dtype all of ``dtypes`` fit in (float16 with bfloat16 needs float32)."""
    dtypes = set(dtypes)
    if len(dtypes) == 1:
        return next(iter(dtypes))
    return max(dtypes | {FP32_DTYPE}, key=lambda d: d.itemsize)


def _resolve(name: Any, caller: str, what: str) -> list[OpDef]:
    if not isinstance(name, str):
        raise MXNetTypeError(f"{caller}: {what} must hold op names (str), got {name!r}")
    op = OPS.get(name)
    if op is None:
        raise AMPUsageError(f"{caller}: {what} names {name!r}, which is not an mxjax operator")
    twin = OPS.get("_legacy_" + op.name)
    return [op] if twin is None else [op, twin]


def _names(value: Any, caller: str, what: str) -> list:
    if isinstance(value, str) or not isinstance(value, (list, tuple, set)):
        raise MXNetTypeError(f"{caller}: {what} must be a list of op names, got {type(value).__name__}")
    return list(value)


@dataclass
class Policy:
    """The rules of every op some table names, for one target dtype."""

    target: onp.dtype
    rules: dict

    def rule(self, op: OpDef) -> Rule | None:
        return self.rules.get(op)


def build_policy(target: onp.dtype, caller: str, target_ops: Any = None, fp32_ops: Any = None,
                 conditional_fp32_ops: Any = None, widest_ops: Any = None) -> Policy:
    """Resolve the tables (a None argument: the default table) into a :class:`Policy`.  Later
    groups win where a name appears in two: LP16, then float32, conditional, widest."""
    bf16 = target == BFLOAT16
    table = lists.symbol_bf16 if bf16 else lists.symbol_fp16
    defaults_lp16 = table.BF16_FUNCS if bf16 else table.FP16_FUNCS
    neutral = table.BF16_FP32_FUNCS if bf16 else table.FP16_FP32_FUNCS
    keep_params = table.BF16_USE_FP32_PARAMS if bf16 else {}
    rules: dict = {}
    for name in neutral:
        for op in _resolve(name, caller, "the neutral op table"):
            rules[op] = Rule(NEUTRAL)
    lp16 = defaults_lp16 if target_ops is None else _names(target_ops, caller, "target_dtype_ops")
    for name in lp16:
        for op in _resolve(name, caller, "target_dtype_ops"):
            keep = keep_params.get(name) or keep_params.get(op.name) or ()
            rules[op] = Rule(LP16, keep=tuple(bool(k) for k in keep))
    fp32 = table.FP32_FUNCS if fp32_ops is None else _names(fp32_ops, caller, "fp32_ops")
    for name in fp32:
        for op in _resolve(name, caller, "fp32_ops"):
            rules[op] = Rule(FP32)
    conditional = table.CONDITIONAL_FP32_FUNCS if conditional_fp32_ops is None else conditional_fp32_ops
    for entry in _names(conditional, caller, "conditional_fp32_ops"):
        if not (isinstance(entry, (tuple, list)) and len(entry) == 3 and isinstance(entry[1], str)
                and isinstance(entry[2], (list, tuple))):
            raise AMPUsageError(f"{caller}: conditional_fp32_ops entries must be (op name, parameter name, "
                                f"list of values), got {entry!r}")
        name, param, values = entry
        for op in _resolve(name, caller, "conditional_fp32_ops"):
            if param not in op.params:
                raise AMPUsageError(f"{caller}: conditional_fp32_ops: op {name!r} has no parameter {param!r}; "
                                    f"it has {sorted(op.params)}")
            rules[op] = Rule(CONDITIONAL, param=param, values=tuple(values))
    widest = table.WIDEST_TYPE_CASTS if widest_ops is None else widest_ops
    for name in widest:
        for op in _resolve(name, caller, "widest_dtype_ops"):
            rules[op] = Rule(WIDEST)
    return Policy(target, rules)


def float_dtype(x: Any) -> onp.dtype | None:
    """The dtype of an array-like input if it is floating point, else None."""
    dtype = getattr(x, "dtype", None)
    return None if dtype is None else as_float(dtype)


def as_float(dtype: Any) -> onp.dtype | None:
    """``dtype`` as a NumPy dtype if it is a floating-point type (bfloat16 included), else None."""
    dtype = onp.dtype(dtype)
    return dtype if jnp.issubdtype(dtype, jnp.floating) else None
