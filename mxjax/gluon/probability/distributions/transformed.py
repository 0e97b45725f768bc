"""Distributions obtained from other distributions.

``TransformedDistribution`` pushes a base distribution through a list of transformations;
``Independent`` moves batch axes into the event.  The rest are MXNet's families defined that
way: HalfNormal, HalfCauchy, Pareto, Weibull, RelaxedBernoulli, RelaxedOneHotCategorical.
"""
from __future__ import annotations

import math

import numpy as onp

from .._constraint import GreaterThan, Interval, OpenInterval, Positive, Real, Simplex, dependent_property
from .._utils import _gammaln, as_tuple, exp, log, log1p, shape_of, sum_right_most
from .... import numpy as np
from .... import numpy_extension as npx
from ..transformation import (AbsTransform, AffineTransform, ExpTransform, PowerTransform, SigmoidTransform,
                              Transformation)
from .discrete import _check_num_events, _ProbLogit
from .distribution import Distribution
from .location_scale import Cauchy, Normal
from .positive import Exponential

__all__ = ['TransformedDistribution', 'Independent', 'HalfNormal', 'HalfCauchy', 'Pareto', 'Weibull',
           'RelaxedBernoulli', 'RelaxedOneHotCategorical']

_LOG2 = math.log(2.0)


class TransformedDistribution(Distribution):
    """Law of ``T_n(...T_1(X))`` where ``X ~ base_dist`` and ``transforms = [T_1, ..., T_n]``."""

    def __init__(self, base_dist, transforms, validate_args=None):
        chain = [transforms] if isinstance(transforms, Transformation) else list(transforms)
        self._base_dist, self._transforms = base_dist, chain
        widest = max([base_dist.event_dim] + [t.event_dim for t in chain])
        super().__init__(event_dim=widest, validate_args=validate_args)

    def _push(self, x):
        for step in self._transforms:
            x = step(x)
        return x

    def _overall_sign(self):
        out = 1
        for step in self._transforms:
            out = out * step.sign
        return out

    def sample(self, size=None):
        return self._push(self._base_dist.sample(size))

    def sample_n(self, size=None):
        return self._push(self._base_dist.sample_n(size))

    def log_prob(self, value):
        """Change of variables: pull ``value`` back through the chain, subtracting each ``log|dy/dx|``."""
        correction = 0.0
        for step in self._transforms[::-1]:
            pre = step.inv(value)
            correction = correction + sum_right_most(step.log_det_jacobian(pre, value),
                                                     self.event_dim - step.event_dim)
            value = pre
        base_lp = sum_right_most(self._base_dist.log_prob(value), self.event_dim - self._base_dist.event_dim)
        return base_lp - correction

    def cdf(self, value):
        for step in self._transforms[::-1]:
            value = step.inv(value)
        # a decreasing chain mirrors the base cdf around 1/2
        return 0.5 + self._overall_sign() * (self._base_dist.cdf(value) - 0.5)

    def icdf(self, value):
        q = 0.5 + self._overall_sign() * (value - 0.5)
        return self._push(self._base_dist.icdf(q))

    def _rebuilt(self, base):
        """A copy of ``self`` (same class, same chain) over a different base distribution."""
        twin = self.__new__(type(self))
        TransformedDistribution.__init__(twin, base, self._transforms)
        twin._validate_args = self._validate_args
        return twin


class Independent(Distribution):
    r"""Treat the last ``reinterpreted_batch_ndims`` batch axes of ``base_distribution`` as event axes."""
    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        super().__init__(event_dim=base_distribution.event_dim + reinterpreted_batch_ndims,
                         validate_args=validate_args)

    def _fold(self, x):
        return sum_right_most(x, self.reinterpreted_batch_ndims)

    def broadcast_to(self, batch_shape):
        inner = self.base_dist
        full = tuple(onp.broadcast_shapes(shape_of(inner.mean), shape_of(inner.variance)))
        inner_batch = full[:len(full) - (inner.event_dim or 0)]
        kept = inner_batch[len(inner_batch) - self.reinterpreted_batch_ndims:]
        twin = self.__new__(type(self))
        twin.__dict__.update(base_dist=inner.broadcast_to(tuple(batch_shape) + kept),
                             reinterpreted_batch_ndims=self.reinterpreted_batch_ndims,
                             event_dim=self.event_dim, _validate_args=self._validate_args)
        return twin

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims <= 0 and self.base_dist.has_enumerate_support

    @dependent_property
    def support(self):
        return self.base_dist.support

    mean = property(lambda self: self.base_dist.mean)
    variance = property(lambda self: self.base_dist.variance)

    def sample(self, size=None):
        return self.base_dist.sample(size)

    def sample_n(self, size):
        return self.base_dist.sample_n(size)

    def log_prob(self, value):
        return self._fold(self.base_dist.log_prob(value))

    def entropy(self):
        return self._fold(self.base_dist.entropy())

    def enumerate_support(self):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support()


def _rebuild_broadcast(self, batch_shape):
    """``broadcast_to`` for families rebuilt from their constructor arguments (``_batch_params``, in order)."""
    shape = tuple(batch_shape)
    args = [np.broadcast_to(getattr(self, k), shape) for k in self._batch_params]
    return type(self)(*args, validate_args=self._validate_args)


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` symmetric about zero with the given ``scale``: twice the base density on ``[0, inf)``."""
    has_grad = True
    support = Positive()
    arg_constraints = dict(scale=Positive())
    _base_family = None  # Normal or Cauchy, set by the subclasses
    _batch_params = ('scale',)

    def __init__(self, scale=1.0, validate_args=None):
        self.scale = scale
        super().__init__(self._base_family(0, scale), AbsTransform(), validate_args=validate_args)

    # MXNet reports sqrt(2/pi) * scale and scale^2 (1 - 2/pi) for both families (HalfCauchy's true
    # moments are infinite); kept as the public behaviour.
    @property
    def mean(self):
        return math.sqrt(2 / math.pi) * self.scale

    @property
    def variance(self):
        return (1 - 2 / math.pi) * self.scale ** 2

    def _checked(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return value

    def log_prob(self, value):
        value = self._checked(value)
        return np.where(value < 0, -onp.inf, _LOG2 + self._base_dist.log_prob(value))

    def cdf(self, value):
        return self._base_dist.cdf(self._checked(value)) * 2 - 1

    def icdf(self, value):
        return self._base_dist.icdf(0.5 * (1 + value))

    def entropy(self):
        return self._base_dist.entropy() - _LOG2

    broadcast_to = _rebuild_broadcast


class HalfNormal(_Folded):
    r"""``|X|`` with ``X ~ Normal(0, scale)``."""
    _base_family = Normal

    @property
    def loc(self):
        return self._base_dist.loc


class HalfCauchy(_Folded):
    r"""``|X|`` with ``X ~ Cauchy(0, scale)``."""
    _base_family = Cauchy


class Pareto(TransformedDistribution):
    r"""Pareto type I: ``scale * exp(E)`` with ``E ~ Exponential(rate=alpha)``."""
    has_grad = True
    arg_constraints = dict(scale=Positive(), alpha=Positive())
    _batch_params = ('alpha', 'scale')
    sample_n = Distribution.sample_n  # direct sampler, not the base-then-transform path

    def __init__(self, alpha, scale=1.0, validate_args=None):
        self.alpha, self.scale = alpha, scale
        chain = [ExpTransform(), AffineTransform(0, scale)]
        super().__init__(Exponential(1 / alpha), chain, validate_args=validate_args)

    def _draw(self, shape):
        # numpy's pareto is the Lomax (shifted) form: add one, then scale
        return (1 + np.random.pareto(self.alpha, shape)) * self.scale

    def sample(self, size=None):
        return self._draw(size)

    @dependent_property
    def support(self):
        return GreaterThan(self.scale)

    broadcast_to = _rebuild_broadcast

    @property
    def mean(self):
        a = np.clip(self.alpha, 1, None)  # infinite for alpha <= 1
        return self.scale * a / (a - 1)

    @property
    def variance(self):
        a = np.clip(self.alpha, 2, None)  # infinite for alpha <= 2
        return a * self.scale ** 2 / ((a - 2) * (a - 1) ** 2)

    def entropy(self):
        inv_a = 1 / self.alpha
        return 1 + inv_a + log(self.scale / self.alpha)


class Weibull(TransformedDistribution):
    r"""Weibull: ``scale * E^(1/concentration)`` with ``E ~ Exponential(1)``."""
    has_grad = True
    support = Positive()
    arg_constraints = dict(scale=Positive(), concentration=Positive())
    _batch_params = ('concentration', 'scale')
    sample_n = Distribution.sample_n  # direct sampler, not the base-then-transform path

    def __init__(self, concentration, scale=1.0, validate_args=None):
        self.concentration, self.scale = concentration, scale
        chain = [PowerTransform(1 / concentration), AffineTransform(0, scale)]
        super().__init__(Exponential(), chain, validate_args=validate_args)

    def _draw(self, shape):
        return np.random.weibull(self.concentration, shape) * self.scale

    def sample(self, size=None):
        return self._draw(size)

    broadcast_to = _rebuild_broadcast

    def _gamma_moment(self, n):
        """``Gamma(1 + n / k)``, the n-th moment of the unit-scale Weibull."""
        return exp(_gammaln(1 + n / self.concentration))

    @property
    def mean(self):
        return self._gamma_moment(1) * self.scale

    @property
    def variance(self):
        g1 = exp(_gammaln(1 + 1 / self.concentration) * 2)
        return (self._gamma_moment(2) - g1) * self.scale ** 2

    def entropy(self):
        k = self.concentration
        return 1 + log(self.scale / k) + float(onp.euler_gamma) * (1 - 1 / k)


class _LogitRelaxedBernoulli(_ProbLogit, Distribution):
    """Logit of a relaxed Bernoulli draw: ``(logit + L) / T`` with ``L ~ Logistic(0, 1)``."""
    has_grad = True
    support = Real()
    arg_constraints = dict(prob=Interval(0, 1), logit=Real())

    def __init__(self, T, prob=None, logit=None, validate_args=None):
        self.T = T
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    def sample(self, size=None):
        noisy = np.random.logistic(loc=self.logit, scale=1, size=size)
        return noisy / self.T

    def log_prob(self, value):
        # logistic density of T * value around logit, times the Jacobian T
        z = self.logit - value * self.T
        return z + log(self.T) - 2 * log1p(exp(z))


class _TemperedWrapper(TransformedDistribution):
    """Shared accessors for the relaxed families, which forward their parameters to the base."""
    has_grad = True

    T = property(lambda self: self._base_dist.T)
    prob = property(lambda self: self._base_dist.prob)
    logit = property(lambda self: self._base_dist.logit)

    def broadcast_to(self, batch_shape):
        return self._rebuilt(self._base_dist.broadcast_to(batch_shape))


class RelaxedBernoulli(_TemperedWrapper):
    r"""Concrete / relaxed Bernoulli with temperature ``T``, supported on ``(0, 1)``."""
    support = OpenInterval(0, 1)
    arg_constraints = dict(prob=Interval(0, 1), logit=Real())

    def __init__(self, T, prob=None, logit=None, validate_args=None):
        base = _LogitRelaxedBernoulli(T, prob, logit, validate_args)
        super().__init__(base, SigmoidTransform())


class _LogRelaxedOneHotCategorical(_ProbLogit, Distribution):
    """Log of a relaxed one-hot draw: ``log_softmax((logit + G) / T)`` with Gumbel noise ``G``."""
    _binary = False
    has_grad = True
    arg_constraints = dict(prob=Simplex(), logit=Real())

    def __init__(self, T, num_events, prob=None, logit=None, validate_args=None):
        self.T = T
        self.num_events = _check_num_events(num_events)
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=1, validate_args=validate_args)

    def log_prob(self, value):
        n = self.num_events
        z = self.logit - self.T * value
        normaliser = log(1e-20 + exp(z).sum(-1, keepdims=True))
        # density constant: (n - 1)! * T^(n - 1)
        const = (n - 1) * log(self.T) + math.lgamma(n)
        return const + (z - normaliser).sum(-1)

    def sample(self, size=None):
        logit = self.logit
        if size is not None:
            logit = np.broadcast_to(logit, as_tuple(size) + (self.num_events,))
        relaxed = npx.softmax(np.random.gumbel(logit) / self.T, axis=-1)
        return np.log(1e-20 + relaxed)

    def sample_n(self, size=None):
        batch = shape_of(self._param())[:-1]
        return self.sample(as_tuple(size) + batch)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'), (self.num_events,))


class RelaxedOneHotCategorical(_TemperedWrapper):
    r"""Gumbel-softmax (relaxed one-hot categorical) with temperature ``T``."""
    support = Simplex()
    arg_constraints = dict(prob=Simplex(), logit=Real())

    def __init__(self, T, num_events, prob=None, logit=None, validate_args=None):
        base = _LogRelaxedOneHotCategorical(T, num_events, prob, logit, validate_args)
        super().__init__(base, ExpTransform())

    num_events = property(lambda self: self._base_dist.num_events)
