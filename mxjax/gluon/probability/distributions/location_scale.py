"""Distributions on the real line parametrised by a location and a scale (plus Uniform and StudentT):
Normal, Laplace, Cauchy, Gumbel, Uniform, StudentT."""
from __future__ import annotations

import math
from numbers import Number

import numpy as onp

from .._constraint import Interval, Positive, Real
from .._utils import (_digamma, _erf, _erfinv, _gammaln, absolute, arctan, exp, expm1, log, log1p,
                      sample_n_shape, sign, sqrt, tan)
from .... import numpy as np
from .distribution import Distribution, ExponentialFamily

__all__ = ['Normal', 'Laplace', 'Cauchy', 'Gumbel', 'Uniform', 'StudentT']

_GAMMA_E = float(onp.euler_gamma)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT2 = math.sqrt(2.0)


def _validated(dist, value):
    if dist._validate_args:
        dist._validate_samples(value)
    return value


class _LocScale(Distribution):
    """Common state of the ``(loc, scale)`` families; ``_rng`` names the ``np.random`` sampler."""
    _rng: str = ''
    _batch_params = ('loc', 'scale')

    def __init__(self, loc=0.0, scale=1.0, validate_args=None):
        self.loc, self.scale = loc, scale
        super().__init__(event_dim=0, validate_args=validate_args)

    def _z(self, value):
        """Validated standardised value ``(value - loc) / scale``."""
        return (_validated(self, value) - self.loc) / self.scale

    def _from_z(self, z):
        return z * self.scale + self.loc

    def sample(self, size=None):
        return getattr(np.random, self._rng)(self.loc, self.scale, size)


class Normal(_LocScale, ExponentialFamily):
    r"""Gaussian with mean ``loc`` and standard deviation ``scale``.

    Parameters
    ----------
    loc : array or number, default 0 -- the mean
    scale : array or number, default 1 -- the standard deviation
    """
    has_grad = True
    support = Real()
    arg_constraints = dict(loc=Real(), scale=Positive())
    _rng = 'normal'

    def log_prob(self, value):
        z = self._z(value)
        return -0.5 * z * z - log(self.scale) - _LOG_SQRT_2PI

    def cdf(self, value):
        return 0.5 + 0.5 * _erf(self._z(value) / _SQRT2)

    def icdf(self, value):
        return self._from_z(_SQRT2 * _erfinv(2 * value - 1))

    mean = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale ** 2)

    def entropy(self):
        return log(self.scale) + _LOG_SQRT_2PI + 0.5

    @property
    def _natural_params(self):
        precision = 1 / self.scale ** 2
        return (self.loc * precision, -0.5 * precision)

    def _log_normalizer(self, x, y):  # pylint: disable=arguments-differ
        # F(eta1, eta2) = -eta1^2 / (4 eta2) + log(pi / -eta2) / 2
        return 0.5 * log(math.pi / -y) - x * x / (4 * y)


class Laplace(_LocScale):
    r"""Double-exponential law with location ``loc`` and scale ``scale``."""
    has_grad = False
    support = Real()
    arg_constraints = dict(loc=Real(), scale=Positive())
    _rng = 'laplace'

    def log_prob(self, value):
        return -absolute(self._z(value)) - log(2 * self.scale)

    def cdf(self, value):
        z = self._z(value)
        return 0.5 * (1 - sign(z) * expm1(-absolute(z)))

    def icdf(self, value):
        u = value - 0.5
        return self._from_z(-sign(u) * log1p(-2 * absolute(u)))

    mean = property(lambda self: self.loc)
    stddev = property(lambda self: _SQRT2 * self.scale)
    variance = property(lambda self: 2 * self.scale ** 2)

    def entropy(self):
        return log(2 * self.scale) + 1


class Cauchy(_LocScale):
    r"""Cauchy (Lorentz) law with location ``loc`` and scale ``scale``."""
    has_grad = True
    support = Real()
    arg_constraints = dict(loc=Real(), scale=Real())

    # no finite moments
    mean = property(lambda self: onp.nan)
    variance = property(lambda self: onp.nan)

    def sample(self, size=None):
        if size is None:
            size = sample_n_shape(None, self.loc, self.scale)
        return self.icdf(np.random.uniform(size=size))  # inverse-cdf sampling

    def log_prob(self, value):
        z = self._z(value)
        return -(log1p(z * z) + log(self.scale) + math.log(math.pi))

    def cdf(self, value):
        return 0.5 + arctan(self._z(value)) / math.pi

    def icdf(self, value):
        return self._from_z(tan((value - 0.5) * math.pi))

    def entropy(self):
        return log(self.scale) + math.log(4 * math.pi)


class Gumbel(_LocScale):
    r"""Gumbel (extreme value type I) law."""
    has_grad = True
    support = Real()
    arg_constraints = dict(loc=Real(), scale=Positive())
    _rng = 'gumbel'

    def __init__(self, loc, scale=1, validate_args=None):
        super().__init__(loc, scale, validate_args)

    def log_prob(self, value):
        z = self._z(value)
        return -(z + exp(-z)) - log(self.scale)

    def cdf(self, value):
        return exp(-exp(-self._z(value)))

    def icdf(self, value):
        return self._from_z(-log(-log(value)))

    @property
    def mean(self):
        return self._from_z(_GAMMA_E)

    @property
    def stddev(self):
        return self.scale * math.pi / math.sqrt(6)

    @property
    def variance(self):
        return self.stddev ** 2

    def entropy(self):
        return 1 + _GAMMA_E + log(self.scale)


class Uniform(Distribution):
    r"""Flat law on ``[low, high)``."""
    has_grad = False
    arg_constraints = dict(low=Real(), high=Real())
    _batch_params = ('low', 'high')

    def __init__(self, low=0.0, high=1.0, validate_args=None):
        self.low, self.high = low, high
        super().__init__(event_dim=0, validate_args=validate_args)

    def _width(self):
        return self.high - self.low

    def log_prob(self, value):
        value = _validated(self, value)
        mask = (value > self.low) * (value < self.high)
        if isinstance(mask, bool):
            mask = float(mask)
        else:
            mask = mask.astype(getattr(value, 'dtype', 'float32'))
        return log(mask) - log(self._width())  # -inf outside the interval

    def sample(self, size=None):
        return np.random.uniform(self.low, self.high, size=size)

    @property
    def support(self):
        return Interval(self.low, self.high)

    def cdf(self, value):
        frac = (_validated(self, value) - self.low) / self._width()
        return np.clip(frac, 0, 1)

    def icdf(self, value):
        return self.low + self._width() * value

    mean = property(lambda self: 0.5 * (self.low + self.high))
    variance = property(lambda self: self._width() ** 2 / 12)

    def entropy(self):
        return log(self._width())


def _by_df(df, threshold, below, otherwise):
    """``below`` where ``df <= threshold``, else ``otherwise`` (scalar or elementwise)."""
    if isinstance(df, Number):
        return below if df <= threshold else otherwise
    return np.where(df <= threshold, below, otherwise)


class StudentT(Distribution):
    r"""Student's t law with ``df`` degrees of freedom, shifted by ``loc`` and stretched by ``scale``."""
    support = Real()
    arg_constraints = dict(df=Positive(), loc=Real(), scale=Real())
    _batch_params = ('df', 'loc', 'scale')

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = df, loc, scale
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return _by_df(self.df, 1, onp.nan, self.loc)  # undefined for df <= 1

    @property
    def variance(self):
        df = self.df
        if isinstance(df, Number) and df <= 2:
            return onp.nan if df <= 1 else onp.inf
        finite = df * self.scale ** 2 / (df - 2)
        return _by_df(df, 1, onp.nan, _by_df(df, 2, onp.inf, finite))

    def sample(self, size=None):
        # loc + scale * N / sqrt(V / df), with N standard normal and V ~ chi2(df)
        if size is None:
            size = sample_n_shape(None, self.df, self.loc, self.scale)
        normal = np.random.normal(size=size)
        chi2 = np.random.chisquare(self.df, size=size)
        return self.loc + self.scale * normal * sqrt(self.df / chi2)

    def _log_beta_half(self):
        """``log B(df / 2, 1 / 2)``."""
        half = 0.5 * self.df
        return _gammaln(half) + math.lgamma(0.5) - _gammaln(half + 0.5)

    def log_prob(self, value):
        z = (_validated(self, value) - self.loc) / self.scale
        df = self.df
        return (-0.5 * (df + 1) * log1p(z * z / df) - 0.5 * log(df) - log(self.scale)
                - self._log_beta_half())

    def entropy(self):
        df = self.df
        psi_gap = _digamma(0.5 * (df + 1)) - _digamma(0.5 * df)
        return log(self.scale) + 0.5 * log(df) + self._log_beta_half() + 0.5 * (df + 1) * psi_gap
