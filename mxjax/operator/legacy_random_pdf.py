"""MXNet 1.x's ``_random_pdf_*`` densities and the multi-class samplers ``_sample_multinomial`` /
``_sample_categorical``.

A density op takes ``sample`` of shape ``P + S`` and parameter arrays of shape ``P``
(``P + (k,)`` for the Dirichlet, whose samples are ``P + S + (k,)``) and returns the
density (``is_log``: its logarithm) of each sample under its row's parameters, shape
``P + S``.  Gradients flow to the samples and the parameters (``jax.vjp``).
"""
from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
from jax.scipy import special

from ..base import MXNetValueError
from ._dtypes import resolve_dtype
from .legacy_random import _sample_dtype, _shape, _signature
from .random import categorical
from .registry import OpDef, register_op


def _logpdf_normal(x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - jnp.log(sigma) - 0.5 * jnp.log(2 * jnp.pi)


def _logpdf_uniform(x, low, high):
    return jnp.where((x >= low) & (x <= high), -jnp.log(high - low), -jnp.inf)


def _logpdf_gamma(x, alpha, beta):  # beta is the scale
    return (alpha - 1) * jnp.log(x) - x / beta - special.gammaln(alpha) - alpha * jnp.log(beta)


def _logpdf_exponential(x, lam):
    return jnp.log(lam) - lam * x


def _logpdf_poisson(x, lam):
    return x * jnp.log(lam) - lam - special.gammaln(x + 1)


def _logpdf_negative_binomial(x, k, p):  # failures x before the k-th success
    return (special.gammaln(x + k) - special.gammaln(x + 1) - special.gammaln(k)
            + k * jnp.log(p) + x * jnp.log1p(-p))


def _logpdf_generalized_negative_binomial(x, mu, alpha):
    k = 1.0 / alpha
    return _logpdf_negative_binomial(x, k, 1.0 / (1.0 + alpha * mu))


def _density(name: str, logpdf: Callable, params: tuple) -> OpDef:
    op = f"_random_pdf_{name}"

    def compute(sample, *values, is_log=False):
        pshape = tuple(jnp.shape(values[0]))
        if any(tuple(jnp.shape(v)) != pshape for v in values) or tuple(sample.shape[:len(pshape)]) != pshape:
            raise MXNetValueError(
                f"{op}: sample {tuple(sample.shape)} must start with the parameters' common shape; got "
                f"parameter shapes {[tuple(jnp.shape(v)) for v in values]}")
        extra = (1,) * (sample.ndim - len(pshape))
        out = logpdf(sample, *(v.reshape(pshape + extra) for v in values))
        return (out if is_log else jnp.exp(out)).astype(sample.dtype)
    return _register(op, compute, ("sample", *params), f"The {name} density of each sample under its row's "
                     "parameters (``is_log``: the log-density).")


def _dirichlet(sample, alpha, *, is_log=False):
    pshape = tuple(alpha.shape[:-1])
    if alpha.ndim < 1 or sample.shape[:len(pshape)] != pshape or sample.shape[-1:] != alpha.shape[-1:]:
        raise MXNetValueError(f"_random_pdf_dirichlet: sample {tuple(sample.shape)} must be alpha's batch shape "
                              f"+ S + (k,) for alpha {tuple(alpha.shape)}")
    a = alpha.reshape(pshape + (1,) * (sample.ndim - alpha.ndim) + alpha.shape[-1:])
    out = (jnp.sum((a - 1) * jnp.log(sample), axis=-1) + special.gammaln(jnp.sum(a, axis=-1))
           - jnp.sum(special.gammaln(a), axis=-1))
    return (out if is_log else jnp.exp(out)).astype(sample.dtype)


def _register(name: str, compute: Callable, inputs: tuple, doc: str) -> OpDef:
    compute.__signature__ = _signature(inputs, (("is_log", False, "bool"),))  # type: ignore[attr-defined]
    return register_op(OpDef(name, compute, doc=doc, aliases=(name[1:],)))


DENSITIES = {
    "normal": _density("normal", _logpdf_normal, ("mu", "sigma")),
    "uniform": _density("uniform", _logpdf_uniform, ("low", "high")),
    "gamma": _density("gamma", _logpdf_gamma, ("alpha", "beta")),
    "exponential": _density("exponential", _logpdf_exponential, ("lam",)),
    "poisson": _density("poisson", _logpdf_poisson, ("lam",)),
    "negative_binomial": _density("negative_binomial", _logpdf_negative_binomial, ("k", "p")),
    "generalized_negative_binomial": _density("generalized_negative_binomial",
                                              _logpdf_generalized_negative_binomial, ("mu", "alpha")),
    "dirichlet": _register("_random_pdf_dirichlet", _dirichlet, ("sample", "alpha"),
                           "The Dirichlet density of each sample (last axis: the k components)."),
}


def sample_multinomial(key, n, p, *, shape: shape | None = None, dtype: dtype | None = None):
    """Counts of ``n`` draws over the ``k`` classes of each row of ``p`` (shape ``P + (k,)``, ``n`` of
    shape ``P``): output ``P + shape + (k,)``, float32 unless ``dtype``."""
    pshape = tuple(p.shape[:-1])
    if p.ndim < 1 or tuple(jnp.shape(n)) != pshape:
        raise MXNetValueError(f"_sample_multinomial: n {tuple(jnp.shape(n))} must have p's batch shape "
                              f"{pshape} (p: {tuple(p.shape)})")
    dt, _ = _sample_dtype("_sample_multinomial", dtype)
    extra = _shape("_sample_multinomial", shape, required=False)
    counts = jnp.asarray(n, jnp.float64).reshape(pshape + (1,) * len(extra))
    probs = jnp.asarray(p, jnp.float64).reshape(pshape + (1,) * len(extra) + p.shape[-1:])
    draws = jax.random.multinomial(key, counts, probs, shape=pshape + extra + p.shape[-1:], dtype=jnp.float64)
    return draws.astype(dt)


register_op(OpDef("_sample_multinomial", sample_multinomial, aliases=("sample_multinomial",), needs_key=True,
               differentiable=False))


def sample_categorical(key, data, *, shape: shape | None = None, get_prob: bool = False,
                       dtype: dtype = "int32"):
    """Class indices drawn from the probability rows of ``data`` (shape ``P + (k,)``): output ``P + shape``
    (int32 unless ``dtype``), with the log-probabilities of the draws as a second output if ``get_prob``."""
    idx, logp = categorical.compute(key, data, shape=shape, dtype=resolve_dtype(dtype).name)
    return (idx, logp.astype(data.dtype)) if get_prob else idx


register_op(OpDef("_sample_categorical", sample_categorical, aliases=("sample_categorical",), needs_key=True,
               differentiable=False, num_outputs=lambda params: 2 if params.get("get_prob") else 1))
