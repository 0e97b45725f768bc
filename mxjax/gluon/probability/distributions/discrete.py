"""Discrete distributions: Bernoulli, Binomial, Geometric, NegativeBinomial, Poisson,
Categorical, OneHotCategorical, Multinomial."""
from __future__ import annotations

from numbers import Number

from .... import numpy as np
from .... import numpy_extension as npx
from .constraint import (Boolean, GreaterThanEq, Interval, IntegerInterval, NonNegativeInteger, Positive,
                         Real, Simplex)
from .distribution import Distribution, ExponentialFamily
from .positive import Gamma
from .utils import (_gammaln, as_tuple, batch_shape, cached_property, exp, log, log1p, logit2prob,
                    prob2logit, sample_n_shape, shape_of)

__all__ = ['Bernoulli', 'Binomial', 'Geometric', 'NegativeBinomial', 'Poisson',
           'Categorical', 'OneHotCategorical', 'Multinomial']

_EITHER = "Either `prob` or `logit` must be specified, but not both. Received prob={}, logit={}"


def _dtype_of(*xs):
    for x in xs:
        if not isinstance(x, Number):
            return x.dtype
    return 'float32'


class _ProbLogit:
    """The ``prob``/``logit`` pair: one is given, the other is derived on first use."""
    _binary = True

    def _set_prob_logit(self, prob, logit):
        if (prob is None) == (logit is None):
            raise ValueError(_EITHER.format(prob, logit))
        if prob is not None:
            self.prob = prob
        else:
            self.logit = logit

    @cached_property
    def prob(self):  # pylint: disable=method-hidden
        """The probability (of sampling ``1``, or of each event)."""
        return logit2prob(self.logit, self._binary)

    @cached_property
    def logit(self):  # pylint: disable=method-hidden
        """The log-odds (binary) or the log-probability of each event."""
        return prob2logit(self.prob, self._binary)

    def _param(self):
        return self.__dict__['prob'] if 'prob' in self.__dict__ else self.__dict__['logit']


class Bernoulli(_ProbLogit, ExponentialFamily):
    r"""Bernoulli distribution: ``1`` with probability ``prob`` (or ``sigmoid(logit)``)."""
    support = Boolean()
    arg_constraints = {'prob': Interval(0, 1), 'logit': Real()}

    def __init__(self, prob=None, logit=None, validate_args=None):
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return self.prob

    @property
    def variance(self):
        return self.prob * (1 - self.prob)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        if 'prob' in self.__dict__:
            eps = 1e-12
            return log(self.prob + eps) * value + log1p(-self.prob + eps) * (1 - value)
        logit = self.logit
        return logit * (value - 1) - log(exp(-logit) + 1)

    def _draw(self, shape):
        u = np.random.uniform(size=shape, dtype=_dtype_of(self._param()))
        return (u < self.prob).astype(u.dtype)

    def sample(self, size=None):
        return self._draw(batch_shape(self._param()) if size is None else as_tuple(size))

    def sample_n(self, size=None):
        return self._draw(sample_n_shape(size, self._param()))

    def enumerate_support(self):
        shape = (2,) + (1,) * len(batch_shape(self._param()))
        values = np.array([0.0, 1.0], dtype=_dtype_of(self._param())).reshape(shape)
        return np.broadcast_to(values, (2,) + batch_shape(self._param()))

    has_enumerate_support = True

    @property
    def _natural_params(self):
        return (self.logit,)

    def _log_normalizer(self, x):  # pylint: disable=arguments-differ
        return log(1 + exp(x))

    def entropy(self):
        logit, prob = self.logit, self.prob
        return -(logit * (prob - 1) - log(exp(-logit) + 1))


class Binomial(_ProbLogit, Distribution):
    r"""Binomial distribution: the number of successes in ``n`` Bernoulli(``prob``) trials."""
    support = NonNegativeInteger()
    arg_constraints = {'prob': Interval(0, 1), 'logit': Real()}

    def __init__(self, n=1, prob=None, logit=None, validate_args=None):
        if (n < 0) or (n % 1 != 0):
            raise ValueError("Expect `n` to be non-negative integer, received n={}".format(n))
        self._set_prob_logit(prob, logit)
        self.n = n
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return self.n * self.prob

    @property
    def variance(self):
        return self.n * self.prob * (1 - self.prob)

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        coef = _gammaln(self.n + 1) - _gammaln(1 + value) - _gammaln(self.n - value + 1)
        return coef + value * log(self.prob) + (self.n - value) * log1p(-self.prob)

    def _draw(self, shape):
        u = np.random.uniform(size=tuple(shape) + (int(self.n),), dtype=_dtype_of(self._param()))
        prob = self.prob if isinstance(self.prob, Number) else np.expand_dims(self.prob, -1)
        return (u < prob).astype(u.dtype).sum(-1)

    def sample(self, size=None):
        return self._draw(batch_shape(self._param()) if size is None else as_tuple(size))

    def sample_n(self, size=None):
        return self._draw(sample_n_shape(size, self._param()))


class Geometric(_ProbLogit, Distribution):
    r"""Geometric distribution: the number of failures before the first success."""
    support = NonNegativeInteger()
    arg_constraints = {'prob': Interval(0, 1), 'logit': Real()}

    def __init__(self, prob=None, logit=None, validate_args=None):
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return 1 / self.prob - 1

    @property
    def variance(self):
        return (1 / self.prob - 1) / self.prob

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return value * log1p(-self.prob) + log(self.prob)

    def sample(self, size=None):
        shape = batch_shape(self._param()) if size is None else as_tuple(size)
        u = np.random.uniform(size=shape, dtype=_dtype_of(self._param()))
        return np.floor(np.log(u) / log1p(-self.prob))

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self._param()))

    def entropy(self):
        logit, prob = self.logit, self.prob
        return -(logit * (prob - 1) - log1p(exp(-logit))) / prob


class NegativeBinomial(_ProbLogit, Distribution):
    r"""Negative binomial distribution: the number of failures before the ``n``-th success,
    each trial succeeding with probability ``prob`` (``scipy.stats.nbinom(n, prob)``)."""
    support = NonNegativeInteger()
    arg_constraints = {'n': GreaterThanEq(0), 'prob': Interval(0, 1), 'logit': Real()}

    def __init__(self, n, prob=None, logit=None, validate_args=None):
        self._set_prob_logit(prob, logit)
        self.n = n
        super().__init__(event_dim=0, validate_args=validate_args)

    # MXNet 2.0 documents log_prob as above but gives mean/variance/samples of nbinom(n, 1 - prob);
    # these follow log_prob so the four agree.
    @property
    def mean(self):
        return self.n * exp(-self.logit)

    @property
    def variance(self):
        return self.n * (1 - self.prob) / self.prob ** 2

    def broadcast_to(self, batch_shape):
        new = self._broadcast_new(batch_shape, ('prob', 'logit', 'n'))
        if isinstance(self.n, Number):
            new.n = np.full(tuple(batch_shape), self.n)
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        coef = _gammaln(value + self.n) - _gammaln(1 + value) - _gammaln(self.n)
        return coef + self.n * log(self.prob) + value * log1p(-self.prob)

    def sample(self, size=None):
        rate = Gamma(shape=self.n, scale=exp(-self.logit)).sample(size)
        return Poisson(rate).sample()

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self.n, self._param()))


class Poisson(ExponentialFamily):
    r"""Poisson distribution with rate ``rate``."""
    arg_constraints = {'rate': Positive()}
    support = NonNegativeInteger()

    def __init__(self, rate=1.0, validate_args=None):
        self.rate = rate
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def variance(self):
        return self.rate

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('rate',))

    def sample(self, size=None):
        shape = batch_shape(self.rate) if size is None else as_tuple(size)
        return np.random.poisson(self.rate, size=shape).astype(_dtype_of(self.rate))

    def sample_n(self, size=None):
        return self.sample(sample_n_shape(size, self.rate))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return value * log(self.rate) - self.rate - _gammaln(value + 1)

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):  # pylint: disable=arguments-differ
        return exp(x)


def _check_num_events(num_events):
    if not num_events > 0:
        raise ValueError("`num_events` should be greater than zero. Received num_events={}".format(num_events))
    return int(num_events)


class Categorical(_ProbLogit, Distribution):
    """Categorical distribution over ``num_events`` classes (the last axis of ``prob``/``logit``)."""
    _binary = False
    has_enumerate_support = True
    arg_constraints = {'prob': Simplex(), 'logit': Real()}

    def __init__(self, num_events, prob=None, logit=None, validate_args=None):
        self.num_events = _check_num_events(num_events)
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def support(self):
        return IntegerInterval(0, self.num_events)

    @property
    def mean(self):
        return (self.prob * np.arange(self.num_events, dtype=self.prob.dtype)).sum(-1)

    @property
    def variance(self):
        k = np.arange(self.num_events, dtype=self.prob.dtype)
        return (self.prob * k ** 2).sum(-1) - self.mean ** 2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        logit = self.logit
        indices = np.expand_dims(value, -1).astype('int32')
        expanded = logit * np.ones_like(logit + indices)
        indices = np.broadcast_to(indices, expanded.shape[:-1] + (1,))
        return npx.pick(expanded, indices[..., 0], axis=-1)

    def _draw(self, shape):
        logit = np.broadcast_to(self.logit, tuple(shape) + (self.num_events,))
        return np.argmax(np.random.gumbel(logit), axis=-1)

    def sample(self, size=None):
        """Class indices of shape ``size`` (``None``: the batch shape)."""
        return self._draw(shape_of(self._param())[:-1] if size is None else as_tuple(size))

    def sample_n(self, size=None):
        return self._draw(as_tuple(size) + shape_of(self._param())[:-1])

    def broadcast_to(self, batch_shape):
        return self._broadcast_new(batch_shape, ('prob', 'logit'), (self.num_events,))

    def entropy(self):
        return -(self.prob * self.logit).sum(-1)

    def enumerate_support(self):
        values = np.arange(self.num_events, dtype=self.logit.dtype)
        shape = (self.num_events,) + (1,) * (len(shape_of(self._param())) - 1)
        return np.broadcast_to(values.reshape(shape), (self.num_events,) + shape_of(self._param())[:-1])


class OneHotCategorical(Distribution):
    """Categorical distribution whose samples are one-hot vectors of length ``num_events``."""
    arg_constraints = {'prob': Simplex(), 'logit': Real()}
    has_enumerate_support = True

    def __init__(self, num_events, prob=None, logit=None, validate_args=None):
        self.num_events = _check_num_events(num_events)
        self._categorical = Categorical(num_events, prob, logit, validate_args)
        super().__init__(event_dim=1, validate_args=validate_args)

    @property
    def prob(self):
        return self._categorical.prob

    @property
    def logit(self):
        return self._categorical.logit

    @property
    def support(self):
        return Simplex()

    @property
    def mean(self):
        return self.prob

    @property
    def variance(self):
        return self.prob * (1 - self.prob)

    def sample(self, size=None):
        return npx.one_hot(self._categorical.sample(size), self.num_events, dtype=self.logit.dtype)

    def sample_n(self, size=None):
        return npx.one_hot(self._categorical.sample_n(size), self.num_events, dtype=self.logit.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        return (value * self.logit).sum(-1)

    def entropy(self):
        return self._categorical.entropy()

    def broadcast_to(self, batch_shape):
        new = self.__new__(type(self))
        new._categorical = self._categorical.broadcast_to(batch_shape)
        new.num_events = self.num_events
        new.event_dim = self.event_dim
        new._validate_args = self._validate_args
        return new

    def enumerate_support(self):
        return npx.one_hot(self._categorical.enumerate_support(), self.num_events, dtype=self.logit.dtype)


class Multinomial(_ProbLogit, Distribution):
    """Counts of ``total_count`` draws from a categorical distribution over ``num_events`` classes."""
    _binary = False
    arg_constraints = {'prob': Simplex(), 'logit': Real()}

    def __init__(self, num_events, prob=None, logit=None, total_count=1, validate_args=None):
        if not isinstance(total_count, Number):
            raise ValueError("Expect `total_count` to be scalar value")
        self.total_count = total_count
        self._set_prob_logit(prob, logit)
        self.num_events = _check_num_events(num_events)
        self._categorical = OneHotCategorical(num_events, prob, logit, validate_args)
        super().__init__(event_dim=1, validate_args=validate_args)

    @property
    def mean(self):
        return self.prob * self.total_count

    @property
    def variance(self):
        return self.total_count * self.prob * (1 - self.prob)

    @property
    def support(self):
        return IntegerInterval(0, self.total_count)

    def sample(self, size=None):
        categorical = self._categorical if size is None else self._categorical.broadcast_to(as_tuple(size))
        return categorical.sample_n(self.total_count).sum(0)

    def sample_n(self, size=None):
        return self._categorical.sample_n((self.total_count,) + as_tuple(size)).sum(0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        log_factorial_n = _gammaln(value.sum(-1) + 1)
        log_factorial_x = _gammaln(value + 1).sum(-1)
        return log_factorial_n - log_factorial_x + (self.logit * value).sum(-1)

    def broadcast_to(self, batch_shape):
        new = self._broadcast_new(batch_shape, ('prob', 'logit'), (self.num_events,))
        new._categorical = self._categorical.broadcast_to(batch_shape)
        return new
