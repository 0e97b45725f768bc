"""MXNet 1.x's random ops: ``_random_*`` (scalar parameters), ``_random_*_like``, ``_sample_*``
(one draw of ``shape`` per element of parameter arrays) and the ``_random_pdf_*`` densities.

Every sampler takes a PRNG key first (the front-end draws it from the seeded stream in
``mxjax._rng``, so ``mx.random.seed`` makes them reproducible and hybridized graphs get
a fresh key per call).  1.x conventions: float32 output unless ``dtype`` says otherwise,
also for the counting distributions (poisson, binomial...), int32 for ``randint``;
``_sample_*`` parameter arrays share one shape ``P`` and give ``P + shape``.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import jax
import jax.numpy as jnp

from ..base import MXNetTypeError, MXNetValueError
from ._dtypes import resolve_dtype
from .registry import OpDef, register_op

_r = jax.random


def _gamma(key, alpha, beta, shape, dt):
    return _r.gamma(key, jnp.broadcast_to(alpha, shape), shape, dt) * beta


def _poisson(key, lam, shape, dt):
    return _r.poisson(key, jnp.broadcast_to(lam, shape), shape, jnp.int64).astype(dt)


def _negative_binomial(key, k, p, shape, dt):
    # failures before the k-th success: Poisson with a Gamma(k, (1 - p) / p) rate
    kg, kp = _r.split(key)
    return _poisson(kp, _gamma(kg, k, (1.0 - p) / p, shape, dt), shape, dt)


def _generalized_negative_binomial(key, mu, alpha, shape, dt):
    # Poisson with a Gamma(1 / alpha, alpha * mu) rate; alpha = 0 is Poisson(mu)
    kg, kp = _r.split(key)
    safe = jnp.where(alpha == 0, 1.0, alpha)
    rate = jnp.where(alpha == 0, mu, _gamma(kg, 1.0 / safe, safe * mu, shape, dt))
    return _poisson(kp, rate, shape, dt)


def _binomial(key, n, p, shape, dt):
    return _r.binomial(key, jnp.broadcast_to(n, shape), jnp.broadcast_to(p, shape), shape, dt)


# distribution -> ((parameter, default) pairs, sampler(key, *params, shape, dtype))
DISTRIBUTIONS: dict[str, tuple[tuple, Callable]] = {
    "uniform": ((("low", 0.0), ("high", 1.0)), lambda k, lo, hi, s, d: lo + (hi - lo) * _r.uniform(k, s, d)),
    "normal": ((("loc", 0.0), ("scale", 1.0)), lambda k, mu, sd, s, d: mu + sd * _r.normal(k, s, d)),
    "gamma": ((("alpha", 1.0), ("beta", 1.0)), _gamma),
    "exponential": ((("lam", 1.0),), lambda k, lam, s, d: _r.exponential(k, s, d) / lam),
    "poisson": ((("lam", 1.0),), _poisson),
    "negative_binomial": ((("k", 1), ("p", 1.0)), _negative_binomial),
    "generalized_negative_binomial": ((("mu", 1.0), ("alpha", 1.0)), _generalized_negative_binomial),
    "binomial": ((("n", 1), ("p", 1.0)), _binomial),
}
# the ``_sample_*`` ops name some parameters differently from ``_random_*`` (MXNet's own names)
_SAMPLE_NAMES = {"normal": ("mu", "sigma")}


def _shape(op: str, shape: Any, required: bool = True) -> tuple:
    shape = () if shape is None else (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise MXNetValueError(f"{op}: negative dimensions are not allowed in shape {shape}")
    if required and not shape:
        raise MXNetValueError(f"{op}: shape is required (the legacy random ops have no scalar output)")
    return shape


def _sample_dtype(op: str, dtype: Any) -> tuple:
    """(output dtype, dtype to sample in): float32 by default, half precision sampled in float32."""
    dt = jnp.dtype("float32") if dtype in (None, "None") else resolve_dtype(dtype)
    if not jnp.issubdtype(dt, jnp.floating):
        raise MXNetTypeError(f"{op}: dtype must be a floating-point type, got {dt.name}")
    return dt, (jnp.dtype(jnp.float32) if dt.itemsize < 4 else dt)


def _signature(inputs: tuple, params: tuple) -> inspect.Signature:
    """A compute signature the registry reads: positional array inputs, typed keyword-only parameters."""
    P = inspect.Parameter
    return inspect.Signature([P(n, P.POSITIONAL_OR_KEYWORD) for n in inputs]
                             + [P(n, P.KEYWORD_ONLY, default=d, annotation=t) for n, d, t in params])


def _defop(name: str, compute: Callable, inputs: tuple, params: tuple, doc: str, **options: Any) -> OpDef:
    """Register ``compute(*arrays, **kw)`` under a generated signature; ``kw`` gets every default."""
    defaults = {n: d for n, d, _ in params}

    def with_defaults(*arrays: Any, **kw: Any) -> Any:
        return compute(*arrays, **{**defaults, **kw})
    with_defaults.__signature__ = _signature(inputs, params)  # type: ignore[attr-defined]
    with_defaults.__name__ = name
    return register_op(OpDef(name, with_defaults, doc=doc, **options))


def random_op(dist: str, aliases: tuple = ()) -> OpDef:
    """``_random_<dist>``: samples of ``shape`` with scalar parameters (1.x ``nd.random_<dist>``)."""
    spec, sampler = DISTRIBUTIONS[dist]
    op = f"_random_{dist}"

    def compute(key, **kw):
        dt, cdt = _sample_dtype(op, kw["dtype"])
        values = [jnp.asarray(kw[p], cdt) for p, _ in spec]
        return sampler(key, *values, _shape(op, kw["shape"]), cdt).astype(dt)
    params = tuple((p, d, "float") for p, d in spec) + (("shape", None, "shape | None"), ("ctx", "", "str"),
                                                         ("dtype", None, "dtype | None"))
    return _defop(op, compute, ("key",), params, f"Samples of ``shape`` from the {dist} distribution "
                  "with scalar parameters (float32 unless ``dtype``).", aliases=(f"random_{dist}", *aliases),
                  needs_key=True, differentiable=False)


def random_like_op(dist: str) -> OpDef:
    """``_random_<dist>_like``: samples of ``data``'s shape and dtype."""
    spec, sampler = DISTRIBUTIONS[dist]
    op = f"_random_{dist}_like"

    def compute(key, data, **kw):
        dt, cdt = _sample_dtype(op, jnp.dtype(data.dtype).name)
        values = [jnp.asarray(kw[p], cdt) for p, _ in spec]
        return sampler(key, *values, tuple(data.shape), cdt).astype(dt)
    params = tuple((p, d, "float") for p, d in spec)
    return _defop(op, compute, ("key", "data"), params, f"Samples from the {dist} distribution of the shape "
                  "and dtype of ``data``.", needs_key=True, differentiable=False)


def sample_op(dist: str) -> OpDef:
    """``_sample_<dist>``: ``shape`` draws per element of the parameter arrays (all of one shape P)."""
    spec, sampler = DISTRIBUTIONS[dist]
    names = _SAMPLE_NAMES.get(dist, tuple(p for p, _ in spec))
    op = f"_sample_{dist}"

    def compute(key, *values, **kw):
        shapes = {tuple(jnp.shape(v)) for v in values}
        if len(shapes) != 1:
            raise MXNetValueError(f"{op}: the parameter arrays {', '.join(names)} must have one shape, got "
                                  f"{[tuple(jnp.shape(v)) for v in values]}")
        dt, cdt = _sample_dtype(op, kw["dtype"])
        extra = _shape(op, kw["shape"], required=False)
        pshape = shapes.pop()
        values = [jnp.asarray(v, cdt).reshape(pshape + (1,) * len(extra)) for v in values]
        return sampler(key, *values, pshape + extra, cdt).astype(dt)
    params = (("shape", None, "shape | None"), ("dtype", None, "dtype | None"))
    return _defop(op, compute, ("key", *names), params, f"``shape`` samples from the {dist} distribution "
                  "for each element of the parameter arrays: output shape ``param.shape + shape``.",
                  aliases=(f"sample_{dist}", *_SAMPLE_ALIASES.get(dist, ())), needs_key=True, differentiable=False)


# MXNet 2's npx.scalar_poisson / npx.tensor_poisson are these ops under their npx names
_RANDOM_ALIASES = {"uniform": ("uniform",), "normal": ("normal",), "poisson": ("_npx_scalar_poisson",)}
_SAMPLE_ALIASES = {"poisson": ("_npx_tensor_poisson",)}
RANDOM_OPS = {dist: random_op(dist, _RANDOM_ALIASES.get(dist, ())) for dist in DISTRIBUTIONS}
SAMPLE_OPS = {dist: sample_op(dist) for dist in DISTRIBUTIONS}
LIKE_OPS = {dist: random_like_op(dist) for dist in DISTRIBUTIONS if dist != "binomial"}


def _randint(key, *, low: int = 0, high: int = 1, shape: shape | None = None, ctx: str = "",
             dtype: dtype | None = None):
    """Random integers from [low, high) of ``shape`` (int32 unless ``dtype``)."""
    dt = jnp.dtype("int32") if dtype in (None, "None") else resolve_dtype(dtype)
    if not jnp.issubdtype(dt, jnp.integer):
        raise MXNetTypeError(f"_random_randint: dtype must be an integer type, got {dt.name}")
    if high <= low:
        raise MXNetValueError(f"_random_randint: high ({high}) must be greater than low ({low})")
    return _r.randint(key, _shape("_random_randint", shape), low, high, dt)


register_op(OpDef("_random_randint", _randint, aliases=("random_randint",), needs_key=True, differentiable=False))
