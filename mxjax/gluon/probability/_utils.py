"""Helpers shared by distributions and transformations: scalar-aware math, prob/logit, shapes.

This module sits below both subpackages (it imports neither); ``distributions.utils``
re-exports it under MXNet's public path.

MXNet's distributions accept Python numbers as parameters and then answer with Python
numbers (``Gamma(2., 3.).mean == 6.0``).  The unary helpers here keep that: a
``numbers.Number`` goes through the host ``math``/NumPy function, anything else through
the ``mx.np``/``mx.npx`` op, so the same code runs on arrays, under autograd and inside
hybridized blocks.
"""
from __future__ import annotations

import math
from functools import update_wrapper
from numbers import Number
from typing import Any, Callable

import numpy as onp

from ... import numpy as np
from ... import numpy_extension as npx

__all__ = ['prob2logit', 'logit2prob', 'cached_property', 'sample_n_shape_converter',
           'constraint_check', 'digamma', 'gammaln', 'erfinv', 'erf']

_EPS = float(onp.finfo('float32').eps)


def _host(op: Callable) -> Callable:
    """A host fallback that evaluates the mx op on a 0-d array and returns a Python float."""
    return lambda x: float(op(np.array(x, dtype='float32')))


def _scalar_aware(array_fn: Callable, scalar_fn: Callable) -> Callable:
    def fn(x: Any) -> Any:
        if isinstance(x, Number):
            return scalar_fn(x)
        return array_fn(x)
    fn.__name__ = getattr(array_fn, '__name__', 'fn')
    return fn


def _math(name: str) -> Callable:
    fn = getattr(math, name)

    def safe(x: Number) -> float:
        try:
            return fn(x)
        except (ValueError, OverflowError):  # log(0), log(-1): follow NumPy (-inf, nan)
            with onp.errstate(all='ignore'):
                return float(getattr(onp, name)(onp.float64(x)))
    return safe


log = _scalar_aware(np.log, _math('log'))
log1p = _scalar_aware(np.log1p, _math('log1p'))
exp = _scalar_aware(np.exp, _math('exp'))
expm1 = _scalar_aware(np.expm1, _math('expm1'))
sqrt = _scalar_aware(np.sqrt, _math('sqrt'))
tan = _scalar_aware(np.tan, math.tan)
arctan = _scalar_aware(np.arctan, math.atan)
absolute = _scalar_aware(np.abs, abs)
sign = _scalar_aware(np.sign, lambda x: float(onp.sign(x)))
_gammaln = _scalar_aware(npx.gammaln, lambda x: math.lgamma(x) if x > 0 else float('inf'))
_digamma = _scalar_aware(npx.digamma, _host(npx.digamma))
_erf = _scalar_aware(npx.erf, math.erf)
_erfinv = _scalar_aware(npx.erfinv, _host(npx.erfinv))


def constraint_check() -> Callable:
    """``check(condition, err_msg)``: 1.0 when it holds, ``ValueError(err_msg)`` when not."""
    def _check(condition: Any, err_msg: str) -> Any:
        if isinstance(condition, (bool, onp.bool_)):
            if not condition:
                raise ValueError(err_msg)
            return 1.0
        return npx.constraint_check(condition, err_msg)
    return _check


# MXNet spells these as factories (``gammaln()(x)``); kept for scripts that import them.
def digamma() -> Callable:
    """Return the digamma function for scalars and tensors."""
    return _digamma


def gammaln() -> Callable:
    """Return log|Gamma(x)| for scalars and tensors."""
    return _gammaln


def erf() -> Callable:
    """Return the error function for scalars and tensors."""
    return _erf


def erfinv() -> Callable:
    """Return the inverse error function for scalars and tensors."""
    return _erfinv


def sample_n_shape_converter(size: Any) -> Any:
    """MXNet's ``(-2,) + size`` marker for "prepend ``size`` to the parameter shape"."""
    if size is None:
        return size
    if size == ():
        return None
    if isinstance(size, int):
        size = (size,)
    return (-2,) + tuple(size)


def sum_right_most(x: Any, ndim: int) -> Any:
    """Sum ``x`` over its right-most ``ndim`` axes."""
    if ndim == 0:
        return x
    return x.sum(tuple(range(-ndim, 0)))


def _clip_prob(prob: Any) -> Any:
    return np.clip(prob, _EPS, 1 - _EPS)


def _clip_float_eps(value: Any) -> Any:
    return np.maximum(value, _EPS)


def prob2logit(prob: Any, binary: bool = True) -> Any:
    """``log(p / (1 - p))`` for the binary case, ``log(p)`` for the multinomial case."""
    if isinstance(prob, Number):
        prob = min(max(prob, _EPS), 1 - _EPS)
        return math.log(prob) - math.log1p(-prob) if binary else math.log(prob)
    clipped = _clip_prob(prob)
    if binary:
        return np.log(clipped) - np.log1p(-clipped)
    return np.log(clipped)


def logit2prob(logit: Any, binary: bool = True) -> Any:
    """``sigmoid(logit)`` for the binary case, ``softmax(logit)`` over the last axis otherwise."""
    if binary:
        if isinstance(logit, Number):
            return 1.0 / (1.0 + math.exp(-logit))
        return npx.sigmoid(logit)
    return npx.softmax(logit)


class _CachedProperty:
    """A property computed once and then stored on the instance (MXNet's ``cached_property``)."""

    def __init__(self, func: Callable) -> None:
        self._func = func
        update_wrapper(self, func)

    def __get__(self, instance: Any, cls: Any = None) -> Any:
        if instance is None:
            return self
        value = self._func(instance)
        setattr(instance, self._func.__name__, value)
        return value


cached_property = _CachedProperty


# ---- shapes: mxjax's random ops take explicit sizes (MXNet's -2 markers are resolved here)

def shape_of(x: Any) -> tuple:
    return () if isinstance(x, Number) else tuple(x.shape)


def batch_shape(*params: Any) -> tuple:
    """The broadcast shape of the parameters (numbers count as ``()``)."""
    shape: tuple = ()
    for p in params:
        shape = onp.broadcast_shapes(shape, shape_of(p))
    return tuple(shape)


def as_tuple(size: Any) -> tuple:
    if size is None:
        return ()
    return (size,) if isinstance(size, int) else tuple(size)


def sample_n_shape(size: Any, *params: Any) -> tuple:
    """``size + batch_shape(params)``: the output shape of ``sample_n``."""
    return as_tuple(size) + batch_shape(*params)

