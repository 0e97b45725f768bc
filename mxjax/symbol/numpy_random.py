"""``mx.sym.np.random``: ``mx.np.random``'s samplers as symbol functions (same signatures and
checks; the graph records their ops and the executor supplies the keys at run time).  ``shuffle``
returns the permuted array, since a symbol has no storage to permute in place."""
from __future__ import annotations

from typing import Any

from ..numpy import random as _np_random
from ._generated import PrefixedNamespace

# MXNet 2.0's mx.sym.np.random: the samplers a symbol graph can hold
_NAMES = ("beta", "chisquare", "choice", "exponential", "f", "gamma", "gumbel", "laplace", "logistic",
          "lognormal", "multivariate_normal", "normal", "pareto", "power", "rand", "randint", "rayleigh",
          "uniform", "weibull")

_OPS = PrefixedNamespace("", __name__, legacy=False, variables=False,
                         fronts={name: getattr(_np_random, name) for name in _NAMES},
                         legacy_ops={"shuffle": "_npi_shuffle"})  # a new symbol: nothing to shuffle in place


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
