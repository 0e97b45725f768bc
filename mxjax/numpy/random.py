"""``mx.np.random``: NumPy's sampling functions on the seeded stream shared with ``mx.random``.

Each function is a thin wrapper over one registered random op: it gives NumPy's
signature, turns lists into arrays, and checks concrete (Python or NumPy)
parameters the way NumPy does (``normal(0, -1)`` raises ``ValueError: scale``...).
Device arrays are not checked: that would wait for their values.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as onp

from .. import _rng
from ..base import MXNetIndexError, MXNetTypeError, MXNetValueError
from .._ndarray import NDArray
from .._util_wrappers import wrap_ctx_to_device_func  # noqa: F401  (MXNet 2.0 exports it here too)
from ._creation import array
from ._maker import np_function

_uniform = np_function("_npi_uniform", name="uniform")
_normal = np_function("_npi_normal", name="normal")
_randint = np_function("_npi_random_randint", name="randint")
_choice = np_function("_npi_choice", name="choice")
_shuffle = np_function("_npi_shuffle", name="shuffle")
_gamma = np_function("_npi_gamma", name="gamma")
_beta = np_function("_npi_beta", name="beta")
_exponential = np_function("_npi_exponential", name="exponential")
_poisson = np_function("_npi_poisson", name="poisson")
_binomial = np_function("_npi_binomial", name="binomial")
_negative_binomial = np_function("_npi_negative_binomial", name="negative_binomial")
_multinomial = np_function("_npi_multinomial", name="multinomial")
_multivariate_normal = np_function("_npi_multivariate_normal", name="multivariate_normal")
_laplace = np_function("_npi_laplace", name="laplace")
_gumbel = np_function("_npi_gumbel", name="gumbel")
_logistic = np_function("_npi_logistic", name="logistic")
_lognormal = np_function("_npi_lognormal", name="lognormal")
_rayleigh = np_function("_npi_rayleigh", name="rayleigh")
_weibull = np_function("_npi_weibull", name="weibull")
_pareto = np_function("_npi_pareto", name="pareto")
_power = np_function("_npi_powerd", name="power")


def binds(binding: Callable) -> Callable[[Callable], Callable]:
    """Mark a wrapper as the front-end of ``binding``'s op (``fn.op``, as generated bindings have)."""
    def mark(fn: Callable) -> Callable:
        fn.op = binding.op  # type: ignore[attr-defined]
        return fn
    return mark


# -- argument handling shared with mx.random -------------------------------------------------
def as_input(x: Any) -> Any:
    """Lists and tuples become NumPy arrays: op inputs are arrays or scalars."""
    return onp.asarray(x) if isinstance(x, (list, tuple)) else x


def require(fname: str, test: Callable[[Any], Any], expect: str, **params: Any) -> None:
    """Raise NumPy's ValueError when a concrete parameter fails ``test`` (device arrays: unchecked)."""
    for pname, value in params.items():
        if value is None or isinstance(value, NDArray):
            continue
        v = onp.asarray(value)
        if v.dtype.kind in "biuf" and not onp.all(test(v)):
            raise MXNetValueError(f"{fname}: {pname} must be {expect}, got {value!r}")


def _nonneg(fname: str, **params: Any) -> None:
    require(fname, lambda v: v >= 0, ">= 0", **params)


def _positive(fname: str, **params: Any) -> None:
    require(fname, lambda v: v > 0, "> 0", **params)


def _draw(binding: Callable, *inputs: Any, size: Any = None, out: Any = None, **params: Any) -> Any:
    if out is not None and size is None:  # MXNet: out= gives the shape
        size = out.shape
    if isinstance(size, (int, onp.integer)):  # one spelling per shape: one compiled sampler
        size = (int(size),)
    return binding(*(as_input(x) for x in inputs), size=size, out=out, **params)


# -- the stream --------------------------------------------------------------------------------
def seed(seed_state: Any = None, device: Any = "all") -> None:
    """Restart the random stream (shared with ``mx.random.seed``); None draws a fresh seed.  MXNet 2.0's
    arguments (``device`` is accepted: one stream serves every device)."""
    _rng.seed(onp.random.SeedSequence().entropy & 0xFFFFFFFF if seed_state is None else seed_state, device)


# -- continuous distributions ------------------------------------------------------------------
@binds(_uniform)
def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
            out: Any = None, **kwargs: Any) -> Any:
    """Samples from the uniform distribution on [low, high)."""
    return _draw(_uniform, low, high, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_normal)
def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
           out: Any = None, **kwargs: Any) -> Any:
    """Samples from the normal distribution N(loc, scale**2)."""
    _nonneg("normal", scale=scale)
    return _draw(_normal, loc, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_normal)
def standard_normal(size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
                    **kwargs: Any) -> Any:
    """Samples from the standard normal distribution N(0, 1)."""
    return _draw(_normal, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_uniform)
def rand(*size: int, **kwargs: Any) -> Any:
    """Uniform samples on [0, 1) of shape ``size``."""
    return _draw(_uniform, size=size, **kwargs)


@binds(_normal)
def randn(*size: int, **kwargs: Any) -> Any:
    """Standard normal samples of shape ``size``."""
    return _draw(_normal, size=size, **kwargs)


@binds(_uniform)
def random(size: Any = None, dtype: Any = None, device: Any = None, out: Any = None, **kwargs: Any) -> Any:
    """Uniform samples on [0, 1)."""
    return _draw(_uniform, size=size, dtype=dtype, device=device, out=out, **kwargs)


random_sample = random


@binds(_lognormal)
def lognormal(mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
              out: Any = None, **kwargs: Any) -> Any:
    """Samples whose logarithm is normal with the given mean and sigma."""
    _nonneg("lognormal", sigma=sigma)
    return _draw(_lognormal, mean, sigma, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_laplace)
def laplace(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
            out: Any = None, **kwargs: Any) -> Any:
    """Samples from the Laplace (double exponential) distribution."""
    _nonneg("laplace", scale=scale)
    return _draw(_laplace, loc, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_gumbel)
def gumbel(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
           out: Any = None, **kwargs: Any) -> Any:
    """Samples from the Gumbel (extreme value type I) distribution."""
    _nonneg("gumbel", scale=scale)
    return _draw(_gumbel, loc, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_logistic)
def logistic(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
             out: Any = None, **kwargs: Any) -> Any:
    """Samples from the logistic distribution."""
    _nonneg("logistic", scale=scale)
    return _draw(_logistic, loc, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_gamma)
def gamma(shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None,
          out: Any = None, **kwargs: Any) -> Any:
    """Samples from the gamma distribution with the given shape (k) and scale (theta)."""
    _nonneg("gamma", shape=shape, scale=scale)
    return _draw(_gamma, shape, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_gamma)
def standard_gamma(shape: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
                   **kwargs: Any) -> Any:
    """Samples from the gamma distribution with scale 1."""
    _nonneg("standard_gamma", shape=shape)
    return _draw(_gamma, shape, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_beta)
def beta(a: Any, b: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
         **kwargs: Any) -> Any:
    """Samples from the beta distribution."""
    _positive("beta", a=a, b=b)
    return _draw(_beta, a, b, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_gamma)
def chisquare(df: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
              **kwargs: Any) -> Any:
    """Samples from the chi-square distribution with ``df`` degrees of freedom: ``gamma(df / 2, 2)``."""
    _positive("chisquare", df=df)
    half = as_input(df) / 2
    return _draw(_gamma, half, 2.0, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_gamma)
def f(dfnum: Any, dfden: Any, size: Any = None, device: Any = None) -> Any:
    """Samples from the F distribution: ``(chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden)``."""
    _positive("f", dfnum=dfnum, dfden=dfden)
    num = chisquare(dfnum, size=size, device=device) / as_input(dfnum)
    return num / (chisquare(dfden, size=size, device=device) / as_input(dfden))


@binds(_exponential)
def exponential(scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
                **kwargs: Any) -> Any:
    """Samples from the exponential distribution with the given scale (1 / rate)."""
    _nonneg("exponential", scale=scale)
    return _draw(_exponential, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_exponential)
def standard_exponential(size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
                         **kwargs: Any) -> Any:
    """Samples from the exponential distribution with scale 1."""
    return _draw(_exponential, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_rayleigh)
def rayleigh(scale: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
             **kwargs: Any) -> Any:
    """Samples from the Rayleigh distribution with the given scale (its mode)."""
    _nonneg("rayleigh", scale=scale)
    return _draw(_rayleigh, scale, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_weibull)
def weibull(a: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
            **kwargs: Any) -> Any:
    """Samples from the standard Weibull distribution with shape a."""
    _nonneg("weibull", a=a)
    return _draw(_weibull, a, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_pareto)
def pareto(a: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
           **kwargs: Any) -> Any:
    """Samples from the Pareto II (Lomax) distribution with shape a."""
    _positive("pareto", a=a)
    return _draw(_pareto, a, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_power)
def power(a: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
          **kwargs: Any) -> Any:
    """Samples in [0, 1] from the power distribution with exponent a - 1."""
    _positive("power", a=a)
    return _draw(_power, a, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_multivariate_normal)
def multivariate_normal(mean: Any, cov: Any, size: Any = None, check_valid: str = "warn", tol: float = 1e-8,
                        dtype: Any = None, device: Any = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples of shape ``size + (N,)`` from the multivariate normal N(mean, cov)."""
    if check_valid not in ("warn", "raise", "ignore"):
        raise MXNetValueError(f"multivariate_normal: check_valid must be 'warn', 'raise' or 'ignore', "
                              f"got {check_valid!r}")
    # NumPy's test of positive semi-definiteness: of host data; of device arrays only when asked to
    # raise (it syncs); never of a Symbol (no values yet)
    host = isinstance(cov, (list, tuple, onp.ndarray))
    if check_valid != "ignore" and (host or (check_valid == "raise" and isinstance(cov, NDArray))):
        c = cov.asnumpy() if isinstance(cov, NDArray) else onp.asarray(cov, dtype=onp.float64)
        if c.ndim == 2 and c.shape[0] == c.shape[1]:
            _, s, vh = onp.linalg.svd(c)
            if not onp.allclose((vh.T * s) @ vh, c, rtol=tol, atol=tol):
                message = "multivariate_normal: covariance is not symmetric positive-semidefinite."
                if check_valid == "raise":
                    raise MXNetValueError(message)
                import warnings
                warnings.warn(message, RuntimeWarning, stacklevel=2)
    return _draw(_multivariate_normal, mean, cov, size=size, dtype=dtype, device=device, out=out, **kwargs)


# -- discrete distributions -------------------------------------------------------------------
@binds(_randint)
def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = None, device: Any = None,
            out: Any = None, **kwargs: Any) -> Any:
    """Random integers from [low, high), or [0, low) without ``high`` (int64 by default)."""
    if high is None:
        low, high = 0, low
    if not isinstance(low, NDArray) and not isinstance(high, NDArray) and \
            not onp.all(onp.asarray(low) < onp.asarray(high)):
        raise MXNetValueError(f"randint: low >= high (low={low!r}, high={high!r})")
    return _draw(_randint, low, high, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_poisson)
def poisson(lam: Any = 1.0, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
            **kwargs: Any) -> Any:
    """Samples from the Poisson distribution with rate ``lam`` (int64)."""
    _nonneg("poisson", lam=lam)
    return _draw(_poisson, lam, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_binomial)
def binomial(n: Any, p: Any, size: Any = None, dtype: Any = None, device: Any = None, out: Any = None,
             **kwargs: Any) -> Any:
    """Samples from the binomial distribution: successes in ``n`` trials of probability ``p`` (int64)."""
    _nonneg("binomial", n=n)
    require("binomial", lambda v: (v >= 0) & (v <= 1), "in [0, 1]", p=p)
    return _draw(_binomial, n, p, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_negative_binomial)
def negative_binomial(n: Any, p: Any, size: Any = None, dtype: Any = None, device: Any = None,
                      out: Any = None, **kwargs: Any) -> Any:
    """Samples from the negative binomial distribution: failures before ``n`` successes (int64)."""
    _positive("negative_binomial", n=n)
    require("negative_binomial", lambda v: (v > 0) & (v <= 1), "in (0, 1]", p=p)
    return _draw(_negative_binomial, n, p, size=size, dtype=dtype, device=device, out=out, **kwargs)


@binds(_multinomial)
def multinomial(n: int, pvals: Any, size: Any = None, device: Any = None, out: Any = None,
                **kwargs: Any) -> Any:
    """Counts of ``n`` experiments over ``len(pvals)`` outcomes: shape ``size + (len(pvals),)``, int64."""
    if n < 0:
        raise MXNetValueError(f"multinomial: n must be >= 0, got {n}")
    if not isinstance(pvals, NDArray):
        pv = onp.asarray(pvals, dtype=onp.float64)
        if pv.ndim != 1:
            raise MXNetValueError(f"multinomial: pvals must be 1-dimensional, got shape {pv.shape}")
        if onp.any(pv < 0) or onp.any(pv > 1) or pv[:-1].sum() > 1.0 + 1e-12:
            raise MXNetValueError(f"multinomial: pvals must be probabilities with sum(pvals[:-1]) <= 1, "
                                  f"got {pvals!r}")
        pvals = pv
    return _draw(_multinomial, pvals, n=int(n), size=size, device=device, out=out, **kwargs)


@binds(_choice)
def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None, device: Any = None,
           out: Any = None, **kwargs: Any) -> Any:
    """Random sample from ``arange(a)`` (a an int) or from the elements of the 1-D array ``a``."""
    if p is not None and not isinstance(p, NDArray):
        pv = onp.asarray(p, dtype=onp.float64)
        if pv.ndim != 1:
            raise MXNetValueError(f"choice: p must be 1-dimensional, got shape {pv.shape}")
        if onp.any(pv < 0):
            raise MXNetValueError("choice: probabilities are not non-negative")
        if abs(pv.sum() - 1.0) > onp.sqrt(onp.finfo(onp.float64).eps):
            raise MXNetValueError(f"choice: probabilities do not sum to 1 (sum {pv.sum()})")
        p = pv
    if isinstance(a, (int, onp.integer)):
        return _choice(p, a=int(a), size=size, replace=bool(replace), weighted=p is not None,
                       device=device, out=out, **kwargs)
    population = a if isinstance(a, NDArray) else array(a)
    if population.ndim != 1:
        raise MXNetValueError(f"choice: a must be 1-dimensional or an integer, got shape {population.shape}")
    picks = _choice(p, a=population.shape[0], size=size, replace=bool(replace), weighted=p is not None,
                    device=device, **kwargs)
    result = population[picks]
    if out is not None:
        out._assign(result, "choice")
        return out
    return result


@binds(_shuffle)
def shuffle(x: Any) -> None:
    """Shuffle ``x`` in place along its first axis."""
    if not isinstance(x, NDArray):
        raise MXNetTypeError(f"shuffle: x must be an mx.np.ndarray (shuffled in place), got {type(x).__name__}")
    if x.ndim == 0:
        raise MXNetTypeError("shuffle: len() of unsized object: x must have at least one dimension")
    x._assign(_shuffle(x), "shuffle")


@binds(_shuffle)
def permutation(x: Any) -> Any:
    """A permuted copy of ``x`` along its first axis, or a permutation of ``arange(x)`` for an int."""
    if isinstance(x, (int, onp.integer)):
        return _shuffle(onp.arange(int(x), dtype=onp.int64))
    x = x if isinstance(x, NDArray) else array(x)
    if x.ndim == 0:
        raise MXNetIndexError("permutation: x must be an integer or at least 1-dimensional")
    return _shuffle(x)


__all__ = ["seed", "uniform", "normal", "standard_normal", "rand", "randn", "random", "random_sample",
           "lognormal", "laplace", "gumbel", "logistic", "gamma", "standard_gamma", "beta", "chisquare", "f",
           "exponential", "standard_exponential", "rayleigh", "weibull", "pareto", "power",
           "multivariate_normal", "randint", "poisson", "binomial", "negative_binomial", "multinomial",
           "choice", "shuffle", "permutation"]
