"""Invertible maps ``y = T(x)``: forward, inverse and ``log|dy/dx|``.

Subclasses fill in ``_forward_compute`` / ``_inverse_compute`` / ``log_det_jacobian``;
``T.inv`` is a lightweight view that swaps the two directions.
"""
from __future__ import annotations

import weakref
from functools import reduce
from typing import Any

from .... import numpy as np
from .... import numpy_extension as npx
from ...block import HybridBlock
from .._utils import _clip_prob, absolute, cached_property, exp, log, log1p, sign, sum_right_most

__all__ = ["Transformation", "TransformBlock", "ComposeTransform", "ExpTransform", "AffineTransform",
           "PowerTransform", "AbsTransform", "SigmoidTransform", "SoftmaxTransform"]


def _deref(ref: Any) -> Any:
    """Resolve an optional weak reference (``None`` when unset or collected)."""
    return None if ref is None else ref()


class Transformation:
    r"""Base transformation. ``event_dim``: how many right-most axes one application couples."""
    bijective = False
    event_dim = 0

    def __init__(self) -> None:
        super().__init__()
        self._inv = None  # weak reference to a cached inverse view

    @property
    def sign(self) -> Any:
        """Sign of ``dy/dx`` (monotone maps only)."""
        raise NotImplementedError

    @property
    def inv(self) -> "Transformation":
        """The inverse map; cached weakly so the pair does not keep itself alive."""
        view = _deref(self._inv)
        if view is None:
            view = _Inverted(self)
            self._inv = weakref.ref(view)
        return view

    def __call__(self, x: Any) -> Any:
        return self._forward_compute(x)

    def _inv_call(self, y: Any) -> Any:
        return self._inverse_compute(y)

    # subclass hooks (MXNet's names, so MXNet-style subclasses keep working)
    def _forward_compute(self, inp: Any) -> Any:
        raise NotImplementedError

    def _inverse_compute(self, out: Any) -> Any:
        raise NotImplementedError

    def log_det_jacobian(self, x: Any, y: Any) -> Any:
        """``log|dy/dx|`` evaluated at ``x`` where ``y = T(x)``."""
        raise NotImplementedError


class _Inverted(Transformation):
    """``T^{-1}`` as a transformation; keeps a strong reference back to ``T``."""

    def __init__(self, base: Transformation) -> None:
        super().__init__()
        self._inv = base

    inv = property(lambda self: self._inv)
    sign = property(lambda self: self._inv.sign)
    event_dim = property(lambda self: self._inv.event_dim)  # type: ignore[assignment]

    def __call__(self, y: Any) -> Any:
        return self._inv._inv_call(y)

    def _inv_call(self, x: Any) -> Any:
        return self._inv(x)

    def log_det_jacobian(self, x: Any, y: Any) -> Any:
        # d(T^-1)/dy = 1 / (dT/dx): the log flips sign, with the roles of x and y swapped
        return -self._inv.log_det_jacobian(y, x)


class TransformBlock(Transformation, HybridBlock):
    """A transformation that is also a ``HybridBlock`` (so it may own parameters)."""


class ComposeTransform(Transformation):
    """Chain of transformations, applied first to last."""

    def __init__(self, parts: list) -> None:
        super().__init__()
        self._chain = list(parts)

    def _forward_compute(self, x: Any) -> Any:
        return reduce(lambda acc, t: t(acc), self._chain, x)

    @cached_property
    def sign(self) -> Any:  # pylint: disable=invalid-overridden-method
        return reduce(lambda acc, t: acc * t.sign, self._chain, 1)

    @cached_property
    def event_dim(self) -> int:  # pylint: disable=invalid-overridden-method
        return max((t.event_dim for t in self._chain), default=0)

    @property
    def inv(self) -> "ComposeTransform":
        view = _deref(self._inv)
        if view is None:
            view = ComposeTransform([t.inv for t in self._chain[::-1]])
            self._inv = weakref.ref(view)
            view._inv = weakref.ref(self)
        return view

    def log_det_jacobian(self, x: Any, y: Any) -> Any:
        if not self._chain:
            return np.zeros_like(x)
        # walk the chain, reusing the caller's y for the final step instead of recomputing it
        total = 0
        last = len(self._chain) - 1
        for i, t in enumerate(self._chain):
            nxt = y if i == last else t(x)
            total = total + sum_right_most(t.log_det_jacobian(x, nxt), self.event_dim - t.event_dim)
            x = nxt
        return total


def _sigmoid_inverse(y):
    p = _clip_prob(y)
    return np.log(p) - np.log1p(-p)


def _sigmoid_log_det(x, y):
    # sigmoid'(x) = sigmoid(x) * sigmoid(-x); log sigmoid(t) = -log(1 + e^-t)
    return -(log1p(exp(-x)) + log1p(exp(x)))


# The elementwise maps below need no state: their hooks are plain functions.

class ExpTransform(Transformation):
    r"""``y = e^x``; ``log|dy/dx| = x``."""
    bijective = True
    sign = 1
    _forward_compute = staticmethod(exp)
    _inverse_compute = staticmethod(log)
    log_det_jacobian = staticmethod(lambda x, y: x)


class SigmoidTransform(Transformation):
    r"""``y = 1 / (1 + e^-x)``, kept a float32 epsilon away from 0 and 1."""
    bijective = True
    sign = 1
    _forward_compute = staticmethod(lambda x: _clip_prob(npx.sigmoid(x)))
    _inverse_compute = staticmethod(_sigmoid_inverse)
    log_det_jacobian = staticmethod(_sigmoid_log_det)


class SoftmaxTransform(Transformation):
    r"""Softmax over the last axis (not bijective: ``inv`` only returns ``log y``)."""
    event_dim = 1
    _forward_compute = staticmethod(lambda x: npx.softmax(x, axis=-1))
    _inverse_compute = staticmethod(np.log)


class AbsTransform(Transformation):
    r"""``y = |x|`` (not bijective: ``inv`` is the identity on ``y >= 0``)."""
    _forward_compute = staticmethod(absolute)
    _inverse_compute = staticmethod(lambda y: y)


class AffineTransform(Transformation):
    r"""``y = loc + scale * x``; the jacobian is summed over ``event_dim`` right-most axes."""
    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0) -> None:
        super().__init__()
        self._shift, self._factor = loc, scale
        self.event_dim = event_dim

    @property
    def sign(self):
        return sign(self._factor)

    def _forward_compute(self, inp):
        return self._factor * inp + self._shift

    def _inverse_compute(self, out):
        return (out - self._shift) / self._factor

    def log_det_jacobian(self, x, y):
        return sum_right_most(np.ones_like(x) * log(absolute(self._factor)), self.event_dim)


class PowerTransform(Transformation):
    r"""``y = x^p`` on ``x > 0``; ``log|dy/dx| = log|p * y / x|``."""
    bijective = True
    sign = 1

    def __init__(self, exponent: Any) -> None:
        super().__init__()
        self._p = exponent

    def _forward_compute(self, inp):
        return np.power(inp, self._p)

    def _inverse_compute(self, out):
        return np.power(out, 1 / self._p)

    def log_det_jacobian(self, x, y):
        return log(absolute(y * self._p / x))
