"""Distributions built from others: TransformedDistribution, Independent, and the families MXNet
defines through transformations (HalfNormal, HalfCauchy, Pareto, Weibull, RelaxedBernoulli,
RelaxedOneHotCategorical)."""
from __future__ import annotations

import math

import numpy as onp

from .... import numpy as np
from .... import numpy_extension as npx
from ..transformation import (AbsTransform, AffineTransform, ExpTransform, PowerTransform, SigmoidTransform,
                              Transformation)
from .constraint import GreaterThan, Interval, OpenInterval, Positive, Real, Simplex, dependent_property
from .discrete import _check_num_events, _ProbLogit
from .distribution import Distribution
from .location_scale import Cauchy, Normal
from .positive import Exponential
from .utils import _gammaln, as_tuple, exp, log, log1p, sample_n_shape, shape_of, sum_right_most

__all__ = ['TransformedDistribution', 'Independent', 'HalfNormal', 'HalfCauchy', 'Pareto', 'Weibull',
           'RelaxedBernoulli', 'RelaxedOneHotCategorical']


class TransformedDistribution(Distribution):
    """``T_n(...T_1(X))`` for ``X ~ base_dist`` and ``transforms = [T_1, ..., T_n]``."""

    def __init__(self, base_dist, transforms, validate_args=None):
        self._base_dist = base_dist
        if isinstance(transforms, Transformation):
            transforms = [transforms]
        self._transforms = transforms
        event_dim = max([base_dist.event_dim] + [t.event_dim for t in transforms])
        super().__init__(event_dim=event_dim, validate_args=validate_args)

    def _forward(self, x):
        for t in self._transforms:
            x = t(x)
        return x

    def sample(self, size=None):
        return self._forward(self._base_dist.sample(size))

    def sample_n(self, size=None):
        return self._forward(self._base_dist.sample_n(size))

    def log_prob(self, value):
        """``log p(y) = log p_base(x) - log|dy/dx|`` with ``x = T^-1(y)``."""
        log_prob = 0.0
        y = value
        for t in reversed(self._transforms):
            x = t.inv(y)
            log_prob = log_prob - sum_right_most(t.log_det_jacobian(x, y), self.event_dim - t.event_dim)
            y = x
        return log_prob + sum_right_most(self._base_dist.log_prob(y),
                                         self.event_dim - self._base_dist.event_dim)

    def cdf(self, value):
        sign = 1
        for t in reversed(self._transforms):
            value = t.inv(value)
            sign = sign * t.sign
        return sign * (self._base_dist.cdf(value) - 0.5) + 0.5

    def icdf(self, value):
        sign = 1
        for t in self._transforms:
            sign = sign * t.sign
        return self._forward(self._base_dist.icdf(sign * (value - 0.5) + 0.5))


class Independent(Distribution):
    r"""Reinterpret the right-most ``reinterpreted_batch_ndims`` batch axes of
    ``base_distribution`` as event axes."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(event_dim=reinterpreted_batch_ndims + base_distribution.event_dim,
                         validate_args=validate_args)

    def broadcast_to(self, batch_shape):
        new = self.__new__(type(self))
        base = self.base_dist
        full = onp.broadcast_shapes(shape_of(base.mean), shape_of(base.variance))
        base_batch = tuple(full[:len(full) - (base.event_dim or 0)])
        tail = base_batch[len(base_batch) - self.reinterpreted_batch_ndims:]
        new.base_dist = base.broadcast_to(tuple(batch_shape) + tail)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        new.event_dim = self.event_dim
        new._validate_args = self._validate_args
        return new

    @property
    def has_enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @dependent_property
    def support(self):
        return self.base_dist.support

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, size=None):
        return self.base_dist.sample(size)

    def sample_n(self, size):
        return self.base_dist.sample_n(size)

    def log_prob(self, value):
        return sum_right_most(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_right_most(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support()


class _Half(TransformedDistribution):
    """``|X|`` for a distribution symmetric around 0: density doubled on ``[0, inf)``."""
    has_grad = True
    support = Positive()
    arg_constraints = {'scale': Positive()}

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return np.where(value < 0, -onp.inf, self._base_dist.log_prob(value) + math.log(2))

    def cdf(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return 2 * self._base_dist.cdf(value) - 1

    def icdf(self, value):
        return self._base_dist.icdf((value + 1) / 2)

    def entropy(self):
        return self._base_dist.entropy() - math.log(2)

    def broadcast_to(self, batch_shape):
        return type(self)(np.broadcast_to(self.scale, tuple(batch_shape)), validate_args=self._validate_args)


class HalfNormal(_Half):
    r"""``|X|`` for ``X ~ Normal(0, scale)``."""

    def __init__(self, scale=1.0, validate_args=None):
        self.scale = scale
        super().__init__(Normal(0, scale), AbsTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self._base_dist.loc

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)


class HalfCauchy(_Half):
    r"""``|X|`` for ``X ~ Cauchy(0, scale)``."""

    def __init__(self, scale=1.0, validate_args=None):
        self.scale = scale
        super().__init__(Cauchy(0, scale), AbsTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)  # as MXNet (the true mean is infinite)

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)  # as MXNet (the true variance is infinite)


class Pareto(TransformedDistribution):
    r"""Pareto (type I) distribution with shape ``alpha`` and minimum ``scale``."""
    has_grad = True
    arg_constraints = {'scale': Positive(), 'alpha': Positive()}

    def __init__(self, alpha, scale=1.0, validate_args=None):
        self.alpha = alpha
        self.scale = scale
        super().__init__(Exponential(1 / alpha), [ExpTransform(), AffineTransform(0, scale)],
                         validate_args=validate_args)

    def sample(self, size=None):
        return self.scale * (np.random.pareto(self.alpha, size) + 1)

    def sample_n(self, size=None):
        return self.scale * (np.random.pareto(self.alpha, sample_n_shape(size, self.alpha, self.scale)) + 1)

    @dependent_property
    def support(self):
        return GreaterThan(self.scale)

    def broadcast_to(self, batch_shape):
        shape = tuple(batch_shape)
        return Pareto(np.broadcast_to(self.alpha, shape), np.broadcast_to(self.scale, shape),
                      validate_args=self._validate_args)

    @property
    def mean(self):
        a = np.clip(self.alpha, 1, None)
        return a * self.scale / (a - 1)

    @property
    def variance(self):
        a = np.clip(self.alpha, 2, None)
        return (self.scale ** 2) * a / ((a - 1) ** 2 * (a - 2))

    def entropy(self):
        return log(self.scale / self.alpha) + 1 / self.alpha + 1


class Weibull(TransformedDistribution):
    r"""Weibull distribution with shape ``concentration`` and scale ``scale``."""
    has_grad = True
    support = Positive()
    arg_constraints = {'scale': Positive(), 'concentration': Positive()}

    def __init__(self, concentration, scale=1.0, validate_args=None):
        self.concentration = concentration
        self.scale = scale
        super().__init__(Exponential(), [PowerTransform(1 / concentration), AffineTransform(0, scale)],
                         validate_args=validate_args)

    def sample(self, size=None):
        return self.scale * np.random.weibull(self.concentration, size)

    def sample_n(self, size=None):
        return self.scale * np.random.weibull(self.concentration,
                                              sample_n_shape(size, self.concentration, self.scale))

    def broadcast_to(self, batch_shape):
        shape = tuple(batch_shape)
        return Weibull(np.broadcast_to(self.concentration, shape), np.broadcast_to(self.scale, shape),
                       validate_args=self._validate_args)

    @property
    def mean(self):
        return self.scale * exp(_gammaln(1 + 1 / self.concentration))

    @property
    def variance(self):
        term1 = exp(_gammaln(1 + 2 / self.concentration))
        term2 = exp(2 * _gammaln(1 + 1 / self.concentration))
        return (self.scale ** 2) * (term1 - term2)

    def entropy(self):
        return (float(onp.euler_gamma) * (1 - 1 / self.concentration)
                + log(self.scale / self.concentration) + 1)


class _LogitRelaxedBernoulli(_ProbLogit, Distribution):
    """The logit of a RelaxedBernoulli sample: ``(logit + Logistic(0, 1)) / T``."""
    has_grad = True
    support = Real()
    arg_constraints = {'prob': Interval(0, 1), 'logit': Real()}

    def __init__(self, T, prob=None, logit=None, validate_args=None):
        self.T = T
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    def sample(self, size=None):
        return np.random.logistic(loc=self.logit, scale=1, size=size) / self.T

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self._param()))

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'))

    def log_prob(self, value):
        diff = self.logit - self.T * value
        return log(self.T) + diff - 2 * log1p(exp(diff))


class RelaxedBernoulli(TransformedDistribution):
    r"""Relaxed (concrete) Bernoulli distribution with temperature ``T``, on ``(0, 1)``."""
    has_grad = True
    support = OpenInterval(0, 1)
    arg_constraints = {'prob': Interval(0, 1), 'logit': Real()}

    def __init__(self, T, prob=None, logit=None, validate_args=None):
        super().__init__(_LogitRelaxedBernoulli(T, prob, logit, validate_args), SigmoidTransform())

    @property
    def T(self):
        return self._base_dist.T

    @property
    def prob(self):
        return self._base_dist.prob

    @property
    def logit(self):
        return self._base_dist.logit

    def broadcast_to(self, batch_shape):
        new = self.__new__(type(self))
        TransformedDistribution.__init__(new, self._base_dist.broadcast_to(batch_shape), self._transforms)
        new._validate_args = self._validate_args
        return new


class _LogRelaxedOneHotCategorical(_ProbLogit, Distribution):
    """The log of a RelaxedOneHotCategorical sample: ``log_softmax((logit + Gumbel) / T)``."""
    _binary = False
    has_grad = True
    arg_constraints = {'prob': Simplex(), 'logit': Real()}

    def __init__(self, T, num_events, prob=None, logit=None, validate_args=None):
        self.T = T
        self.num_events = _check_num_events(num_events)
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=1, validate_args=validate_args)

    def log_prob(self, value):
        k = self.num_events
        y = self.logit - value * self.T
        log_sum_exp = log(exp(y).sum(-1, keepdims=True) + 1e-20)
        log_scale = math.lgamma(k) - log(self.T) * (-(k - 1))
        return (y - log_sum_exp).sum(-1) + log_scale

    def sample(self, size=None):
        logit = self.logit if size is None else np.broadcast_to(
            self.logit, as_tuple(size) + (self.num_events,))
        scores = np.random.gumbel(logit) / self.T
        return np.log(npx.softmax(scores, axis=-1) + 1e-20)

    def sample_n(self, size=None):
        return self.sample(as_tuple(size) + shape_of(self._param())[:-1])

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'), (self.num_events,))


class RelaxedOneHotCategorical(TransformedDistribution):
    r"""Relaxed (Gumbel-softmax) one-hot categorical distribution with temperature ``T``."""
    has_grad = True
    support = Simplex()
    arg_constraints = {'prob': Simplex(), 'logit': Real()}

    def __init__(self, T, num_events, prob=None, logit=None, validate_args=None):
        super().__init__(_LogRelaxedOneHotCategorical(T, num_events, prob, logit, validate_args), ExpTransform())

    @property
    def T(self):
        return self._base_dist.T

    @property
    def num_events(self):
        return self._base_dist.num_events

    @property
    def prob(self):
        return self._base_dist.prob

    @property
    def logit(self):
        return self._base_dist.logit

    def broadcast_to(self, batch_shape):
        new = self.__new__(type(self))
        TransformedDistribution.__init__(new, self._base_dist.broadcast_to(batch_shape), self._transforms)
        new._validate_args = self._validate_args
        return new
