"""``mx.nd.random`` (and ``mx.random``, the same functions in MXNet 2.0): samplers that
return the legacy ``NDArray`` whatever the array mode, as MXNet's do.

The samplers give arrays of the current mode's class; results are rewrapped (no copy).
"""
from __future__ import annotations

from typing import Any, Callable

from .._ndarray import NDArray
from ..base import MXNetTypeError, numeric_types
from ..device import current_context
from . import _random_ops
from . import _samplers as _random
from ._layers import as_legacy
from ._maker import nd_function

__all__ = ["seed", "uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
           "negative_binomial", "generalized_negative_binomial", "binomial", "multinomial", "categorical",
           "shuffle", "uniform_like", "normal_like", "gamma_like", "exponential_like", "poisson_like",
           "negative_binomial_like", "generalized_negative_binomial_like", "NDArray", "current_context",
           "numeric_types"]


def _nd(fn: Callable) -> Callable:
    def function(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return result if kwargs.get("out") is not None else as_legacy(result)
    function.__name__ = function.__qualname__ = fn.__name__
    function.__doc__ = fn.__doc__
    function.__module__ = "mxjax.ndarray.random"
    return function


seed = _random.seed
uniform = _nd(_random.uniform)
normal = _nd(_random.normal)
randn = _nd(_random.randn)
randint = _nd(_random.randint)
poisson = _nd(_random.poisson)
exponential = _nd(_random.exponential)
gamma = _nd(_random.gamma)
negative_binomial = _nd(_random.negative_binomial)
shuffle = _nd(_random.shuffle)


def _scalar_or_sample(name: str, scalar_fn: Callable, sample_fn: Callable, params: dict, shape: Any, dtype: Any,
                      ctx: Any, out: Any, kwargs: dict) -> Any:
    """1.x's rule: all-scalar parameters draw ``shape`` (default ``(1,)``); NDArray parameters draw
    ``shape`` per element (output ``param.shape + shape``)."""
    kwargs.pop("name", None)
    arrays = [v for v in params.values() if isinstance(v, NDArray)]
    if arrays and len(arrays) != len(params):
        raise MXNetTypeError(f"{name}: the parameters must be all NDArrays or all numbers, got "
                             f"{ {k: type(v).__name__ for k, v in params.items()} }")
    if arrays:
        return sample_fn(*params.values(), shape=shape, dtype=dtype, out=out, **kwargs)
    shape = (1,) if shape is None or shape == () else shape
    return scalar_fn(**params, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)


def binomial(n: Any = 1, p: Any = 0.5, shape: Any = None, dtype: Any = None, ctx: Any = None, out: Any = None,
             **kwargs: Any) -> Any:
    """Successes in ``n`` trials of probability ``p`` (float32 unless ``dtype``)."""
    return _scalar_or_sample("binomial", _random_ops.random_binomial, _random_ops.sample_binomial,
                             {"n": n, "p": p}, shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None,
                                  ctx: Any = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the generalized negative binomial distribution of mean ``mu`` and dispersion ``alpha``."""
    return _scalar_or_sample("generalized_negative_binomial", _random_ops.random_generalized_negative_binomial,
                             _random_ops.sample_generalized_negative_binomial, {"mu": mu, "alpha": alpha},
                             shape, dtype, ctx, out, kwargs)


def multinomial(n: Any = None, p: Any = None, shape: Any = None, dtype: Any = None, ctx: Any = None,
                out: Any = None, **kwargs: Any) -> Any:
    """Counts of ``n`` draws over the classes of each row of ``p`` (MXNet 2's ``random.multinomial``):
    ``n`` of shape ``P``, ``p`` of shape ``P + (k,)``, output ``P + shape + (k,)`` (float32 unless
    ``dtype``).  Called as MXNet 1.x's ``multinomial(data, shape, get_prob, out, dtype)`` -- one array of
    probability rows, no ``p`` -- it draws class indices as 1.x did (:func:`categorical`)."""
    if n is None and "data" in kwargs:  # (1.x's name for its one argument)
        n = kwargs.pop("data")
    if p is None and isinstance(n, NDArray):  # (2's form without p would draw from one class: 1.x's form)
        if ctx is not None:
            raise MXNetTypeError("multinomial: MXNet 1.x's form multinomial(data, ...) takes no ctx")
        return categorical(n, shape=shape, out=out, dtype="int32" if dtype is None else dtype, **kwargs)
    for arg, value in (("n", n), ("p", p)):
        if not isinstance(value, NDArray):
            raise MXNetTypeError(f"multinomial: argument {arg} must be an NDArray, got {type(value).__name__}")
    return _random_ops.sample_multinomial(n, p, shape=shape, dtype="float32" if dtype is None else dtype, ctx=ctx,
                                          out=out, **kwargs)


def categorical(data: Any, shape: Any = None, get_prob: bool = False, out: Any = None, dtype: Any = "int32",
                **kwargs: Any) -> Any:
    """Class indices drawn from the probability rows of ``data``; with ``get_prob``, also their log-probabilities."""
    return _random_ops.sample_categorical(data, shape=shape, get_prob=get_prob, dtype=dtype, out=out, **kwargs)


uniform_like = nd_function("_random_uniform_like", name="uniform_like")
normal_like = nd_function("_random_normal_like", name="normal_like")
gamma_like = nd_function("_random_gamma_like", name="gamma_like")
exponential_like = nd_function("_random_exponential_like", name="exponential_like")
poisson_like = nd_function("_random_poisson_like", name="poisson_like")
negative_binomial_like = nd_function("_random_negative_binomial_like", name="negative_binomial_like")
generalized_negative_binomial_like = nd_function("_random_generalized_negative_binomial_like",
                                                 name="generalized_negative_binomial_like")
for _fn in (binomial, generalized_negative_binomial, multinomial, categorical):
    _fn.__module__ = "mxjax.ndarray.random"
binomial.op = _random_ops.random_binomial.op  # type: ignore[attr-defined]
generalized_negative_binomial.op = _random_ops.random_generalized_negative_binomial.op  # type: ignore
multinomial.op = _random_ops.sample_multinomial.op  # type: ignore[attr-defined]
categorical.op = _random_ops.sample_categorical.op  # type: ignore[attr-defined]
