"""Constraints: the region where a parameter or a sample is valid.

``check(value)`` returns ``value`` unchanged (multiplied by 1, so it stays in the graph)
when it satisfies the constraint, and raises ``ValueError("Constraint violated: ...")``
otherwise, as MXNet does.
"""
from __future__ import annotations

from typing import Any

from .... import numpy as np
from .utils import constraint_check

__all__ = ["Constraint", "Real", "Boolean",
           "Interval", "OpenInterval", "HalfOpenInterval", "UnitInterval",
           "IntegerInterval", "IntegerOpenInterval", "IntegerHalfOpenInterval",
           "GreaterThan", "GreaterThanEq", "IntegerGreaterThan", "IntegerGreaterThanEq",
           "LessThan", "LessThanEq", "IntegerLessThan", "IntegerLessThanEq",
           "Positive", "NonNegative", "PositiveInteger", "NonNegativeInteger",
           "Simplex", "LowerTriangular", "LowerCholesky", "PositiveDefinite",
           "Cat", "Stack"]


def _is_integer(value: Any) -> Any:
    return value % 1 == 0


class Constraint:
    """Base class for constraints: a region over which a variable is valid."""

    def check(self, value: Any) -> Any:
        """Return ``value`` when it satisfies the constraint, else raise ``ValueError``."""
        raise NotImplementedError

    def _checked(self, condition: Any, value: Any, err_msg: str) -> Any:
        return constraint_check()(condition, err_msg) * value


class _Dependent(Constraint):
    """Placeholder for variables whose support depends on other variables."""

    def check(self, value: Any) -> Any:
        raise ValueError('Cannot validate dependent constraint')


def is_dependent(constraint: Any) -> bool:
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that reads as a ``_Dependent`` constraint on the class."""


dependent_property = _DependentProperty


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
        self._lower_bound = lower_bound
        self._upper_bound = upper_bound

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
        self._lower_bound = lower_bound

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
        self._upper_bound = upper_bound

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
        condition = np.all(np.tril(value) == value, axis=-1)
        condition = condition & (np.diagonal(value, axis1=-2, axis2=-1) > 0)
        return self._checked(condition, value, msg)


class PositiveDefinite(Constraint):
    """Symmetric positive-definite matrices."""

    def check(self, value):
        msg = "Constraint violated: {} should be positive definite matrices".format(value)
        condition = np.all(np.abs(value - value.mT) < 1e-5, axis=-1)
        # eigvalsh of the symmetric part: real eigenvalues (MXNet's eigvals on a symmetric matrix)
        condition = condition & (np.linalg.eigvalsh((value + value.mT) / 2) > 0)
        return self._checked(condition, value, msg)


class Cat(Constraint):
    """Apply ``constraint_seq`` to consecutive slices of ``lengths`` along ``axis``
    (compatible with ``np.concatenate``)."""

    def __init__(self, constraint_seq, axis=0, lengths=None):
        assert all(isinstance(c, Constraint) for c in constraint_seq)
        self._constraint_seq = list(constraint_seq)
        if lengths is None:
            lengths = [1] * len(self._constraint_seq)
        self._lengths = list(lengths)
        assert len(self._lengths) == len(self._constraint_seq), \
            "The number of lengths {} should be equal to number of constraints {}".format(
                len(self._lengths), len(self._constraint_seq))
        self._axis = axis

    def check(self, value):
        parts, start = [], 0
        for length, constraint in zip(self._lengths, self._constraint_seq):
            part = np.take(value, indices=np.arange(start, start + length), axis=self._axis)
            parts.append(constraint.check(part))
            start = start + length
        return np.concatenate(parts, self._axis)


class Stack(Constraint):
    """Apply ``constraint_seq`` to the slices of ``value`` along ``axis``
    (compatible with ``np.stack``)."""

    def __init__(self, constraint_seq, axis=0):
        assert all(isinstance(c, Constraint) for c in constraint_seq)
        self._constraint_seq = list(constraint_seq)
        self._axis = axis

    def check(self, value):
        size = value.shape[self._axis]
        pieces = np.split(value, size, axis=self._axis)
        pieces = [c.check(np.squeeze(v, axis=self._axis)) for v, c in zip(pieces, self._constraint_seq)]
        return np.stack(pieces, self._axis)
