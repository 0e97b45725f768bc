"""``mx.nd.random``: ``mx.random``'s samplers, always returning the legacy ``NDArray``.

``mx.random`` gives arrays of the current mode's class; 1.x code calling
``mx.nd.random.*`` expects ``NDArray`` whatever the mode, so results are rewrapped
(no copy).
"""
from __future__ import annotations

from typing import Any, Callable

from .. import random as _random
from ._layers import as_legacy

__all__ = ["seed", "uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
           "negative_binomial", "multinomial", "shuffle"]


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
multinomial = _nd(_random.multinomial)
shuffle = _nd(_random.shuffle)
