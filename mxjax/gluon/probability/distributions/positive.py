"""Distributions on positive reals and the simplex: Exponential, Gamma, Chi2, Beta, Dirichlet,
FisherSnedecor."""
from __future__ import annotations

from numbers import Number

import numpy as onp

from .... import numpy as np
from .constraint import Positive, Real, Simplex, UnitInterval
from .distribution import Distribution, ExponentialFamily
from .utils import (_clip_float_eps, _clip_prob, _digamma, _gammaln, as_tuple, cached_property, exp, log,
                    log1p, sample_n_shape, shape_of)

__all__ = ['Exponential', 'Gamma', 'Chi2', 'Beta', 'Dirichlet', 'FisherSnedecor']


class Exponential(ExponentialFamily):
    r"""Exponential distribution with mean ``scale`` (rate ``1 / scale``)."""
    has_grad = True
    support = Positive()
    arg_constraints = {'scale': Positive()}

    def __init__(self, scale=1.0, validate_args=None):
        self.scale = scale
        super().__init__(event_dim=0, validate_args=validate_args)

    @cached_property
    def rate(self):
        return 1 / self.scale

    @property
    def mean(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    @property
    def stddev(self):
        return self.scale

    def sample(self, size=None):
        return np.random.exponential(self.scale, size=size)

    def sample_n(self, size=None):
        return np.random.exponential(self.scale, size=sample_n_shape(size, self.scale))

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('scale',))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value):
        return -self.scale * log1p(-value)

    def entropy(self):
        return 1.0 + log(self.scale)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):  # pylint: disable=arguments-differ
        return -log(-x)


class Gamma(ExponentialFamily):
    r"""Gamma distribution with shape ``shape`` and scale ``scale``."""
    has_grad = False
    support = Real()  # as MXNet (log_prob is -inf/nan below 0)
    arg_constraints = {'shape': Positive(), 'scale': Positive()}

    def __init__(self, shape, scale=1.0, validate_args=None):
        self.shape = shape
        self.scale = scale
        super().__init__(event_dim=0, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        a, b = self.shape, 1 / self.scale
        return a * log(b) + (a - 1) * log(value) - b * value - _gammaln(a)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('shape', 'scale'))

    def sample(self, size=None):
        return np.random.gamma(self.shape, 1, size) * self.scale

    def sample_n(self, size=None):
        return np.random.gamma(self.shape, 1, sample_n_shape(size, self.shape, self.scale)) * self.scale

    @property
    def mean(self):
        return self.shape * self.scale

    @property
    def variance(self):
        return self.shape * (self.scale ** 2)

    def entropy(self):
        return (self.shape + log(self.scale) + _gammaln(self.shape)
                + (1 - self.shape) * _digamma(self.shape))

    @property
    def _natural_params(self):
        return (self.shape - 1, -1 / self.scale)


class Chi2(Gamma):
    r"""Chi-squared distribution with ``df`` degrees of freedom (``Gamma(df / 2, 2)``)."""
    arg_constraints = {'df': Positive()}

    def __init__(self, df, validate_args=None):
        super().__init__(df / 2, 2, validate_args)

    @property
    def df(self):
        return self.shape * 2


class Beta(ExponentialFamily):
    r"""Beta distribution with concentrations ``alpha`` and ``beta``."""
    has_grad = False
    support = UnitInterval()
    arg_constraints = {'alpha': Positive(), 'beta': Positive()}

    def __init__(self, alpha, beta, validate_args=None):
        self.alpha = alpha
        self.beta = beta
        super().__init__(event_dim=0, validate_args=validate_args)

    def sample(self, size=None):
        x = np.random.gamma(self.alpha, 1, size=size)
        y = np.random.gamma(self.beta, 1, size=size)
        return _clip_prob(x / (x + y))

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self.alpha, self.beta))

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('alpha', 'beta'))

    @property
    def mean(self):
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self):
        a, b = self.alpha, self.beta
        return a * b / ((a + b) ** 2 * (a + b + 1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        a, b = self.alpha, self.beta
        lgamma_term = _gammaln(a + b) - _gammaln(a) - _gammaln(b)
        return (a - 1) * log(value) + (b - 1) * log1p(-value) + lgamma_term

    def entropy(self):
        a, b = self.alpha, self.beta
        lgamma_term = _gammaln(a + b) - _gammaln(a) - _gammaln(b)
        return (-lgamma_term - (a - 1) * _digamma(a) - (b - 1) * _digamma(b)
                + (a + b - 2) * _digamma(a + b))


class Dirichlet(ExponentialFamily):
    r"""Dirichlet distribution with concentration ``alpha`` (last axis: the categories)."""
    has_grad = False
    support = Simplex()
    arg_constraints = {'alpha': Positive()}

    def __init__(self, alpha, validate_args=None):
        self.alpha = alpha
        super().__init__(event_dim=1, validate_args=validate_args)

    def _from_gamma(self, shape):
        gamma_samples = np.random.gamma(self.alpha, 1, shape)
        return _clip_float_eps(gamma_samples / gamma_samples.sum(-1, keepdims=True))

    def sample(self, size=None):
        if size is None:
            return self._from_gamma(None)
        return self._from_gamma(as_tuple(size) + shape_of(self.alpha)[-1:])

    def sample_n(self, size=None):
        if size is None:
            return self.sample()
        return self._from_gamma(sample_n_shape(size, self.alpha))

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('alpha',), shape_of(self.alpha)[-1:])

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        alpha = self.alpha
        return ((log(value) * (alpha - 1.0)).sum(-1) + _gammaln(alpha.sum(-1))
                - _gammaln(alpha).sum(-1))

    @property
    def mean(self):
        return self.alpha / self.alpha.sum(-1, keepdims=True)

    @property
    def variance(self):
        a = self.alpha
        s = a.sum(-1, keepdims=True)
        return a * (s - a) / ((s + 1) * s ** 2)

    def entropy(self):
        a = self.alpha
        a0 = a.sum(-1)
        log_b_alpha = _gammaln(a).sum(-1) - _gammaln(a0)
        return (log_b_alpha + (a - 1).sum(-1) * _digamma(a0)
                - ((a - 1) * _digamma(a)).sum(-1))


class FisherSnedecor(Distribution):
    r"""Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom."""
    support = Positive()
    arg_constraints = {'df1': Positive(), 'df2': Positive()}

    def __init__(self, df1, df2, validate_args=None):
        self.df1 = df1
        self.df2 = df2
        super().__init__(event_dim=0, validate_args=validate_args)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('df1', 'df2'))

    @property
    def mean(self):
        if isinstance(self.df2, Number):
            return onp.nan if self.df2 <= 2 else self.df2 / (self.df2 - 2)
        df2 = np.where(self.df2 <= 2, onp.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        if isinstance(df2, Number):
            df2 = onp.nan if df2 <= 4 else df2
        else:
            df2 = np.where(df2 <= 4, onp.nan, df2)
        return 2 * df2 ** 2 * (df1 + df2 - 2) / (df1 * (df2 - 2) ** 2 * (df2 - 4))

    def sample(self, size=None):
        shape = sample_n_shape(None, self.df1, self.df2) if size is None else size
        x1 = np.random.chisquare(self.df1, size=shape) / self.df1
        x2 = np.random.chisquare(self.df2, size=shape) / self.df2
        return x1 / x2

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self.df1, self.df2))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        ct1, ct2, ct3 = self.df1 / 2, self.df2 / 2, self.df1 / self.df2
        t1 = _gammaln(ct1 + ct2) - _gammaln(ct1) - _gammaln(ct2)
        t2 = log(ct3) * ct1 + (ct1 - 1) * log(value)
        t3 = (ct1 + ct2) * log1p(ct3 * value)
        return t1 + t2 - t3
