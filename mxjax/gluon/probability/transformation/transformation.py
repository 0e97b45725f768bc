"""Bijective transformations ``y = T(x)`` with their inverses and ``log|dy/dx|``."""
from __future__ import annotations

import weakref
from typing import Any

from .... import numpy as np
from .... import numpy_extension as npx
from ...block import HybridBlock
from ..distributions.utils import _clip_prob, absolute, cached_property, exp, log, log1p, sign, sum_right_most

__all__ = ["Transformation", "TransformBlock", "ComposeTransform", "ExpTransform",
           "AffineTransform", "PowerTransform", "AbsTransform", 'SigmoidTransform',
           'SoftmaxTransform']


class Transformation:
    r"""Base class of transformations: ``__call__`` maps ``x`` to ``y``, ``inv`` maps back.

    ``event_dim`` is the number of right-most axes that one application couples
    (0: elementwise); ``sign`` is the sign of ``dy/dx`` for monotone maps.
    """
    bijective = False
    event_dim = 0

    def __init__(self) -> None:
        super().__init__()
        self._inv = None

    @property
    def sign(self) -> Any:
        """The sign of the derivative, for monotone transformations."""
        raise NotImplementedError

    @property
    def inv(self) -> "Transformation":
        """The inverse transformation (held weakly, rebuilt on demand, as MXNet)."""
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransformation(self)
            self._inv = weakref.ref(inv)
        return inv

    def __call__(self, x: Any) -> Any:
        return self._forward_compute(x)

    def _inv_call(self, y: Any) -> Any:
        return self._inverse_compute(y)

    def _forward_compute(self, x: Any) -> Any:
        raise NotImplementedError

    def _inverse_compute(self, x: Any) -> Any:
        raise NotImplementedError

    def log_det_jacobian(self, x: Any, y: Any) -> Any:
        """``log|dy/dx|`` at ``x`` (with ``y = T(x)``)."""
        raise NotImplementedError


class _InverseTransformation(Transformation):
    """The inverse of a transformation; its ``inv`` is the original (held strongly)."""

    def __init__(self, forward_transformation: Transformation) -> None:
        super().__init__()
        self._inv = forward_transformation

    @property
    def inv(self) -> Transformation:
        return self._inv

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self._inv.event_dim

    def __call__(self, x: Any) -> Any:
        return self._inv._inverse_compute(x)

    def log_det_jacobian(self, x: Any, y: Any) -> Any:
        return -self._inv.log_det_jacobian(y, x)


class TransformBlock(Transformation, HybridBlock):
    """A transformation that is also a ``HybridBlock`` (so it can hold parameters)."""


class ComposeTransform(Transformation):
    """Apply ``parts`` in order: ``parts[-1](...parts[0](x))``."""

    def __init__(self, parts: list) -> None:
        super().__init__()
        self._parts = parts

    def _forward_compute(self, x: Any) -> Any:
        for t in self._parts:
            x = t(x)
        return x

    @cached_property
    def sign(self) -> Any:  # pylint: disable=invalid-overridden-method
        result = 1
        for p in self._parts:
            result = result * p.sign
        return result

    @cached_property
    def event_dim(self) -> int:  # pylint: disable=invalid-overridden-method
        return max(p.event_dim for p in self._parts) if self._parts else 0

    @property
    def inv(self) -> "ComposeTransform":
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = ComposeTransform([t.inv for t in reversed(self._parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def log_det_jacobian(self, x: Any, y: Any) -> Any:
        if not self._parts:
            return np.zeros_like(x)
        result = 0
        for t in self._parts[:-1]:
            x_next = t(x)
            result = result + sum_right_most(t.log_det_jacobian(x, x_next), self.event_dim - t.event_dim)
            x = x_next
        last = self._parts[-1]
        return result + sum_right_most(last.log_det_jacobian(x, y), self.event_dim - last.event_dim)


class ExpTransform(Transformation):
    r"""``y = exp(x)``."""
    bijective = True
    sign = 1

    def _forward_compute(self, x):
        return exp(x)

    def _inverse_compute(self, y):
        return log(y)

    def log_det_jacobian(self, x, y):
        return x


class AffineTransform(Transformation):
    r"""``y = loc + scale * x``; ``event_dim`` axes are summed in ``log_det_jacobian``."""
    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0) -> None:
        super().__init__()
        self._loc = loc
        self._scale = scale
        self.event_dim = event_dim

    def _forward_compute(self, x):
        return self._loc + self._scale * x

    def _inverse_compute(self, y):
        return (y - self._loc) / self._scale

    def log_det_jacobian(self, x, y):
        value = np.ones_like(x) * log(absolute(self._scale))
        return sum_right_most(value, self.event_dim)

    @property
    def sign(self):
        return sign(self._scale)


class PowerTransform(Transformation):
    r"""``y = x ** exponent`` (for ``x > 0``)."""
    bijective = True
    sign = 1

    def __init__(self, exponent: Any) -> None:
        super().__init__()
        self._exponent = exponent

    def _forward_compute(self, x):
        return np.power(x, self._exponent)

    def _inverse_compute(self, y):
        return np.power(y, 1 / self._exponent)

    def log_det_jacobian(self, x, y):
        return log(absolute(self._exponent * y / x))


def _softplus(x):
    return log1p(exp(x))


class SigmoidTransform(Transformation):
    r"""``y = sigmoid(x)``, clipped away from 0 and 1 by float32's epsilon."""
    bijective = True
    sign = 1

    def _forward_compute(self, x):
        return _clip_prob(npx.sigmoid(x))

    def _inverse_compute(self, y):
        clipped = _clip_prob(y)
        return np.log(clipped) - np.log1p(-clipped)

    def log_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class SoftmaxTransform(Transformation):
    r"""``y = softmax(x)`` over the last axis (not bijective; ``inv`` is ``log``)."""
    event_dim = 1

    def _forward_compute(self, x):
        return npx.softmax(x, axis=-1)

    def _inverse_compute(self, y):
        return np.log(y)


class AbsTransform(Transformation):
    r"""``y = |x|`` (not bijective; ``inv`` is the identity on ``y >= 0``)."""

    def _forward_compute(self, x):
        return absolute(x)

    def _inverse_compute(self, y):
        return y
