"""KL divergences: ``kl_divergence(p, q)`` dispatches on ``(type(p), type(q))``; ``register_kl``
adds pairs; ``empirical_kl`` is the Monte Carlo estimate."""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as onp

from .... import numpy as np
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .location_scale import Cauchy, Gumbel, Laplace, Normal, Uniform
from .multivariate_normal import MultivariateNormal
from .positive import Beta, Dirichlet, Exponential, Gamma
from .transformed import HalfNormal, Pareto
from .utils import _digamma, _gammaln, absolute, exp, log, log1p

__all__ = ['register_kl', 'kl_divergence', 'empirical_kl']

_KL_REGISTRY: dict = {}
_EULER = float(onp.euler_gamma)


def empirical_kl(p: Any, q: Any, n_samples: int = 1) -> Any:
    r"""Monte Carlo estimate ``1/M sum_i log(p(x_i) / q(x_i))``, ``x_i ~ p``."""
    samples = p.sample_n(n_samples)
    return (p.log_prob(samples) - q.log_prob(samples)).mean(0)


def register_kl(typeP: type, typeQ: type) -> Callable:
    """Decorator registering ``func(p, q)`` as ``KL(p || q)`` for ``typeP`` and ``typeQ``."""
    def decorator(func: Callable) -> Callable:
        if func.__code__.co_argcount != 2:
            raise TypeError('Expect kl_divergence implementation to have exactly two arguments, '
                            'but got {}'.format(func.__code__.co_argcount))
        if (typeP, typeQ) in _KL_REGISTRY:  # MXNet keeps the first definition
            warnings.warn("register_kl: KL({}, {}) is already registered; keeping the first definition"
                          .format(typeP.__name__, typeQ.__name__), stacklevel=2)
        else:
            _KL_REGISTRY[(typeP, typeQ)] = func
        return func
    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> Callable:
    for p in type_p.__mro__:  # exact pair first, then base classes
        for q in type_q.__mro__:
            if (p, q) in _KL_REGISTRY:
                return _KL_REGISTRY[(p, q)]
    raise NotImplementedError(
        "KL divergence between {} and {} is not implemented.".format(type_p.__name__, type_q.__name__))


def kl_divergence(p: Any, q: Any) -> Any:
    r"""``KL(p || q)``, computed by the implementation registered for ``(type(p), type(q))``."""
    return _dispatch_kl(type(p), type(q))(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    return p.prob * log(p.prob / q.prob) + (1 - p.prob) * log((1 - p.prob) / (1 - q.prob))


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    return (p.prob * (p.logit - q.logit)).sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = log((q.high - q.low) / (p.high - p.low))
    return np.where((q.low > p.low) | (q.high < p.high), onp.inf, result)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return log((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2) - log(4 * p.scale * q.scale)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = absolute(p.loc - q.loc)
    return -log(scale_ratio) + loc_abs_diff / q.scale + scale_ratio * exp(-loc_abs_diff / p.scale) - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (log(p.rate) - log(q.rate)) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - log1p(-q.prob) / p.prob - q.logit


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    scale_ratio = p.scale / q.scale
    return -log(scale_ratio) + scale_ratio - 1


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * log(scale_ratio) - log(alpha_ratio) + alpha_ratio - 1
    return np.where(p.support._lower_bound < q.support._lower_bound, onp.nan, result)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -log(ct1) - ct2 + ct3
    t3 = exp(ct2 + _gammaln(1 + ct1) - ct3)
    return t1 + ct1 * _EULER + t3 - (1 + _EULER)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    return (q.shape * log(q.scale / p.scale) + _gammaln(q.shape) - _gammaln(p.shape)
            + (p.shape - q.shape) * _digamma(p.shape) + (p.shape * p.scale) * (1 / q.scale - 1 / p.scale))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p, sum_q = p.beta + p.alpha, q.beta + q.alpha
    t1 = _gammaln(q.alpha) + _gammaln(q.beta) + _gammaln(sum_p)
    t2 = _gammaln(p.alpha) + _gammaln(p.beta) + _gammaln(sum_q)
    t3 = (p.beta - q.beta) * _digamma(p.beta)
    t4 = (p.alpha - q.alpha) * _digamma(p.alpha)
    t5 = (sum_q - sum_p) * _digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.alpha.sum(-1), q.alpha.sum(-1)
    t1 = _gammaln(sum_p) - _gammaln(sum_q)
    t2 = (_gammaln(p.alpha) - _gammaln(q.alpha)).sum(-1)
    t4 = _digamma(p.alpha) - np.expand_dims(_digamma(sum_p), -1)
    return t1 - t2 + ((p.alpha - q.alpha) * t4).sum(-1)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - log(var_ratio))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    kl = p.n * (p.prob * (p.logit - q.logit) + log1p(-p.prob) - log1p(-q.prob))
    if p.n > q.n:
        return kl * 0 + onp.inf  # MXNet: inf where p's support is not inside q's
    return kl


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    def log_det(mvn):
        return np.log(np.diagonal(mvn.scale_tril, axis1=-2, axis2=-1)).sum(-1)
    term2 = np.trace(np.matmul(q.precision, p.cov), axis1=-2, axis2=-1)
    diff = q.loc - p.loc
    term3 = np.einsum('...i,...i->...', diff, np.einsum('...jk,...j->...k', q.precision, diff))
    n = p.cov.shape[-1]
    return 0.5 * (2 * (log_det(q) - log_det(p)) + term2 + term3 - n)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = log(math.sqrt(math.pi * 2) * q.scale / width)
    t2 = width ** 2 / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2) ** 2
    return t1 + 0.5 * (t2 + t3) / (q.scale ** 2)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high_diff = (p.high - q.loc) / q.scale
    low_diff = (p.low - q.loc) / q.scale
    t1 = log(common) + 0.5 * (high_diff + low_diff)
    t2 = common * (exp(-high_diff) - exp(-low_diff))
    return t1 - t2


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = q.scale / p.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = log(scale_rate_prod) - 1
    t2 = exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    return t1 - loc_scale_ratio + t2 + 1 / scale_rate_prod


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.variance
    rate_sqr = p.scale ** (-2)
    t1 = 0.5 * log(rate_sqr * var_normal * 2 * math.pi)
    return t1 - 1 + (1 / rate_sqr - q.loc * p.scale + (q.loc ** 2) * 0.5) / var_normal


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = p.scale / q.scale
    t1 = -q.shape * log(ratio)
    return t1 + ratio + _gammaln(q.shape) + q.shape * _EULER - (1 + _EULER)
