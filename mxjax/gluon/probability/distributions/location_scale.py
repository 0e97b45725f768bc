"""Real-valued location/scale distributions: Normal, Laplace, Cauchy, Gumbel, Uniform, StudentT."""
from __future__ import annotations

import math
from numbers import Number

import numpy as onp

from .... import numpy as np
from .constraint import Interval, Positive, Real
from .distribution import Distribution, ExponentialFamily
from .utils import (_erf, _erfinv, _gammaln, _digamma, absolute, arctan, exp, expm1,
                    log, log1p, sample_n_shape, sign, sqrt, tan)

__all__ = ['Normal', 'Laplace', 'Cauchy', 'Gumbel', 'Uniform', 'StudentT']

_EULER = float(onp.euler_gamma)


class _LocScale(Distribution):
    """Shared ``__init__``/``broadcast_to`` for the ``(loc, scale)`` families."""

    def __init__(self, loc=0.0, scale=1.0, validate_args=None):
        self.loc = loc
        self.scale = scale
        super().__init__(event_dim=0, validate_args=validate_args)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('loc', 'scale'))

    def _check(self, value):
        if self._validate_args:
            self._validate_samples(value)


class Normal(_LocScale, ExponentialFamily):
    r"""Normal distribution with mean ``loc`` and standard deviation ``scale``.

    Parameters
    ----------
    loc : Tensor or scalar, default 0
    scale : Tensor or scalar, default 1
    """
    has_grad = True
    support = Real()
    arg_constraints = {'loc': Real(), 'scale': Positive()}

    def log_prob(self, value):
        self._check(value)
        return (-((value - self.loc) ** 2) / (2 * self.variance) - log(self.scale)
                - math.log(math.sqrt(2 * math.pi)))

    def sample(self, size=None):
        return np.random.normal(self.loc, self.scale, size)

    def sample_n(self, size=None):
        return np.random.normal(self.loc, self.scale, sample_n_shape(size, self.loc, self.scale))

    def cdf(self, value):
        self._check(value)
        return 0.5 * (1 + _erf((value - self.loc) / (math.sqrt(2) * self.scale)))

    def icdf(self, value):
        return self.loc + self.scale * _erfinv(2 * value - 1) * math.sqrt(2)

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / (self.scale ** 2), -0.5 / (self.scale ** 2))

    def _log_normalizer(self, x, y):  # pylint: disable=arguments-differ
        return -0.25 * x ** 2 / y + 0.5 * log(-math.pi / y)


class Laplace(_LocScale):
    r"""Laplace distribution with location ``loc`` and scale ``scale``."""
    has_grad = False
    support = Real()
    arg_constraints = {'loc': Real(), 'scale': Positive()}

    def log_prob(self, value):
        self._check(value)
        return -log(2 * self.scale) - absolute(value - self.loc) / self.scale

    def sample(self, size=None):
        return np.random.laplace(self.loc, self.scale, size)

    def sample_n(self, size=None):
        return np.random.laplace(self.loc, self.scale, sample_n_shape(size, self.loc, self.scale))

    def cdf(self, value):
        self._check(value)
        value = value - self.loc
        return 0.5 - 0.5 * sign(value) * expm1(-absolute(value) / self.scale)

    def icdf(self, value):
        value = value - 0.5
        return self.loc - self.scale * sign(value) * log1p(-2 * absolute(value))

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    @property
    def variance(self):
        return 2 * (self.scale ** 2)

    def entropy(self):
        return 1 + log(2 * self.scale)


class Cauchy(_LocScale):
    r"""Cauchy distribution with location ``loc`` and scale ``scale``."""
    has_grad = True
    support = Real()
    arg_constraints = {'loc': Real(), 'scale': Real()}

    @property
    def mean(self):
        return onp.nan

    @property
    def variance(self):
        return onp.nan

    def sample(self, size=None):
        shape = sample_n_shape(None, self.loc, self.scale) if size is None else size
        return self.icdf(np.random.uniform(size=shape))

    def sample_n(self, size=None):
        return self.icdf(np.random.uniform(size=sample_n_shape(size, self.loc, self.scale)))

    def log_prob(self, value):
        self._check(value)
        return -math.log(math.pi) - log(self.scale) - log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value):
        self._check(value)
        return arctan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + log(self.scale)


class Gumbel(_LocScale):
    r"""Gumbel (type-I extreme value) distribution."""
    has_grad = True
    support = Real()
    arg_constraints = {'loc': Real(), 'scale': Positive()}

    def __init__(self, loc, scale=1, validate_args=None):
        super().__init__(loc, scale, validate_args)

    def log_prob(self, value):
        self._check(value)
        y = (self.loc - value) / self.scale
        return (y - exp(y)) - log(self.scale)

    def cdf(self, value):
        self._check(value)
        return exp(-exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc + self.scale * (-log(-log(value)))

    def sample(self, size=None):
        return np.random.gumbel(self.loc, self.scale, size)

    def sample_n(self, size=None):
        return np.random.gumbel(self.loc, self.scale, sample_n_shape(size, self.loc, self.scale))

    @property
    def mean(self):
        return self.loc + self.scale * _EULER

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def entropy(self):
        return log(self.scale) + (1 + _EULER)


class Uniform(Distribution):
    r"""Uniform distribution on ``[low, high)``."""
    has_grad = False
    arg_constraints = {'low': Real(), 'high': Real()}

    def __init__(self, low=0.0, high=1.0, validate_args=None):
        self.low = low
        self.high = high
        super().__init__(event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        inside = (self.low < value) * (self.high > value)
        inside = float(inside) if isinstance(inside, bool) else inside.astype(getattr(value, 'dtype', 'float32'))
        return log(inside) - log(self.high - self.low)

    def sample(self, size=None):
        return np.random.uniform(self.low, self.high, size=size)

    def sample_n(self, size=None):
        return np.random.uniform(self.low, self.high, size=sample_n_shape(size, self.low, self.high))

    @property
    def support(self):
        return Interval(self.low, self.high)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('low', 'high'))

    def cdf(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return np.clip((value - self.low) / (self.high - self.low), 0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def entropy(self):
        return log(self.high - self.low)


class StudentT(Distribution):
    r"""Student's t distribution with ``df`` degrees of freedom, location and scale."""
    support = Real()
    arg_constraints = {'df': Positive(), 'loc': Real(), 'scale': Real()}

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df = df
        self.loc = loc
        self.scale = scale
        super().__init__(event_dim=0, validate_args=validate_args)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('df', 'loc', 'scale'))

    @property
    def mean(self):
        if isinstance(self.df, Number):
            return onp.nan if self.df <= 1 else self.loc
        return np.where(self.df <= 1, onp.nan, self.loc)

    @property
    def variance(self):
        df = self.df
        if isinstance(df, Number):
            return onp.nan if df <= 1 else (onp.inf if df <= 2 else self.scale ** 2 * df / (df - 2))
        v = self.scale ** 2 * df / (df - 2)
        v = np.where(df <= 2, onp.inf, v)
        return np.where(df <= 1, onp.nan, v)

    def sample(self, size=None):
        shape = sample_n_shape(None, self.df, self.loc, self.scale) if size is None else size
        x = np.random.normal(size=shape)
        z = np.random.chisquare(self.df, size=shape)
        return self.loc + x * sqrt(self.df / z) * self.scale

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self.df, self.loc, self.scale))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        df = self.df
        value = (value - self.loc) / self.scale
        return (_gammaln((df + 1) / 2) - _gammaln(df / 2) - log(self.scale) - 0.5 * log(df * math.pi)
                - 0.5 * (df + 1) * log1p(value ** 2 / df))

    def entropy(self):
        df = self.df
        lbeta = _gammaln(0.5 * df) + math.lgamma(0.5) - _gammaln(0.5 * (df + 1))
        return (log(self.scale) + 0.5 * (df + 1) * (_digamma(0.5 * (df + 1)) - _digamma(0.5 * df))
                + 0.5 * log(df) + lbeta)
