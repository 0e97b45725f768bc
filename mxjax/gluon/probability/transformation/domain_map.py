"""``biject_to`` / ``transform_to``: pick a transformation that carries the reals onto a constraint's support."""
from __future__ import annotations

from numbers import Number
from typing import Any, Callable

from .. import _constraint as _c
from .transformation import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform

__all__ = ['domain_map', 'biject_to', 'transform_to']


class domain_map:  # pylint: disable=invalid-name
    """Lookup table ``Constraint subclass -> factory(constraint) -> Transformation``."""

    def __init__(self) -> None:
        self._table: dict = {}

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        """Bind ``factory`` to a constraint class (or the class of an instance); works as a decorator."""
        if factory is None:
            return lambda fn: self.register(constraint, fn)
        key = constraint if isinstance(constraint, type) else type(constraint)
        if not issubclass(key, _c.Constraint):
            raise TypeError('Expected constraint to be either a Constraint subclass or instance, '
                            'but got {}'.format(constraint))
        self._table[key] = factory
        return factory

    def __call__(self, constraint: _c.Constraint) -> Any:
        make = self._table.get(type(constraint))
        if make is None:
            raise NotImplementedError('Cannot transform {} constraints'.format(type(constraint).__name__))
        return make(constraint)


biject_to = domain_map()
transform_to = domain_map()


def _is_const(v, target) -> bool:
    return isinstance(v, Number) and v == target


def _exp_then_shift(c):
    # (lower, inf): lower + exp(x)
    return ComposeTransform([ExpTransform(), AffineTransform(c._lower_bound, 1)])


def _exp_then_reflect(c):
    # (-inf, upper): upper - exp(x)
    return ComposeTransform([ExpTransform(), AffineTransform(c._upper_bound, -1)])


def _squash(c):
    # (lower, upper): lower + (upper - lower) * sigmoid(x); plain sigmoid for the unit interval
    lo, hi = c._lower_bound, c._upper_bound
    if _is_const(lo, 0) and _is_const(hi, 1):
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lo, hi - lo)])


_FACTORIES = (
    ((_c.Positive,), lambda c: ExpTransform()),
    ((_c.GreaterThan, _c.GreaterThanEq), _exp_then_shift),
    ((_c.LessThan,), _exp_then_reflect),
    ((_c.Interval, _c.HalfOpenInterval), _squash),
)

for _kinds, _make in _FACTORIES:
    for _kind in _kinds:
        biject_to.register(_kind, _make)
        transform_to.register(_kind, _make)
del _kinds, _make, _kind
