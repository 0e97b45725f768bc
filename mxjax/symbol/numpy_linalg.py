"""``mx.sym.np.linalg``: ``mx.np.linalg``'s routines as symbol functions (``linalg.det`` writes ``_npi_det``).

Each binds the same front end as the imperative function, so arguments match; the
routines that are not one op (``qr``, ``svd``) are not offered symbolically.
"""
from __future__ import annotations

from typing import Any

from ..numpy import linalg as _linalg
from ._generated import PrefixedNamespace

_FRONTS = {name: getattr(_linalg, name) for name in dir(_linalg)
           if not name.startswith("_") and hasattr(getattr(_linalg, name), "positional")}
_OPS = PrefixedNamespace("", "mxjax.symbol.numpy.linalg", fronts=_FRONTS, legacy=False)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return _OPS.dir()
