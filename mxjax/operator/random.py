"""Random sampling operators (``np.random``, ``npx.random``, ``mx.random``).

Every op takes a PRNG key as its first input (the front-end draws it from the seeded
stream in ``mxjax._rng``), so a seed and a sequence of calls always give the same
numbers.  Distribution parameters (loc, scale, low, high, ...) are array inputs named
as MXNet's attributes; they broadcast against ``size``, which must hold their
broadcast shape (NumPy's rule), and the output shape is ``size`` or, without it, the
parameters' broadcast shape.  Float outputs default to MXNet's default float dtype.

Op names are MXNet 2's symbol-JSON names (``_npi_uniform``...; ``_npi_powerd`` is the
power distribution, ``_npi_power`` being ``np.power``).  Distributions NumPy has and
MXNet 2 lacks follow the same pattern (``_npi_beta``, ``_npi_poisson``, ``_npi_binomial``,
``_npi_negative_binomial``, ``_npi_lognormal``,
``_npi_multivariate_normal``), as does ``_npi_categorical`` (class indices drawn from rows of
probabilities, with their log-probabilities; ``_sample_categorical`` is built on it).
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ..base import MXNetTypeError, MXNetValueError
from ._dtypes import resolve_dtype
from .registry import defop


# -- shared trace-time rules ---------------------------------------------------------------
def _size(op: str, size: Any) -> tuple | None:
    if size is None:
        return None
    size = (int(size),) if isinstance(size, int) else tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise MXNetValueError(f"{op}: negative dimensions are not allowed in size {size}")
    return size


def _out_shape(op: str, size: Any, *params: Any) -> tuple:
    """``size``, checked to hold the parameters' broadcast shape; that shape when size is None."""
    shapes = [tuple(jnp.shape(p)) for p in params]
    try:
        pshape = tuple(jnp.broadcast_shapes(*shapes)) if shapes else ()
    except ValueError:
        raise MXNetValueError(
            f"{op}: the distribution parameters of shapes {shapes} do not broadcast together") from None
    size = _size(op, size)
    if size is None:
        return pshape
    try:
        fits = tuple(jnp.broadcast_shapes(size, pshape)) == size
    except ValueError:
        fits = False
    if not fits:
        raise MXNetValueError(
            f"{op}: size {size} does not fit the parameters' broadcast shape {pshape}: "
            "the parameters must broadcast to size")
    return size


def _float_dtype(op: str, dtype: Any) -> Any:
    dt = resolve_dtype(dtype)
    if not jnp.issubdtype(dt, jnp.floating):
        raise MXNetTypeError(f"{op}: dtype must be a floating-point type, got {dt.name}")
    return dt


def _compute_dtype(dt: Any) -> Any:
    """Sample half precision in float32 (JAX's samplers lose accuracy in float16), then cast."""
    return jnp.dtype(jnp.float32) if jnp.dtype(dt).itemsize < 4 else dt


def _prepare(op: str, size: Any, dtype: Any, *params: Any) -> tuple:
    """(output shape, dtype to sample in, output dtype, parameters as arrays of the sampling dtype)."""
    shape = _out_shape(op, size, *params)
    dt = _float_dtype(op, dtype)
    cdt = _compute_dtype(dt)
    return shape, cdt, dt, [jnp.asarray(p, cdt) for p in params]


_r = jax.random


@defop("_npi_uniform", needs_key=True)
def uniform(key, low=0.0, high=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the uniform distribution on [low, high)."""
    s, d, dt, (low, high) = _prepare("uniform", size, dtype, low, high)
    return (low + (high - low) * _r.uniform(key, s, d)).astype(dt)


@defop("_npi_normal", needs_key=True)
def normal(key, loc=0.0, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the normal distribution N(loc, scale**2)."""
    s, d, dt, (loc, scale) = _prepare("normal", size, dtype, loc, scale)
    return (loc + scale * _r.normal(key, s, d)).astype(dt)


@defop("_npi_lognormal", needs_key=True)
def lognormal(key, mean=0.0, sigma=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples whose logarithm is normal with the given mean and sigma."""
    s, d, dt, (mean, sigma) = _prepare("lognormal", size, dtype, mean, sigma)
    return jnp.exp(mean + sigma * _r.normal(key, s, d)).astype(dt)


@defop("_npi_laplace", needs_key=True)
def laplace(key, loc=0.0, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the Laplace (double exponential) distribution."""
    s, d, dt, (loc, scale) = _prepare("laplace", size, dtype, loc, scale)
    return (loc + scale * _r.laplace(key, s, d)).astype(dt)


@defop("_npi_gumbel", needs_key=True)
def gumbel(key, loc=0.0, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the Gumbel (extreme value type I) distribution."""
    s, d, dt, (loc, scale) = _prepare("gumbel", size, dtype, loc, scale)
    return (loc + scale * _r.gumbel(key, s, d)).astype(dt)


@defop("_npi_logistic", needs_key=True)
def logistic(key, loc=0.0, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the logistic distribution."""
    s, d, dt, (loc, scale) = _prepare("logistic", size, dtype, loc, scale)
    return (loc + scale * _r.logistic(key, s, d)).astype(dt)


@defop("_npi_gamma", needs_key=True)
def gamma(key, shape, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the gamma distribution with the given shape (k) and scale (theta)."""
    s, d, dt, (k, scale) = _prepare("gamma", size, dtype, shape, scale)
    return (scale * _r.gamma(key, jnp.broadcast_to(k, s), s, d)).astype(dt)


@defop("_npi_exponential", needs_key=True)
def exponential(key, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the exponential distribution with the given scale (1 / rate)."""
    s, d, dt, (scale,) = _prepare("exponential", size, dtype, scale)
    return (scale * _r.exponential(key, s, d)).astype(dt)


@defop("_npi_rayleigh", needs_key=True)
def rayleigh(key, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the Rayleigh distribution with the given scale (its mode)."""
    s, d, dt, (scale,) = _prepare("rayleigh", size, dtype, scale)
    return (scale * jnp.sqrt(2.0 * _r.exponential(key, s, d))).astype(dt)


@defop("_npi_pareto", needs_key=True)
def pareto(key, a, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from NumPy's Pareto II (Lomax) distribution with shape a: Pareto I shifted to start at 0."""
    s, d, dt, (a,) = _prepare("pareto", size, dtype, a)
    return jnp.expm1(_r.exponential(key, s, d) / a).astype(dt)


@defop("_npi_powerd", needs_key=True)
def power(key, a, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples in [0, 1] from the power distribution with density ``a * x**(a - 1)``."""
    s, d, dt, (a,) = _prepare("power", size, dtype, a)
    return ((-jnp.expm1(-_r.exponential(key, s, d))) ** (1.0 / a)).astype(dt)


@defop("_npi_weibull", needs_key=True)
def weibull(key, a, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the standard Weibull distribution with shape a."""
    s, d, dt, (a,) = _prepare("weibull", size, dtype, a)
    return (_r.exponential(key, s, d) ** (1.0 / a)).astype(dt)


@defop("_npi_beta", needs_key=True)
def beta(key, a, b, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the beta distribution with parameters a and b."""
    s, d, dt, (a, b) = _prepare("beta", size, dtype, a, b)
    return _r.beta(key, a, b, s, d).astype(dt)


def _prepare_n(op: str, size: Any, dtype: Any, *params: Any) -> tuple:
    """As ``_prepare`` for npx's ``*_n`` samplers: ``size`` is a batch shape put before the parameters'."""
    s, d, dt, params = _prepare(op, None, dtype, *params)
    return (_size(op, size) or ()) + s, d, dt, params


@defop("_npi_uniform_n", needs_key=True)
def uniform_n(key, low=0.0, high=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Uniform samples on [low, high) of shape ``size + broadcast(low, high).shape``."""
    s, d, dt, (low, high) = _prepare_n("uniform_n", size, dtype, low, high)
    return (low + (high - low) * _r.uniform(key, s, d)).astype(dt)


@defop("_npi_normal_n", needs_key=True)
def normal_n(key, loc=0.0, scale=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Normal samples of shape ``size + broadcast(loc, scale).shape``."""
    s, d, dt, (loc, scale) = _prepare_n("normal_n", size, dtype, loc, scale)
    return (loc + scale * _r.normal(key, s, d)).astype(dt)


@defop("_npi_multivariate_normal", needs_key=True)
def multivariate_normal(key, mean, cov, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples of shape ``size + (N,)`` from N(mean, cov) (cov factored by SVD, as NumPy does)."""
    if jnp.ndim(mean) != 1 or jnp.ndim(cov) != 2 or jnp.shape(cov) != (jnp.shape(mean)[0],) * 2:
        raise MXNetValueError(
            f"multivariate_normal: expected mean of shape (N,) and cov of shape (N, N), got "
            f"{tuple(jnp.shape(mean))} and {tuple(jnp.shape(cov))}")
    dt = _float_dtype("multivariate_normal", dtype)
    cdt = _compute_dtype(dt)
    shape = _size("multivariate_normal", size) or ()
    return _r.multivariate_normal(key, jnp.asarray(mean, cdt), jnp.asarray(cov, cdt), shape, cdt,
                                  method="svd").astype(dt)


# -- discrete distributions --------------------------------------------------------------------
def _int_dtype(dtype: Any) -> Any:
    """Discrete samples are int64 (NumPy's default integer) unless a dtype is given."""
    return jnp.dtype(dtype) if dtype is not None else jnp.dtype(jnp.int64)


@defop("_npi_random_randint", needs_key=True, differentiable=False)
def randint(key, low, high, *, size: shape | None = None, dtype: dtype | None = None):
    """Random integers from [low, high) (int64 unless ``dtype`` says otherwise)."""
    shape = _out_shape("randint", size, low, high)
    dt = _int_dtype(dtype)
    if not jnp.issubdtype(dt, jnp.integer):  # an explicit float dtype: draw integers, then cast
        return _r.randint(key, shape, low, high, jnp.int64).astype(dt)
    return _r.randint(key, shape, jnp.asarray(low, dt), jnp.asarray(high, dt), dt)


@defop("_npi_poisson", needs_key=True, differentiable=False)
def poisson(key, lam=1.0, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the Poisson distribution with rate ``lam`` (int64 by default)."""
    shape = _out_shape("poisson", size, lam)
    lam = jnp.broadcast_to(jnp.asarray(lam, jnp.float64), shape)
    return _r.poisson(key, lam, shape, jnp.int64).astype(_int_dtype(dtype))


@defop("_npi_binomial", needs_key=True, differentiable=False)
def binomial(key, n, p, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the binomial distribution: successes in ``n`` trials of probability ``p``."""
    shape = _out_shape("binomial", size, n, p)
    draws = _r.binomial(key, jnp.asarray(n, jnp.float64), jnp.asarray(p, jnp.float64), shape, jnp.float64)
    return draws.astype(_int_dtype(dtype))


@defop("_npi_negative_binomial", needs_key=True, differentiable=False)
def negative_binomial(key, n, p, *, size: shape | None = None, dtype: dtype | None = None):
    """Samples from the negative binomial distribution: failures before ``n`` successes of probability ``p``."""
    shape = _out_shape("negative_binomial", size, n, p)
    kg, kp = _r.split(key)
    n, p = jnp.asarray(n, jnp.float64), jnp.asarray(p, jnp.float64)
    # a gamma-Poisson mixture: rate ~ Gamma(n, (1 - p) / p)
    rate = _r.gamma(kg, jnp.broadcast_to(n, shape), shape, jnp.float64) * ((1.0 - p) / p)
    return _r.poisson(kp, rate, shape, jnp.int64).astype(_int_dtype(dtype))


@defop("_npi_multinomial", needs_key=True, differentiable=False)
def multinomial(key, pvals, *, n: int = 1, size: shape | None = None):
    """Counts of ``n`` draws over the ``len(pvals)`` outcomes: shape ``size + (len(pvals),)``, int64."""
    if jnp.ndim(pvals) != 1:
        raise MXNetValueError(f"multinomial: pvals must be 1-D, got shape {tuple(jnp.shape(pvals))}")
    if n < 0:
        raise MXNetValueError(f"multinomial: n must be non-negative, got {n}")
    shape = (_size("multinomial", size) or ()) + (jnp.shape(pvals)[0],)
    draws = _r.multinomial(key, n, jnp.asarray(pvals, jnp.float64), shape=shape, dtype=jnp.float64)
    return draws.astype(jnp.int64)


@defop("_npi_bernoulli", needs_key=True, differentiable=False)
def bernoulli(key, prob=None, logit=None, *, size: shape | None = None, dtype: dtype | None = None,
              is_logit: bool = False):
    """Samples in {0, 1} with success probability ``prob`` (or ``sigmoid(logit)``)."""
    if is_logit and logit is None:  # MXNet's JSON passes either parameter as the one input
        prob, logit = None, prob
    if (prob is None) == (logit is None):
        raise MXNetValueError("bernoulli: give exactly one of prob and logit")
    param = logit if prob is None else prob
    shape = _out_shape("bernoulli", size, param)
    p = jax.nn.sigmoid(jnp.asarray(logit)) if prob is None else jnp.asarray(prob)
    return _r.bernoulli(key, p, shape).astype(resolve_dtype(dtype))


@defop("_npi_choice", needs_key=True, differentiable=False)
def choice(key, p=None, *, a: int = 1, size: shape | None = None, replace: bool = True,
           weighted: bool = False):
    """Indices in [0, a) drawn with or without replacement, uniformly or with probabilities ``p``."""
    shape = _size("choice", size) or ()
    count = 1
    for s in shape:
        count *= s
    if a < 0 or (a == 0 and count > 0):
        raise MXNetValueError(f"choice: a must be a positive integer (the population size), got {a}")
    if p is not None and jnp.shape(p) != (a,):
        raise MXNetValueError(f"choice: p must have shape ({a},) to match a, got {tuple(jnp.shape(p))}")
    if not replace and count > a:
        raise MXNetValueError(
            f"choice: cannot take a larger sample ({count}) than the population ({a}) when replace=False")
    return _r.choice(key, a, shape, replace, None if p is None else jnp.asarray(p)).astype(jnp.int64)


@defop("_npi_shuffle", aliases=("_shuffle",), needs_key=True)
def shuffle(key, x):
    """A copy of ``x`` with its first axis randomly permuted."""
    if jnp.ndim(x) == 0:
        raise MXNetValueError("shuffle: expected an array with at least one dimension, got a 0-d array")
    return _r.permutation(key, x, axis=0, independent=False)


@defop("_npi_categorical", needs_key=True, num_outputs=2, differentiable=False)
def categorical(key, data, *, shape: shape | None = None, dtype: dtype = "int32"):
    """Class indices drawn from probability rows ``data[..., :]``: shape ``data.shape[:-1] + shape``,
    with the log-probabilities of the drawn indices as the second output."""
    if jnp.ndim(data) < 1:
        raise MXNetValueError("multinomial: data must hold probabilities along its last axis, got a 0-d array")
    extra = _size("multinomial", shape) or ()
    batch = tuple(jnp.shape(data)[:-1])
    logp = jnp.log(jnp.asarray(data, jnp.float32) if not jnp.issubdtype(data.dtype, jnp.floating) else data)
    expanded = logp.reshape(batch + (1,) * len(extra) + logp.shape[-1:])
    idx = _r.categorical(key, expanded, axis=-1, shape=batch + extra)
    picked = jnp.take_along_axis(jnp.broadcast_to(expanded, batch + extra + logp.shape[-1:]),
                                 idx[..., None], axis=-1)[..., 0]
    return idx.astype(jnp.dtype(dtype)), picked
