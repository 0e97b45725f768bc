"""Random-generator statistics for ``mx.test_utils`` (re-exported there): equal-probability buckets,
Pearson's chi-square test of a sampler against them, and mean / variance checks.

The chi-square p-value comes from JAX's regularized incomplete gamma function, as SciPy is not a
dependency; a module of its own because it is the one part of ``test_utils`` that reasons about
distributions rather than single arrays.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp
import jax.scipy.special as jsp_special
import numpy as onp

from . import _config
from ._ndarray import NDArray
from .base import MXNetValueError

__all__ = ["gen_buckets_probs_with_ppf", "chi_square_check", "verify_generator", "mean_check", "var_check"]


def gen_buckets_probs_with_ppf(ppf: Callable, nbuckets: int) -> tuple:
    """``nbuckets`` equal-probability buckets ``(ppf(i/n), ppf((i+1)/n))`` and their probabilities."""
    if nbuckets <= 0:
        raise MXNetValueError(f"gen_buckets_probs_with_ppf: nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def _samples(generator: Callable, nsamples: int) -> onp.ndarray:
    out = generator(nsamples)
    return onp.asarray(out.asnumpy() if isinstance(out, NDArray) else out).ravel()


def _chi2_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for a chi-square variable with ``dof`` degrees of freedom."""
    with _config.x64():
        return float(jsp_special.gammaincc(jnp.float64(dof / 2.0), jnp.float64(statistic / 2.0)))


def chi_square_check(generator: Callable, buckets: list, probs: Any, nsamples: int = 1000000) -> tuple:
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.

    ``buckets`` holds (low, high) ranges for a continuous distribution, or the possible
    values of a discrete one.  Returns (p value, observed counts, expected counts).
    """
    if not isinstance(buckets, list) or len(probs) != len(buckets) or not buckets:
        raise MXNetValueError(f"chi_square_check: buckets must be a non-empty list as long as probs "
                              f"({len(probs)}), got {type(buckets).__name__} of length {len(buckets)}")
    samples = _samples(generator, nsamples)
    if isinstance(buckets[0], (list, tuple)):
        edges = onp.array([edge for bucket in buckets for edge in bucket], dtype=onp.float64)
        if onp.any(onp.diff(edges) < 0):
            raise MXNetValueError("chi_square_check: buckets must be ascending ranges that do not overlap")
        ids = onp.searchsorted(edges, samples, side="right")
        inside = ids % 2 == 1  # between a bucket's low and high edge
        obs_freq = onp.bincount(ids[inside] // 2, minlength=len(buckets))[:len(buckets)]
    else:
        obs_freq = onp.array([(samples == value).sum() for value in buckets])
    expected_freq = nsamples * onp.asarray(probs, dtype=onp.float64)
    statistic = float(onp.sum((obs_freq - expected_freq) ** 2 / expected_freq))
    return _chi2_sf(statistic, len(buckets) - 1), obs_freq, expected_freq


def verify_generator(generator: Callable, buckets: list, probs: Any, nsamples: int = 1000000, nrepeat: int = 5,
                     success_rate: float = 0.2, alpha: float = 0.05) -> list:
    """Run ``chi_square_check`` ``nrepeat`` times; AssertionError unless a share ``success_rate`` has p > alpha."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [p for p, _, _ in runs]
    if sum(p > alpha for p in p_values) < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={p_values}, "
                             f"obs_freq={[r[1].tolist() for r in runs]}, "
                             f"expected_freq={[r[2].tolist() for r in runs]}.\nbuckets={buckets}, probs={probs}")
    return p_values


def mean_check(generator: Callable, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample mean lies within mu +- 3 sigma / sqrt(n)."""
    mean = _samples(generator, nsamples).mean()
    half = 3 * sigma / onp.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator: Callable, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance lies within sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))."""
    var = _samples(generator, nsamples).var(ddof=1)
    half = 3 * onp.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)
