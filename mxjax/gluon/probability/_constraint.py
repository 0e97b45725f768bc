"""Constraints: the region where a parameter or a sample is valid.

``check(value)`` returns ``value`` unchanged (multiplied by 1, so it stays in the graph)
when it satisfies the constraint, and raises ``ValueError("Constraint violated: ...")``
otherwise, as MXNet does.  Lives below ``distributions`` and ``transformation`` (both use
it); ``distributions.constraint`` re-exports it under MXNet's public path.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ... import numpy as np
from . import _utils

__all__ = (["Constraint", "Real", "Boolean", "Simplex", "LowerTriangular", "LowerCholesky",
            "PositiveDefinite", "Cat", "Stack", "Positive", "NonNegative", "PositiveInteger",
            "NonNegativeInteger", "UnitInterval"]
           + [prefix + kind for prefix in ("", "Integer")
              for kind in ("Interval", "OpenInterval", "HalfOpenInterval", "GreaterThan", "GreaterThanEq",
                           "LessThan", "LessThanEq")])


def _is_integer(value: Any) -> Any:
    return value % 1 == 0


class Constraint:
    """Base class for constraints: a region over which a variable is valid."""

    def check(self, value: Any) -> Any:
        """Return ``value`` when it satisfies the constraint, else raise ``ValueError``."""
        raise NotImplementedError

    def _checked(self, condition: Any, value: Any, err_msg: str) -> Any:
        return _utils.constraint_check()(condition, err_msg) * value


class _Dependent(Constraint):
    """Marks a support that is only known once the other parameters are (e.g. Uniform's)."""

    def check(self, value: Any) -> Any:
        raise ValueError('Cannot validate dependent constraint')


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a dependent placeholder (it cannot check values itself)."""
    return isinstance(constraint, _Dependent)


# On the class it is a dependent constraint; on an instance it computes the actual one.
dependent_property = type('dependent_property', (property, _Dependent), {
    '__doc__': 'A property whose class-level value is a dependent constraint.'})
_DependentProperty = dependent_property


class Real(Constraint):
    """A real number (not NaN)."""

    def check(self, value):
        msg = "Constraint violated: {} should be a real tensor".format(value)
        return self._checked(value == value, value, msg)  # pylint: disable=comparison-with-itself


class Boolean(Constraint):
    """0 or 1."""

    def check(self, value):
        msg = "Constraint violated: {} should be either 0 or 1.".format(value)
        return self._checked((value == 0) | (value == 1), value, msg)


class _Bounded(Constraint):
    """``lower_op(value, lower) and upper_op(value, upper)``, optionally integer."""
    _integer = False
    _lower_text, _upper_text = '>=', '<='

    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        super().__init__()
        self._lower_bound, self._upper_bound = lower_bound, upper_bound

    def _condition(self, value):
        raise NotImplementedError

    def check(self, value):
        integer = "be integer and be " if self._integer else "be "
        msg = "Constraint violated: {} should {}{} {} and {} {}.".format(
            value, integer, self._lower_text, self._lower_bound, self._upper_text, self._upper_bound)
        condition = self._condition(value)
        if self._integer:
            condition = _is_integer(value) & condition
        return self._checked(condition, value, msg)


class Interval(_Bounded):
    """The real interval ``[lower_bound, upper_bound]``."""

    def _condition(self, value):
        return (value >= self._lower_bound) & (value <= self._upper_bound)


class OpenInterval(_Bounded):
    """The real interval ``(lower_bound, upper_bound)``."""
    _lower_text, _upper_text = '>', '<'

    def _condition(self, value):
        return (value > self._lower_bound) & (value < self._upper_bound)


class HalfOpenInterval(_Bounded):
    """The real interval ``[lower_bound, upper_bound)``."""
    _upper_text = '<'

    def _condition(self, value):
        return (value >= self._lower_bound) & (value < self._upper_bound)


class UnitInterval(Interval):
    """The unit interval ``[0, 1]``."""

    def __init__(self) -> None:
        super().__init__(0, 1)


class IntegerInterval(Interval):
    """The integers in ``[lower_bound, upper_bound]``."""
    _integer = True


class IntegerOpenInterval(OpenInterval):
    """The integers in ``(lower_bound, upper_bound)``."""
    _integer = True


class IntegerHalfOpenInterval(HalfOpenInterval):
    """The integers in ``[lower_bound, upper_bound)``."""
    _integer = True


class _OneSided(Constraint):
    _integer = False
    _text = ''

    def __init__(self, bound: Any) -> None:
        super().__init__()
        self._bound = bound

    def _condition(self, value):
        raise NotImplementedError

    def check(self, value):
        integer = "be integer and be " if self._integer else "be "
        msg = "Constraint violated: {} should {}{} {}".format(value, integer, self._text, self._bound)
        condition = self._condition(value)
        if self._integer:
            condition = _is_integer(value) & condition
        return self._checked(condition, value, msg)


class GreaterThan(_OneSided):
    """Greater than ``lower_bound``."""
    _text = 'greater than'

    def __init__(self, lower_bound: Any) -> None:
        super().__init__(lower_bound)
        self._lower_bound = self._bound  # the name domain_map and the KL table read

    def _condition(self, value):
        return value > self._bound


class GreaterThanEq(GreaterThan):
    """Greater than or equal to ``lower_bound``."""
    _text = 'greater than or equal to'

    def _condition(self, value):
        return value >= self._bound


class LessThan(_OneSided):
    """Less than ``upper_bound``."""
    _text = 'less than'

    def __init__(self, upper_bound: Any) -> None:
        super().__init__(upper_bound)
        self._upper_bound = self._bound

    def _condition(self, value):
        return value < self._bound


class LessThanEq(LessThan):
    """Less than or equal to ``upper_bound``."""
    _text = 'less than or equal to'

    def _condition(self, value):
        return value <= self._bound


class IntegerGreaterThan(GreaterThan):
    """An integer greater than ``lower_bound``."""
    _integer = True


class IntegerGreaterThanEq(GreaterThanEq):
    """An integer greater than or equal to ``lower_bound``."""
    _integer = True


class IntegerLessThan(LessThan):
    """An integer less than ``upper_bound``."""
    _integer = True


class IntegerLessThanEq(LessThanEq):
    """An integer less than or equal to ``upper_bound``."""
    _integer = True


class Positive(GreaterThan):
    """Greater than zero."""

    def __init__(self) -> None:
        super().__init__(0)


class NonNegative(GreaterThanEq):
    """Greater than or equal to zero."""

    def __init__(self) -> None:
        super().__init__(0)


class PositiveInteger(IntegerGreaterThan):
    """A positive integer."""

    def __init__(self) -> None:
        super().__init__(0)


class NonNegativeInteger(IntegerGreaterThanEq):
    """A non-negative integer."""

    def __init__(self) -> None:
        super().__init__(0)


class Simplex(Constraint):
    """The last axis lies on the simplex: ``x >= 0`` and ``x.sum(-1) == 1``."""

    def check(self, value):
        msg = ("Constraint violated: {} should be >= 0 and its rightmost dimension"
               " should sum up to 1".format(value))
        condition = np.all(value >= 0, axis=-1) & (np.abs(value.sum(-1) - 1) < 1e-6)
        return self._checked(condition, value, msg)


class LowerTriangular(Constraint):
    """Square lower-triangular matrices."""

    def check(self, value):
        msg = "Constraint violated: {} should be square lower triangular matrices".format(value)
        return self._checked(np.tril(value) == value, value, msg)


class LowerCholesky(Constraint):
    """Square lower-triangular matrices with positive diagonal entries."""

    def check(self, value):
        msg = ("Constraint violated: {} should be square lower triangular matrices"
               " with real and positive diagonal entries".format(value))
        positive_diag = np.diagonal(value, axis1=-2, axis2=-1) > 0
        rows_lower = np.all(value == np.tril(value), axis=-1)
        return self._checked(positive_diag & rows_lower, value, msg)


class PositiveDefinite(Constraint):
    """Symmetric positive-definite matrices."""

    def check(self, value):
        msg = "Constraint violated: {} should be positive definite matrices".format(value)
        condition = np.all(np.abs(value - value.mT) < 1e-5, axis=-1)
        # eigvalsh of the symmetric part: real eigenvalues (MXNet's eigvals on a symmetric matrix)
        condition = condition & (np.linalg.eigvalsh((value + value.mT) / 2) > 0)
        return self._checked(condition, value, msg)


def _all_constraints(seq) -> list:
    seq = list(seq)
    assert all(isinstance(c, Constraint) for c in seq)
    return seq


class Cat(Constraint):
    """Check consecutive blocks of ``value`` along ``axis`` (of sizes ``lengths``, default 1 each)
    with the matching entry of ``constraint_seq``; the ``np.concatenate`` counterpart."""

    def __init__(self, constraint_seq, axis=0, lengths=None):
        self._constraint_seq = _all_constraints(constraint_seq)
        count = len(self._constraint_seq)
        self._lengths = [1] * count if lengths is None else list(lengths)
        assert len(self._lengths) == count, \
            "The number of lengths {} should be equal to number of constraints {}".format(
                len(self._lengths), count)
        self._axis = axis

    def check(self, value):
        stops = onp.cumsum(self._lengths).tolist()
        starts = [0] + stops[:-1]
        checked = [c.check(np.take(value, indices=np.arange(a, b), axis=self._axis))
                   for c, a, b in zip(self._constraint_seq, starts, stops)]
        return np.concatenate(checked, self._axis)


class Stack(Constraint):
    """Check each slice of ``value`` along ``axis`` with the matching entry of ``constraint_seq``;
    the ``np.stack`` counterpart."""

    def __init__(self, constraint_seq, axis=0):
        self._constraint_seq = _all_constraints(constraint_seq)
        self._axis = axis

    def check(self, value):
        ax = self._axis
        slices = np.split(value, value.shape[ax], axis=ax)
        return np.stack([c.check(np.squeeze(piece, axis=ax))
                         for piece, c in zip(slices, self._constraint_seq)], ax)
