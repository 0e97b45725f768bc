"""``biject_to`` / ``transform_to``: map a constraint to a transformation from the reals onto it."""
from __future__ import annotations

from numbers import Number
from typing import Any, Callable

from ..distributions.constraint import (Constraint, GreaterThan, GreaterThanEq, HalfOpenInterval, Interval,
                                        LessThan, Positive)
from .transformation import AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform

__all__ = ['domain_map', 'biject_to', 'transform_to']


class domain_map:  # pylint: disable=invalid-name
    """A registry from constraint types to factories ``constraint -> Transformation``."""

    def __init__(self) -> None:
        self._storage: dict = {}

    def register(self, constraint: Any, factory: Callable | None = None) -> Any:
        """Register ``factory`` for ``constraint`` (a subclass or an instance); usable as a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, Constraint):
            raise TypeError('Expected constraint to be either a Constraint subclass or instance, '
                            'but got {}'.format(constraint))
        self._storage[constraint] = factory
        return factory

    def __call__(self, constraint: Constraint) -> Any:
        try:
            factory = self._storage[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                'Cannot transform {} constraints'.format(type(constraint).__name__)) from None
        return factory(constraint)


biject_to = domain_map()
transform_to = domain_map()


@biject_to.register(Positive)
@transform_to.register(Positive)
def _transform_to_positive(constraint):
    return ExpTransform()


@biject_to.register(GreaterThan)
@biject_to.register(GreaterThanEq)
@transform_to.register(GreaterThan)
@transform_to.register(GreaterThanEq)
def _transform_to_greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint._lower_bound, 1)])


@biject_to.register(LessThan)
@transform_to.register(LessThan)
def _transform_to_less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint._upper_bound, -1)])


@biject_to.register(Interval)
@biject_to.register(HalfOpenInterval)
@transform_to.register(Interval)
@transform_to.register(HalfOpenInterval)
def _transform_to_interval(constraint):
    lower, upper = constraint._lower_bound, constraint._upper_bound
    if isinstance(lower, Number) and lower == 0 and isinstance(upper, Number) and upper == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])
