"""``mx.sym.npx.random``: MXNet 2's extra samplers as symbol functions (NumPy semantics).

``bernoulli``, ``uniform_n`` and ``normal_n`` share ``mx.npx.random``'s signatures;
``categorical`` and ``multinomial`` are the ``_sample_categorical`` /
``_sample_multinomial`` ops, as in MXNet.  Keys come from the executor at run time.
"""
from __future__ import annotations

from typing import Any

from ..numpy_extension import random as _npx_random
from ._generated import PrefixedNamespace

_OPS = PrefixedNamespace("", __name__, legacy=False, fronts={
    name: getattr(_npx_random, name) for name in ("bernoulli", "uniform_n", "normal_n")},
    legacy_ops={"categorical": "_sample_categorical", "multinomial": "_sample_multinomial"})


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
