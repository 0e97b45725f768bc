"""``mx.sym.random``: random-sampling symbols, nodes of the registered ``_random_*`` / ``_sample_*`` ops.

Numbers as distribution parameters give one ``_random_<dist>`` node with the values as
parameters (``uniform(0, 1, shape=(2, 3))`` writes ``_random_uniform``); symbols give a
``_sample_<dist>`` node drawing ``shape`` samples per parameter element.  The executor
hands each node a key from the stream ``mx.random.seed`` restarts, so bound graphs are
reproducible.  ``<dist>_like(data)`` draw samples of ``data``'s shape.
"""
from __future__ import annotations

from numbers import Number
from typing import Any, Callable

from ..base import MXNetTypeError, MXNetValueError
from ..operator import OPS
from ._generated import PrefixedNamespace, legacy_function
from .symbol import Symbol

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "binomial", "negative_binomial",
           "generalized_negative_binomial", "categorical", "multinomial", "shuffle", "randint"]

_FUNCTIONS: dict[str, Any] = {}
_LIKE = PrefixedNamespace("_random_", __name__)  # _random_uniform_like -> uniform_like


def _op(name: str) -> Callable[..., Any]:
    return legacy_function(name, __name__, _FUNCTIONS)


def _options(shape: Any, dtype: Any, kwargs: dict) -> dict:
    """The keyword arguments of a sampler node: ``shape``/``dtype`` only when given, as MXNet's _Null."""
    options = dict(kwargs)
    if shape is not None:
        options["shape"] = (shape,) if isinstance(shape, int) else tuple(shape)
    if dtype is not None:
        options["dtype"] = dtype
    return options


def _sample(dist: str, names: tuple, values: list, shape: Any, dtype: Any, kwargs: dict) -> Symbol:
    """``_random_<dist>`` when every parameter is a number, ``_sample_<dist>`` when all are symbols."""
    options = _options(shape, dtype, kwargs)
    if all(isinstance(v, Symbol) for v in values):
        return _op(f"_sample_{dist}")(*values, **options)
    if all(isinstance(v, Number) for v in values):
        return _op(f"_random_{dist}")(**dict(zip(names, values)), **options)
    kinds = ", ".join(type(v).__name__ for v in values)
    if any(isinstance(v, (Symbol, Number)) for v in values):
        raise MXNetTypeError(f"random.{dist}: distribution parameters must all be Symbols or all numbers, "
                             f"got {kinds}")
    raise MXNetValueError(f"random.{dist}: distribution parameters must be either Symbol or numbers, "
                          f"got {kinds}")


def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from ``U[low, high)``."""
    return _sample("uniform", ("low", "high"), [low, high], shape, dtype, kwargs)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from ``N(loc, scale**2)``."""
    return _sample("normal", ("loc", "scale"), [loc, scale], shape, dtype, kwargs)


def randn(*shape: int, **kwargs: Any) -> Symbol:
    """Normal samples of the given shape (``randn(2, 3, loc=0, scale=1)``)."""
    loc, scale, dtype = kwargs.pop("loc", 0), kwargs.pop("scale", 1), kwargs.pop("dtype", None)
    return _sample("normal", ("loc", "scale"), [loc, scale], shape, dtype, kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from a Poisson distribution of rate ``lam``."""
    return _sample("poisson", ("lam",), [lam], shape, dtype, kwargs)


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from an exponential distribution of mean ``scale`` (the node holds the rate ``1/scale``)."""
    return _sample("exponential", ("lam",), [1.0 / scale], shape, dtype, kwargs)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from a gamma distribution of shape ``alpha`` and scale ``beta``."""
    return _sample("gamma", ("alpha", "beta"), [alpha, beta], shape, dtype, kwargs)


def binomial(n: Any = 1, p: Any = 0.5, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Samples from a binomial distribution of ``n`` trials with success probability ``p``."""
    return _sample("binomial", ("n", "p"), [n, p], shape, dtype, kwargs)


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Failures before the ``k``-th success of trials with success probability ``p``."""
    return _sample("negative_binomial", ("k", "p"), [k, p], shape, dtype, kwargs)


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None, dtype: Any = None,
                                  **kwargs: Any) -> Symbol:
    """Samples from a negative binomial of mean ``mu`` and dispersion ``alpha``."""
    return _sample("generalized_negative_binomial", ("mu", "alpha"), [mu, alpha], shape, dtype, kwargs)


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """Integers drawn uniformly from ``[low, high)`` (numbers only, as in MXNet)."""
    if not (isinstance(low, Number) and isinstance(high, Number)):
        raise MXNetTypeError(f"random.randint: low and high must be numbers, got {type(low).__name__} "
                             f"and {type(high).__name__}")
    return _op("_random_randint")(low=low, high=high, **_options(shape, dtype, kwargs))


def categorical(data: Symbol, shape: Any = None, get_prob: bool = True, dtype: Any = "int32",
                **kwargs: Any) -> Symbol:
    """Class indices drawn from each row of probabilities ``data``; with ``get_prob`` also the
    log-probabilities of the drawn classes (two outputs)."""
    return _op("_sample_categorical")(data, get_prob=get_prob, **_options(shape, dtype, kwargs))


def multinomial(n: Any = (1,), p: Any = ((1.0,),), shape: Any = None, dtype: Any = "float32",
                **kwargs: Any) -> Symbol:
    """Counts per category of ``n[i]`` draws from the probability rows ``p[i]`` (symbols)."""
    for arg, value in (("n", n), ("p", p)):
        if not isinstance(value, Symbol):
            raise MXNetTypeError(f"random.multinomial: argument {arg} must be a Symbol, got {type(value).__name__}")
    return _op("_sample_multinomial")(n, p, **_options(shape, dtype, kwargs))


def shuffle(data: Symbol, **kwargs: Any) -> Symbol:
    """``data`` with its first axis randomly permuted (MXNet's ``_shuffle``; the NumPy op
    ``_npi_shuffle`` is the same computation where no ``_shuffle`` alias is registered)."""
    return _op("_shuffle" if "_shuffle" in OPS else "_npi_shuffle")(data, **kwargs)


def __getattr__(name: str) -> Any:
    """``uniform_like``, ``normal_like``, ...: the registered ``_random_<dist>_like`` ops."""
    if name.endswith("_like"):
        return _LIKE.get(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, *(n for n in _LIKE.dir() if n.endswith("_like"))])
