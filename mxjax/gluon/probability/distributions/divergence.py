"""Kullback-Leibler divergences.

``kl_divergence(p, q)`` looks up a closed form by ``(type(p), type(q))`` (walking both MROs);
``register_kl`` adds one; ``empirical_kl`` is the sampling estimate.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as onp

from .._utils import _digamma, _gammaln, absolute, exp, log, log1p
from .... import numpy as np
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .location_scale import Cauchy, Gumbel, Laplace, Normal, Uniform
from .multivariate_normal import MultivariateNormal
from .positive import Beta, Dirichlet, Exponential, Gamma
from .transformed import HalfNormal, Pareto

__all__ = ['register_kl', 'kl_divergence', 'empirical_kl']

_TABLE: dict = {}
_GAMMA_E = float(onp.euler_gamma)  # Euler-Mascheroni constant
_LOG_2PI = math.log(2 * math.pi)


def empirical_kl(p: Any, q: Any, n_samples: int = 1) -> Any:
    r"""Sample mean of ``log p(x) - log q(x)`` over ``n_samples`` draws ``x ~ p``."""
    draws = p.sample_n(n_samples)
    gap = p.log_prob(draws) - q.log_prob(draws)
    return gap.mean(0)


def register_kl(typeP: type, typeQ: type) -> Callable:
    """Decorator: record ``fn(p, q)`` as ``KL(p || q)`` for the pair ``(typeP, typeQ)``."""
    key = (typeP, typeQ)

    def _install(fn: Callable) -> Callable:
        nargs = fn.__code__.co_argcount
        if nargs != 2:
            raise TypeError('Expect kl_divergence implementation to have exactly two arguments, '
                            'but got {}'.format(nargs))
        if key in _TABLE:  # first registration wins, as in MXNet
            warnings.warn("register_kl: KL({}, {}) is already registered; keeping the first definition"
                          .format(typeP.__name__, typeQ.__name__), stacklevel=2)
            return fn
        _TABLE[key] = fn
        return fn
    return _install


def _lookup(tp: type, tq: type) -> Callable:
    pairs = ((a, b) for a in tp.__mro__ for b in tq.__mro__)
    fn = next((_TABLE[k] for k in pairs if k in _TABLE), None)
    if fn is None:
        raise NotImplementedError(
            "KL divergence between {} and {} is not implemented.".format(tp.__name__, tq.__name__))
    return fn


def kl_divergence(p: Any, q: Any) -> Any:
    r"""``KL(p || q) = E_p[log p - log q]`` from the closed form registered for the pair."""
    return _lookup(type(p), type(q))(p, q)


# ---------------------------------------------------------------- same-family pairs

def _gaussian_like(p, q):
    # 1/2 [ r - 1 - log r + ((mu_p - mu_q) / s_q)^2 ],  r = (s_p / s_q)^2
    r = (p.scale / q.scale) ** 2
    z = (p.loc - q.loc) / q.scale
    return 0.5 * (r - log(r) + z * z - 1)


def _bernoulli_pair(p, q):
    a, b = p.prob, q.prob
    return a * log(a / b) + (1 - a) * log((1 - a) / (1 - b))


def _categorical_pair(p, q):
    return (p.prob * (p.logit - q.logit)).sum(-1)


def _onehot_pair(p, q):
    return _categorical_pair(p._categorical, q._categorical)


def _uniform_pair(p, q):
    # log of the width ratio, infinite unless [p.low, p.high] sits inside [q.low, q.high]
    outside = (p.low < q.low) | (p.high > q.high)
    return np.where(outside, onp.inf, log(q.high - q.low) - log(p.high - p.low))


def _cauchy_pair(p, q):
    num = (p.loc - q.loc) ** 2 + (p.scale + q.scale) ** 2
    return log(num) - log(p.scale * q.scale * 4)


def _laplace_pair(p, q):
    gap = absolute(p.loc - q.loc)
    r = p.scale / q.scale
    return r * exp(-gap / p.scale) + gap / q.scale - log(r) - 1


def _poisson_pair(p, q):
    return q.rate - p.rate + p.rate * (log(p.rate) - log(q.rate))


def _geometric_pair(p, q):
    return -(p.entropy() + log1p(-q.prob) / p.prob + q.logit)


def _exponential_pair(p, q):
    r = p.scale / q.scale
    return r - log(r) - 1


def _pareto_pair(p, q):
    ra = q.alpha / p.alpha
    value = ra - log(ra) - 1 + q.alpha * (log(p.scale) - log(q.scale))
    # undefined when p puts mass below q's minimum
    return np.where(q.support._lower_bound > p.support._lower_bound, onp.nan, value)


def _gumbel_pair(p, q):
    r = p.scale / q.scale
    mu_p, mu_q = p.loc / q.scale, q.loc / q.scale
    tail = exp(mu_q - mu_p + _gammaln(1 + r))
    return mu_p - mu_q - log(r) + _GAMMA_E * (r - 1) + tail - 1


def _gamma_pair(p, q):
    kp, kq, sp, sq = p.shape, q.shape, p.scale, q.scale
    lgam = _gammaln(kq) - _gammaln(kp)
    return kq * (log(sq) - log(sp)) + lgam + (kp - kq) * _digamma(kp) + kp * sp * (1 / sq - 1 / sp)


def _log_beta_fn(a, b):
    return _gammaln(a) + _gammaln(b) - _gammaln(a + b)


def _beta_pair(p, q):
    tp, tq = p.alpha + p.beta, q.alpha + q.beta
    digammas = ((p.alpha - q.alpha) * _digamma(p.alpha) + (p.beta - q.beta) * _digamma(p.beta)
                + (tq - tp) * _digamma(tp))
    return _log_beta_fn(q.alpha, q.beta) - _log_beta_fn(p.alpha, p.beta) + digammas


def _dirichlet_pair(p, q):
    a, b = p.alpha, q.alpha
    a0 = a.sum(-1)
    log_norm = _gammaln(a0) - _gammaln(b.sum(-1)) + (_gammaln(b) - _gammaln(a)).sum(-1)
    expected_log = _digamma(a) - np.expand_dims(_digamma(a0), -1)
    return log_norm + ((a - b) * expected_log).sum(-1)


def _binomial_pair(p, q):
    value = p.n * (p.prob * (p.logit - q.logit) + log1p(-p.prob) - log1p(-q.prob))
    if p.n > q.n:
        return value * 0 + onp.inf  # p's support reaches outside q's
    return value


def _half_log_det(mvn):
    # log|Sigma| / 2 = sum log diag(L)
    return np.log(np.diagonal(mvn.scale_tril, axis1=-2, axis2=-1)).sum(-1)


def _mvn_pair(p, q):
    dim = p.cov.shape[-1]
    trace = np.trace(np.matmul(q.precision, p.cov), axis1=-2, axis2=-1)
    d = q.loc - p.loc
    mahalanobis = (d * np.einsum('...ij,...j->...i', q.precision, d)).sum(-1)
    return _half_log_det(q) - _half_log_det(p) + 0.5 * (trace + mahalanobis - dim)


# ---------------------------------------------------------------- cross-family pairs

def _uniform_normal(p, q):
    w = p.high - p.low
    mid = 0.5 * (p.high + p.low)
    spread = w * w / 12 + (mid - q.loc) ** 2
    return log(q.scale / w) + 0.5 * _LOG_2PI + spread / (2 * q.scale ** 2)


def _uniform_gumbel(p, q):
    c = q.scale / (p.high - p.low)
    hi = (p.high - q.loc) / q.scale
    lo = (p.low - q.loc) / q.scale
    return log(c) + 0.5 * (hi + lo) - c * (exp(-hi) - exp(-lo))


def _exponential_gumbel(p, q):
    k = q.scale / p.scale
    m = q.loc / q.scale
    return log(k) - 1 - m + 1 / k + exp(m) * k / (1 + k)


def _exponential_normal(p, q):
    s2 = q.variance
    lam2 = 1 / p.scale ** 2
    quad = p.scale ** 2 - q.loc * p.scale + 0.5 * q.loc ** 2
    return 0.5 * log(2 * math.pi * lam2 * s2) - 1 + quad / s2


def _exponential_gamma(p, q):
    r = p.scale / q.scale
    return r - q.shape * log(r) + _gammaln(q.shape) + _GAMMA_E * (q.shape - 1) - 1


for _pair, _fn in (
        ((Normal, Normal), _gaussian_like),
        ((Bernoulli, Bernoulli), _bernoulli_pair),
        ((Categorical, Categorical), _categorical_pair),
        ((OneHotCategorical, OneHotCategorical), _onehot_pair),
        ((Uniform, Uniform), _uniform_pair),
        ((Cauchy, Cauchy), _cauchy_pair),
        ((Laplace, Laplace), _laplace_pair),
        ((Poisson, Poisson), _poisson_pair),
        ((Geometric, Geometric), _geometric_pair),
        ((Exponential, Exponential), _exponential_pair),
        ((Pareto, Pareto), _pareto_pair),
        ((Gumbel, Gumbel), _gumbel_pair),
        ((Gamma, Gamma), _gamma_pair),
        ((Beta, Beta), _beta_pair),
        ((Dirichlet, Dirichlet), _dirichlet_pair),
        ((HalfNormal, HalfNormal), _gaussian_like),  # loc is 0 for both
        ((Binomial, Binomial), _binomial_pair),
        ((MultivariateNormal, MultivariateNormal), _mvn_pair),
        ((Uniform, Normal), _uniform_normal),
        ((Uniform, Gumbel), _uniform_gumbel),
        ((Exponential, Gumbel), _exponential_gumbel),
        ((Exponential, Normal), _exponential_normal),
        ((Exponential, Gamma), _exponential_gamma)):
    register_kl(*_pair)(_fn)
del _pair, _fn
