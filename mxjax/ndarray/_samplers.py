"""The samplers behind ``mx.nd.random`` (and so ``mx.random``, which MXNet 2.0 binds to it).

They bind the same random ops as ``mx.np.random`` (one definition per distribution)
with MXNet 1.x's argument names and rules:

* scalar parameters and no ``shape``: one sample of shape ``(1,)``;
* array parameters (MXNet's ``_sample_*`` ops): ``shape`` more samples per
  parameter element, output shape ``param.shape + shape``;
* float32 output unless ``dtype`` says otherwise (also for ``poisson`` and the
  negative binomial, as in MXNet), int32 for ``randint``.

``seed`` restarts the stream ``mx.np.random`` shares.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .. import _config, _rng
from ..base import MXNetValueError
from .._frontend import make_function
from .._ndarray import NDArray
from .._invoke import default_class as _default_class
from ..numpy.random import as_input, binds, require


def _binding(op: str, name: str) -> Any:
    return make_function(op, name=name, out_cls=_default_class, module="mxjax.ndarray.random")


_uniform = _binding("_npi_uniform", "uniform")
_normal = _binding("_npi_normal", "normal")
_randint = _binding("_npi_random_randint", "randint")
_poisson = _binding("_npi_poisson", "poisson")
_exponential = _binding("_npi_exponential", "exponential")
_gamma = _binding("_npi_gamma", "gamma")
_negative_binomial = _binding("_npi_negative_binomial", "negative_binomial")
_shuffle = _binding("_npi_shuffle", "shuffle")


def seed(seed_state: int, device: Any = "all", ctx: Any = None) -> None:
    """Restart the random stream of every device: MXNet 2.0's arguments, and 1.x's ``ctx`` for
    ``device`` (both accepted for compatibility: one stream serves every device)."""
    _rng.seed(seed_state, device if ctx is None else ctx)


def _shape(shape: Any) -> tuple:
    if shape is None:
        return ()
    return (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)


def _sample(binding: Any, params: list, shape: Any, dtype: Any, ctx: Any, out: Any,
            kwargs: dict) -> Any:
    """MXNet's ``_random_helper``: the output shape rules for scalar and array parameters."""
    kwargs.pop("name", None)  # accepted by every legacy function, meaningless here
    arrays = [p for p in params if isinstance(p, NDArray)]
    if arrays:  # one draw of `shape` per parameter element: params get trailing unit axes
        extra = _shape(shape)
        pshape = tuple(onp.broadcast_shapes(*(p.shape for p in arrays)))
        params = [p.reshape(p.shape + (1,) * len(extra)) if isinstance(p, NDArray) else p for p in params]
        size = pshape + extra
    elif shape is None or shape == ():
        size = out.shape if out is not None else (1,)
    else:
        size = _shape(shape)
    return binding(*(as_input(p) for p in params), size=size, dtype=dtype, ctx=ctx, out=out, **kwargs)


def _float(dtype: Any) -> Any:
    return dtype if dtype is not None else _config.default_float_dtype().name


@binds(_uniform)
def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
            out: Any = None, **kwargs: Any) -> Any:
    """Samples from the uniform distribution on [low, high)."""
    return _sample(_uniform, [low, high], shape, dtype, ctx, out, kwargs)


@binds(_normal)
def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
           out: Any = None, **kwargs: Any) -> Any:
    """Samples from the normal distribution N(loc, scale**2)."""
    require("normal", lambda v: v >= 0, ">= 0", scale=scale)
    return _sample(_normal, [loc, scale], shape, dtype, ctx, out, kwargs)


@binds(_normal)
def randn(*shape: int, loc: Any = 0, scale: Any = 1, dtype: Any = None, ctx: Any = None, out: Any = None,
          **kwargs: Any) -> Any:
    """Normal samples of shape ``shape``: ``randn(2, 3)``."""
    return normal(loc, scale, shape or None, dtype, ctx, out, **kwargs)


@binds(_randint)
def randint(low: Any, high: Any, shape: Any = None, dtype: Any = None, ctx: Any = None, out: Any = None,
            **kwargs: Any) -> Any:
    """Random integers from [low, high) (int32 by default)."""
    if not isinstance(low, NDArray) and not isinstance(high, NDArray) and \
            not onp.all(onp.asarray(low) < onp.asarray(high)):
        raise MXNetValueError(f"randint: low >= high (low={low!r}, high={high!r})")
    return _sample(_randint, [low, high], shape, dtype or "int32", ctx, out, kwargs)


@binds(_poisson)
def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None, out: Any = None,
            **kwargs: Any) -> Any:
    """Samples from the Poisson distribution with rate ``lam`` (float32 values, as MXNet gives)."""
    require("poisson", lambda v: v >= 0, ">= 0", lam=lam)
    return _sample(_poisson, [lam], shape, _float(dtype), ctx, out, kwargs)


@binds(_exponential)
def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None, out: Any = None,
                **kwargs: Any) -> Any:
    """Samples from the exponential distribution with the given scale (1 / rate)."""
    require("exponential", lambda v: v >= 0, ">= 0", scale=scale)
    return _sample(_exponential, [scale], shape, dtype, ctx, out, kwargs)


@binds(_gamma)
def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
          out: Any = None, **kwargs: Any) -> Any:
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta``."""
    require("gamma", lambda v: v >= 0, ">= 0", alpha=alpha, beta=beta)
    return _sample(_gamma, [alpha, beta], shape, dtype, ctx, out, kwargs)


@binds(_negative_binomial)
def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, ctx: Any = None,
                      out: Any = None, **kwargs: Any) -> Any:
    """Samples from the negative binomial distribution: failures before ``k`` successes of probability ``p``."""
    require("negative_binomial", lambda v: v > 0, "> 0", k=k)
    require("negative_binomial", lambda v: (v > 0) & (v <= 1), "in (0, 1]", p=p)
    return _sample(_negative_binomial, [k, p], shape, _float(dtype), ctx, out, kwargs)


@binds(_shuffle)
def shuffle(data: Any, **kwargs: Any) -> Any:
    """A copy of ``data`` with its first axis randomly permuted."""
    kwargs.pop("name", None)
    return _shuffle(data, **kwargs)


__all__ = ["seed", "uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
           "negative_binomial", "shuffle"]
