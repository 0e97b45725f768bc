"""``mx.sym.linalg``: the batched BLAS/LAPACK ops (``linalg.gemm2`` writes ``_linalg_gemm2``)."""
from __future__ import annotations

from typing import Any

from ._generated import PrefixedNamespace

_OPS = PrefixedNamespace("_linalg_", __name__)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
