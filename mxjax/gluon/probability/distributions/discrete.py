"""Distributions on integers and one-hot vectors: Bernoulli, Binomial, Geometric, NegativeBinomial,
Poisson, Categorical, OneHotCategorical, Multinomial."""
from __future__ import annotations

from numbers import Number

from .._constraint import (Boolean, GreaterThanEq, Interval, IntegerInterval, NonNegativeInteger, Positive,
                           Real, Simplex)
from .._utils import (_gammaln, as_tuple, batch_shape, cached_property, exp, log, log1p, logit2prob,
                      prob2logit, shape_of)
from .... import numpy as np
from .... import numpy_extension as npx
from .distribution import Distribution, ExponentialFamily
from .positive import Gamma

__all__ = ['Bernoulli', 'Binomial', 'Geometric', 'NegativeBinomial', 'Poisson',
           'Categorical', 'OneHotCategorical', 'Multinomial']

_BOTH_OR_NEITHER = "Either `prob` or `logit` must be specified, but not both. Received prob={}, logit={}"
_BINARY_PARAMS = {'prob': Interval(0, 1), 'logit': Real()}
_SIMPLEX_PARAMS = {'prob': Simplex(), 'logit': Real()}


def _float_dtype(*values):
    """dtype of the first array among ``values`` (float32 when all are Python numbers)."""
    return next((v.dtype for v in values if not isinstance(v, Number)), 'float32')


def _validated(dist, value):
    if dist._validate_args:
        dist._validate_samples(value)
    return value


def _log_choose(n, k):
    """``log(n! / (k! (n - k)!))`` via log-gamma."""
    return _gammaln(n + 1) - _gammaln(k + 1) - _gammaln(n - k + 1)


def _bernoulli_entropy(logit, prob):
    """``-p log p - (1 - p) log(1 - p)`` written with the log-odds ``logit``."""
    return (1 - prob) * logit + log1p(exp(-logit))


def _check_num_events(num_events):
    if num_events <= 0:
        raise ValueError("`num_events` should be greater than zero. Received num_events={}".format(num_events))
    return int(num_events)


class _ProbLogit:
    """Mixin for the ``prob`` / ``logit`` parametrisation: exactly one is given, the other is derived lazily."""
    _binary = True
    _batch_params = ('prob', 'logit')  # only the one given is present in __dict__

    def _set_prob_logit(self, prob, logit):
        if (prob is None) is (logit is None):
            raise ValueError(_BOTH_OR_NEITHER.format(prob, logit))
        self.__dict__['prob' if logit is None else 'logit'] = logit if prob is None else prob

    @cached_property
    def prob(self):  # pylint: disable=method-hidden
        """Probability of a one (binary) or of each class."""
        return logit2prob(self.logit, self._binary)

    @cached_property
    def logit(self):  # pylint: disable=method-hidden
        """Log-odds (binary) or log-probability of each class."""
        return prob2logit(self.prob, self._binary)

    def _param(self):
        """Whichever of ``prob`` / ``logit`` the user supplied."""
        own = self.__dict__
        return own['prob'] if 'prob' in own else own['logit']

    def _uniform(self, shape):
        return np.random.uniform(size=shape, dtype=_float_dtype(self._param()))

    def _shape_or_batch(self, size):
        return batch_shape(self._param()) if size is None else as_tuple(size)



class Bernoulli(_ProbLogit, ExponentialFamily):
    r"""Takes the value ``1`` with probability ``prob`` (equivalently ``sigmoid(logit)``), else ``0``."""
    support = Boolean()
    arg_constraints = _BINARY_PARAMS
    has_enumerate_support = True

    def __init__(self, prob=None, logit=None, validate_args=None):
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    mean = property(lambda self: self.prob)
    variance = property(lambda self: (1 - self.prob) * self.prob)

    def log_prob(self, value):
        x = _validated(self, value)
        if 'prob' in self.__dict__:
            tiny = 1e-12  # keeps log finite at prob 0 or 1
            p = self.prob
            return x * log(p + tiny) + (1 - x) * log1p(tiny - p)
        l = self.logit
        # x * l - log(1 + e^l), arranged as in MXNet so that large positive logits stay finite
        return (x - 1) * l - log1p(exp(-l))

    def sample(self, size=None):
        u = self._uniform(self._shape_or_batch(size))
        return (u < self.prob).astype(u.dtype)

    def enumerate_support(self):
        batch = batch_shape(self._param())
        column = np.array([0.0, 1.0], dtype=_float_dtype(self._param())).reshape((2,) + (1,) * len(batch))
        return np.broadcast_to(column, (2,) + batch)

    @property
    def _natural_params(self):
        return (self.logit,)

    def _log_normalizer(self, x):  # pylint: disable=arguments-differ
        return log1p(exp(x))

    def entropy(self):
        return _bernoulli_entropy(self.logit, self.prob)


class Binomial(_ProbLogit, Distribution):
    r"""Successes among ``n`` independent trials, each succeeding with probability ``prob``."""
    support = NonNegativeInteger()
    arg_constraints = _BINARY_PARAMS

    def __init__(self, n=1, prob=None, logit=None, validate_args=None):
        if n < 0 or n % 1:
            raise ValueError("Expect `n` to be non-negative integer, received n={}".format(n))
        self._set_prob_logit(prob, logit)
        self.n = n
        super().__init__(event_dim=0, validate_args=validate_args)

    mean = property(lambda self: self.prob * self.n)
    variance = property(lambda self: self.n * (1 - self.prob) * self.prob)

    def log_prob(self, value):
        k = _validated(self, value)
        p = self.prob
        return _log_choose(self.n, k) + k * log(p) + (self.n - k) * log1p(-p)

    def sample(self, size=None):
        # n Bernoulli trials along a trailing axis, then count the successes
        trials = self._uniform(self._shape_or_batch(size) + (int(self.n),))
        p = self.prob
        if not isinstance(p, Number):
            p = np.expand_dims(p, -1)
        return (trials < p).astype(trials.dtype).sum(-1)


class Geometric(_ProbLogit, Distribution):
    r"""Failures before the first success, each trial succeeding with probability ``prob``."""
    support = NonNegativeInteger()
    arg_constraints = _BINARY_PARAMS

    def __init__(self, prob=None, logit=None, validate_args=None):
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def mean(self):
        return (1 - self.prob) / self.prob

    @property
    def variance(self):
        return (1 - self.prob) / self.prob ** 2

    def log_prob(self, value):
        k = _validated(self, value)
        return log(self.prob) + k * log1p(-self.prob)

    def sample(self, size=None):
        # inverse-cdf: floor(log U / log(1 - p))
        u = self._uniform(self._shape_or_batch(size))
        return np.floor(np.log(u) / log1p(-self.prob))

    def entropy(self):
        return _bernoulli_entropy(self.logit, self.prob) / self.prob


class NegativeBinomial(_ProbLogit, Distribution):
    r"""Failures before the ``n``-th success when each trial succeeds with probability ``prob``
    (the law of ``scipy.stats.nbinom(n, prob)``)."""
    support = NonNegativeInteger()
    arg_constraints = dict(n=GreaterThanEq(0), prob=Interval(0, 1), logit=Real())
    _batch_params = ('n', 'prob', 'logit')

    def __init__(self, n, prob=None, logit=None, validate_args=None):
        self._set_prob_logit(prob, logit)
        self.n = n
        super().__init__(event_dim=0, validate_args=validate_args)

    # MXNet 2.0's mean/variance/sampler describe nbinom(n, 1 - prob) while its log_prob describes
    # nbinom(n, prob); here all four follow log_prob.
    @property
    def mean(self):
        return exp(-self.logit) * self.n  # n (1 - p) / p

    @property
    def variance(self):
        return self.n * (1 - self.prob) / (self.prob * self.prob)

    def broadcast_to(self, batch_shape):  # pylint: disable=redefined-outer-name
        twin = self._broadcast_new(batch_shape, ('prob', 'logit', 'n'))
        if isinstance(self.n, Number):
            twin.n = np.full(tuple(batch_shape), self.n)
        return twin

    def log_prob(self, value):
        k = _validated(self, value)
        log_coef = _gammaln(k + self.n) - _gammaln(k + 1) - _gammaln(self.n)
        return log_coef + k * log1p(-self.prob) + self.n * log(self.prob)

    def sample(self, size=None):
        # Gamma-Poisson mixture: rate ~ Gamma(n, (1 - p) / p), count ~ Poisson(rate)
        mixing = Gamma(shape=self.n, scale=exp(-self.logit)).sample(size)
        return Poisson(mixing).sample()



class Poisson(ExponentialFamily):
    r"""Counts of events arriving at mean ``rate``."""
    arg_constraints = dict(rate=Positive())
    _batch_params = ('rate',)
    support = NonNegativeInteger()

    def __init__(self, rate=1.0, validate_args=None):
        self.rate = rate
        super().__init__(event_dim=0, validate_args=validate_args)

    mean = property(lambda self: self.rate)
    variance = property(lambda self: self.rate)

    def sample(self, size=None):
        shape = batch_shape(self.rate) if size is None else as_tuple(size)
        counts = np.random.poisson(self.rate, size=shape)
        return counts.astype(_float_dtype(self.rate))

    def log_prob(self, value):
        k = _validated(self, value)
        return k * log(self.rate) - _gammaln(k + 1) - self.rate

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):  # pylint: disable=arguments-differ
        return exp(x)


class Categorical(_ProbLogit, Distribution):
    """A class index in ``[0, num_events)``; class probabilities lie on the last axis of ``prob``/``logit``."""
    _binary = False
    has_enumerate_support = True
    arg_constraints = _SIMPLEX_PARAMS

    def __init__(self, num_events, prob=None, logit=None, validate_args=None):
        self.num_events = _check_num_events(num_events)
        self._set_prob_logit(prob, logit)
        super().__init__(event_dim=0, validate_args=validate_args)

    @property
    def support(self):
        return IntegerInterval(0, self.num_events)

    def _classes(self, dtype):
        return np.arange(self.num_events, dtype=dtype)

    def _batch(self):
        return shape_of(self._param())[:-1]

    @property
    def mean(self):
        return (self._classes(self.prob.dtype) * self.prob).sum(-1)

    @property
    def variance(self):
        k = self._classes(self.prob.dtype)
        second_moment = (k * k * self.prob).sum(-1)
        return second_moment - self.mean ** 2

    def log_prob(self, value):
        value = _validated(self, value)
        idx = np.expand_dims(value, -1).astype('int32')
        # broadcast the logits against the requested indices, then pick along the class axis
        table = np.ones_like(idx + self.logit) * self.logit
        idx = np.broadcast_to(idx, table.shape[:-1] + (1,))
        return npx.pick(table, idx[..., 0], axis=-1)

    def _draw(self, shape):
        # Gumbel-max trick
        scores = np.random.gumbel(np.broadcast_to(self.logit, tuple(shape) + (self.num_events,)))
        return np.argmax(scores, axis=-1)

    def sample(self, size=None):
        """Class indices of shape ``size`` (``None``: the batch shape)."""
        return self._draw(self._batch() if size is None else as_tuple(size))

    def sample_n(self, size=None):
        return self._draw(as_tuple(size) + self._batch())

    def broadcast_to(self, batch_shape):  # pylint: disable=redefined-outer-name
        return self._broadcast_new(batch_shape, ('prob', 'logit'), (self.num_events,))

    def entropy(self):
        return -(self.logit * self.prob).sum(-1)

    def enumerate_support(self):
        batch = self._batch()
        column = self._classes(self.logit.dtype).reshape((self.num_events,) + (1,) * len(batch))
        return np.broadcast_to(column, (self.num_events,) + batch)


class OneHotCategorical(Distribution):
    """Categorical draws encoded as one-hot vectors of length ``num_events``."""
    arg_constraints = _SIMPLEX_PARAMS
    has_enumerate_support = True
    support = property(lambda self: Simplex())

    def __init__(self, num_events, prob=None, logit=None, validate_args=None):
        self.num_events = _check_num_events(num_events)
        self._categorical = Categorical(num_events, prob, logit, validate_args)
        super().__init__(event_dim=1, validate_args=validate_args)

    prob = property(lambda self: self._categorical.prob)
    logit = property(lambda self: self._categorical.logit)
    mean = property(lambda self: self._categorical.prob)
    variance = property(lambda self: self.prob * (1 - self.prob))

    def _encode(self, indices):
        return npx.one_hot(indices, self.num_events, dtype=self.logit.dtype)

    def sample(self, size=None):
        return self._encode(self._categorical.sample(size))

    def sample_n(self, size=None):
        return self._encode(self._categorical.sample_n(size))

    def log_prob(self, value):
        onehot = _validated(self, value)
        return (self.logit * onehot).sum(-1)

    def entropy(self):
        return self._categorical.entropy()

    def broadcast_to(self, batch_shape):  # pylint: disable=redefined-outer-name
        twin = self.__new__(type(self))
        twin.__dict__.update(_categorical=self._categorical.broadcast_to(batch_shape),
                             num_events=self.num_events, event_dim=self.event_dim,
                             _validate_args=self._validate_args)
        return twin

    def enumerate_support(self):
        return self._encode(self._categorical.enumerate_support())


class Multinomial(_ProbLogit, Distribution):
    """Per-class counts of ``total_count`` independent categorical draws over ``num_events`` classes."""
    _binary = False
    arg_constraints = _SIMPLEX_PARAMS

    def __init__(self, num_events, prob=None, logit=None, total_count=1, validate_args=None):
        if not isinstance(total_count, Number):
            raise ValueError("Expect `total_count` to be scalar value")
        self.total_count = total_count
        self._set_prob_logit(prob, logit)
        self.num_events = _check_num_events(num_events)
        self._categorical = OneHotCategorical(num_events, prob, logit, validate_args)
        super().__init__(event_dim=1, validate_args=validate_args)

    mean = property(lambda self: self.total_count * self.prob)
    variance = property(lambda self: self.total_count * (1 - self.prob) * self.prob)
    support = property(lambda self: IntegerInterval(0, self.total_count))

    def sample(self, size=None):
        source = self._categorical
        if size is not None:
            source = source.broadcast_to(as_tuple(size))
        return source.sample_n(self.total_count).sum(0)

    def sample_n(self, size=None):
        draws = self._categorical.sample_n((self.total_count,) + as_tuple(size))
        return draws.sum(0)

    def log_prob(self, value):
        counts = _validated(self, value)
        # multinomial coefficient n! / prod(x_i!) times prod(p_i^x_i)
        log_coef = _gammaln(counts.sum(-1) + 1) - _gammaln(counts + 1).sum(-1)
        return log_coef + (counts * self.logit).sum(-1)

    def broadcast_to(self, batch_shape):  # pylint: disable=redefined-outer-name
        twin = self._broadcast_new(batch_shape, ('prob', 'logit'), (self.num_events,))
        twin._categorical = self._categorical.broadcast_to(batch_shape)
        return twin
