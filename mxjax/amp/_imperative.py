"""``amp.init``'s hook: every listed op casts its float inputs before it computes.

mxjax runs an op through its ``OpDef.compute`` everywhere (eager calls, autograd's ``jax.vjp``,
hybridized and symbolic graphs), so replacing ``compute`` on the listed ``OpDef`` objects reaches
all of them at once; an op's own ``infer`` rule is wrapped the same way.  The
cast happens inside the traced function, so gradients flow back to the inputs' own dtypes.
``uninstall`` puts the original functions back.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import jax

from .. import _config
from ..operator.registry import OpDef
from ._policy import Policy, Rule, float_dtype

_originals: dict = {}  # OpDef -> (compute, infer) before AMP


def _cast_one(x: Any, dtype: Any) -> Any:
    if dtype is None or float_dtype(x) is None or x.dtype == dtype:
        return x
    if isinstance(x, jax.ShapeDtypeStruct):
        return jax.ShapeDtypeStruct(x.shape, dtype)
    return x.astype(dtype)


def cast_inputs(rule: Rule, target: Any, args: tuple, params: dict) -> tuple:
    """``args`` cast as ``rule`` says for this call's parameters."""
    wanted = rule.input_dtypes([float_dtype(a) for a in args], params, target)
    return tuple(_cast_one(a, d) for a, d in zip(args, wanted))


def _wrap_compute(compute: Callable, rule: Rule, target: Any) -> Callable:
    @functools.wraps(compute)
    def amp_compute(*args: Any, **params: Any) -> Any:
        return compute(*cast_inputs(rule, target, args, params), **params)
    return amp_compute


def install(policy: Policy) -> None:
    """Make every op with a casting rule cast its inputs (neutral ops are left alone)."""
    for op, rule in policy.rules.items():
        if rule.kind == "neutral" or op in _originals:
            continue
        _originals[op] = (op.compute, op.infer)
        op.compute = _wrap_compute(op.compute, rule, policy.target)
        if op.infer is not None:
            op.infer = _wrap_compute(op.infer, rule, policy.target)
    _config.drop_compiled()  # compiled ops, tape and gradient programs hold the old compute


def uninstall() -> None:
    """Restore every op's original functions."""
    for op, (compute, infer) in _originals.items():
        op.compute, op.infer = compute, infer
    _originals.clear()
    _config.drop_compiled()


def is_installed(op: OpDef) -> bool:
    return op in _originals
