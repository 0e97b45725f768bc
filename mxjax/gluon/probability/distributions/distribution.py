"""``Distribution`` (the base class) and ``ExponentialFamily``."""
from __future__ import annotations

from numbers import Number
from typing import Any

from .._utils import cached_property, exp, sample_n_shape, sqrt
from .... import numpy as np

__all__ = ['Distribution', 'ExponentialFamily']


class Distribution:
    r"""Base class for distributions.

    Parameters
    ----------
    event_dim : int, default None
        Number of right-most axes of a sample that form one event.
    validate_args : bool, default None
        Whether to check the parameters (and the values given to ``log_prob``/``cdf``)
        against ``arg_constraints`` and ``support``; ``None`` keeps the class default
        (see ``set_default_validate_args``).
    """
    has_grad = False  # whether ``sample`` has a pathwise gradient
    support = None
    has_enumerate_support = False
    arg_constraints: dict = {}
    _validate_args = False

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        if value not in [True, False]:
            raise ValueError("set_default_validate_args: expected True or False, got {!r}".format(value))
        Distribution._validate_args = value

    def __init__(self, event_dim: int | None = None, validate_args: bool | None = None) -> None:
        self.event_dim = event_dim
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), cached_property):
                    continue  # the other parameterization was given; this one is derived
                checked = constraint.check(getattr(self, param))
                if not isinstance(getattr(type(self), param, None), property):  # Chi2.df is read-only
                    setattr(self, param, checked)
        super().__init__()

    def log_prob(self, value: Any) -> Any:
        """Log of the probability density/mass function at ``value``."""
        raise NotImplementedError

    def pdf(self, value: Any) -> Any:
        """Probability density/mass function at ``value``."""
        return exp(self.log_prob(value))

    def cdf(self, value: Any) -> Any:
        """Cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Any) -> Any:
        """Inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def sample(self, size: Any = None) -> Any:
        """Draw samples of shape ``size`` (``None``: the batch shape)."""
        raise NotImplementedError

    # Names of the (elementwise) parameters; when a subclass lists them, ``sample_n`` and
    # ``broadcast_to`` below work without further code.
    _batch_params: tuple = ()

    def _given_params(self) -> list:
        return [self.__dict__[k] for k in self._batch_params if k in self.__dict__]

    def sample_n(self, size: Any = None) -> Any:
        """Draw samples of shape ``size + batch_shape``."""
        if not self._batch_params:
            raise NotImplementedError
        return self.sample(sample_n_shape(size, *self._given_params()))

    def broadcast_to(self, batch_shape: tuple) -> "Distribution":
        """A new distribution with its parameters broadcast to ``batch_shape``."""
        if not self._batch_params:
            raise NotImplementedError
        return self._broadcast_new(batch_shape, self._batch_params)

    def enumerate_support(self) -> Any:
        """All values in the support of a discrete distribution."""
        raise NotImplementedError

    @property
    def mean(self) -> Any:
        raise NotImplementedError

    @property
    def variance(self) -> Any:
        raise NotImplementedError

    @property
    def stddev(self) -> Any:
        return sqrt(self.variance)

    def entropy(self) -> Any:
        raise NotImplementedError

    def perplexity(self) -> Any:
        """``exp(entropy())``."""
        return exp(self.entropy())

    def _broadcast_new(self, batch_shape: tuple, names: tuple, event_shape: tuple = ()) -> "Distribution":
        """``broadcast_to``'s common body: copy ``self`` with ``names`` broadcast."""
        new = self.__new__(type(self))
        for name in names:
            if name in self.__dict__:
                setattr(new, name, np.broadcast_to(self.__dict__[name], tuple(batch_shape) + event_shape))
        for key, value in self.__dict__.items():
            if key not in names and key not in new.__dict__ and not isinstance(
                    getattr(type(self), key, None), cached_property):
                new.__dict__[key] = value
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        parts = []
        for k in self.arg_constraints:
            v = self.__dict__.get(k)
            shape = None if v is None else (() if isinstance(v, Number) else tuple(v.shape))
            parts.append('{}: size {}'.format(k, shape))
        parts.append('event_dim: {}'.format(self.event_dim))
        return '{}({})'.format(type(self).__name__, ', '.join(parts))

    def _validate_samples(self, value: Any) -> Any:
        """Check that ``value`` lies in ``self.support``."""
        return self.support.check(value)


class ExponentialFamily(Distribution):
    r"""Distributions with density ``exp(<t(x), theta> - F(theta) + k(x))``."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        raise NotImplementedError

    def _mean_carrier_measure(self, x: Any) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        raise NotImplementedError
