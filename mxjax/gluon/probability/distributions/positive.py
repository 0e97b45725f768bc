"""Distributions on the positive half-line and on the simplex:
Exponential, Gamma, Chi2, Beta, Dirichlet, FisherSnedecor."""
from __future__ import annotations

from numbers import Number

import numpy as onp

from .._constraint import Positive, Real, Simplex, UnitInterval
from .._utils import (_clip_float_eps, _clip_prob, _digamma, _gammaln, as_tuple, cached_property, exp, log,
                      log1p, sample_n_shape, shape_of)
from .... import numpy as np
from .distribution import Distribution, ExponentialFamily

__all__ = ['Exponential', 'Gamma', 'Chi2', 'Beta', 'Dirichlet', 'FisherSnedecor']


def _in_support(dist, value):
    """Run the support check when the distribution validates its inputs; hand back ``value``."""
    if dist._validate_args:
        dist._validate_samples(value)
    return value


def _log_beta(a, b):
    """``log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)``."""
    return _gammaln(a) + _gammaln(b) - _gammaln(a + b)


def _nan_where_at_most(x, bound):
    """``x`` with entries ``<= bound`` replaced by NaN (scalars stay scalars)."""
    if isinstance(x, Number):
        return onp.nan if x <= bound else x
    return np.where(x <= bound, onp.nan, x)


class Exponential(ExponentialFamily):
    r"""Exponential law with mean ``scale``; the rate is ``1 / scale``."""
    has_grad = True
    support = Positive()
    arg_constraints = dict(scale=Positive())
    _batch_params = ('scale',)

    def __init__(self, scale=1.0, validate_args=None):
        self.scale = scale
        super().__init__(event_dim=0, validate_args=validate_args)

    @cached_property
    def rate(self):
        return 1 / self.scale

    mean = property(lambda self: self.scale)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale ** 2)

    def sample(self, size=None):
        return np.random.exponential(self.scale, size=size)

    def log_prob(self, value):
        x = _in_support(self, value)
        return -x * self.rate + log(self.rate)

    def cdf(self, value):
        x = _in_support(self, value)
        return 1 - exp(-x / self.scale)

    def icdf(self, value):
        return log1p(-value) * -self.scale

    def entropy(self):
        return log(self.scale) + 1.0

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):  # pylint: disable=arguments-differ
        return -log(-x)


class Gamma(ExponentialFamily):
    r"""Gamma law with shape ``k`` and scale ``theta``: density ``x^(k-1) e^(-x/theta) / (Gamma(k) theta^k)``."""
    has_grad = False
    support = Real()  # MXNet declares the reals; log_prob answers -inf / nan below zero
    arg_constraints = dict(shape=Positive(), scale=Positive())
    _batch_params = ('shape', 'scale')

    def __init__(self, shape, scale=1.0, validate_args=None):
        self.shape, self.scale = shape, scale
        super().__init__(event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        x = _in_support(self, value)
        k, theta = self.shape, self.scale
        return (k - 1) * log(x) - x / theta - k * log(theta) - _gammaln(k)

    def _draw(self, size):
        # unit-scale gamma, stretched
        return self.scale * np.random.gamma(self.shape, 1, size)

    def sample(self, size=None):
        return self._draw(size)

    mean = property(lambda self: self.scale * self.shape)
    variance = property(lambda self: self.shape * self.scale * self.scale)

    def entropy(self):
        k = self.shape
        return k + _gammaln(k) + log(self.scale) - (k - 1) * _digamma(k)

    @property
    def _natural_params(self):
        return (self.shape - 1, -1 / self.scale)


class Chi2(Gamma):
    r"""Chi-squared law with ``df`` degrees of freedom, i.e. ``Gamma(df / 2, 2)``."""
    arg_constraints = dict(df=Positive())

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 2, validate_args)

    @property
    def df(self):
        return 2 * self.shape


class Beta(ExponentialFamily):
    r"""Beta law on ``[0, 1]`` with concentrations ``alpha`` and ``beta``."""
    has_grad = False
    support = UnitInterval()
    arg_constraints = dict(alpha=Positive(), beta=Positive())
    _batch_params = ('alpha', 'beta')

    def __init__(self, alpha, beta, validate_args=None):
        self.alpha, self.beta = alpha, beta
        super().__init__(event_dim=0, validate_args=validate_args)

    def sample(self, size=None):
        # X / (X + Y) with independent Gamma(alpha), Gamma(beta) draws
        ga = np.random.gamma(self.alpha, 1, size=size)
        gb = np.random.gamma(self.beta, 1, size=size)
        return _clip_prob(ga / (gb + ga))

    @property
    def mean(self):
        return self.alpha / (self.beta + self.alpha)

    @property
    def variance(self):
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total * total * (1 + total))

    def log_prob(self, value):
        x = _in_support(self, value)
        return (self.alpha - 1) * log(x) + (self.beta - 1) * log1p(-x) - _log_beta(self.alpha, self.beta)

    def entropy(self):
        a, b = self.alpha, self.beta
        return (_log_beta(a, b) + (a + b - 2) * _digamma(a + b)
                - (a - 1) * _digamma(a) - (b - 1) * _digamma(b))


class Dirichlet(ExponentialFamily):
    r"""Dirichlet law on the simplex with concentration ``alpha`` (categories on the last axis)."""
    has_grad = False
    support = Simplex()
    arg_constraints = dict(alpha=Positive())

    def __init__(self, alpha, validate_args=None):
        self.alpha = alpha
        super().__init__(event_dim=1, validate_args=validate_args)

    def _k(self):
        return shape_of(self.alpha)[-1:]

    def _normalised_gammas(self, shape):
        g = np.random.gamma(self.alpha, 1, shape)
        return _clip_float_eps(g / g.sum(-1, keepdims=True))

    def sample(self, size=None):
        return self._normalised_gammas(None if size is None else as_tuple(size) + self._k())

    def sample_n(self, size=None):
        return self.sample() if size is None else self._normalised_gammas(sample_n_shape(size, self.alpha))

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('alpha',), self._k())

    def log_prob(self, value):
        x = _in_support(self, value)
        a = self.alpha
        log_norm = _gammaln(a).sum(-1) - _gammaln(a.sum(-1))  # log of the multivariate beta function
        return ((a - 1.0) * log(x)).sum(-1) - log_norm

    @property
    def mean(self):
        return self.alpha / self.alpha.sum(-1, keepdims=True)

    @property
    def variance(self):
        a0 = self.alpha.sum(-1, keepdims=True)
        m = self.alpha / a0
        return m * (1 - m) / (a0 + 1)

    def entropy(self):
        a = self.alpha
        a0 = a.sum(-1)
        k = a.shape[-1]
        log_norm = _gammaln(a).sum(-1) - _gammaln(a0)
        return log_norm + (a0 - k) * _digamma(a0) - ((a - 1) * _digamma(a)).sum(-1)


class FisherSnedecor(Distribution):
    r"""Fisher-Snedecor (F) law with ``df1`` and ``df2`` degrees of freedom."""
    support = Positive()
    arg_constraints = dict(df1=Positive(), df2=Positive())
    _batch_params = ('df1', 'df2')

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = df1, df2
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        d2 = _nan_where_at_most(self.df2, 2)  # undefined for df2 <= 2
        return d2 / (d2 - 2)

    @property
    def variance(self):
        d1, d2 = self.df1, _nan_where_at_most(self.df2, 4)  # undefined for df2 <= 4
        return 2 * d2 * d2 * (d1 + d2 - 2) / (d1 * (d2 - 4) * (d2 - 2) ** 2)

    def sample(self, size=None):
        # ratio of two chi-squares, each divided by its degrees of freedom
        shape = size if size is not None else sample_n_shape(None, self.df1, self.df2)
        num = np.random.chisquare(self.df1, size=shape) / self.df1
        den = np.random.chisquare(self.df2, size=shape) / self.df2
        return num / den

    def log_prob(self, value):
        x = _in_support(self, value)
        h1, h2 = self.df1 / 2, self.df2 / 2
        r = self.df1 / self.df2
        return (h1 * log(r) + (h1 - 1) * log(x) - (h1 + h2) * log1p(r * x)
                - _log_beta(h1, h2))
