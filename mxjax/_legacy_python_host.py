"""The higher-layer side of ``mx.operator``: what the operator layer names but cannot import.

``mx.operator.NDArray`` (MXNet re-exports it from ``mx.ndarray``) and the symbol module that
``NumpyOp``/``NDArrayOp.get_symbol`` build nodes with live above the operator layer, so this
module, imported by ``mxjax`` after both, fills them in.
"""
from __future__ import annotations

from . import operator, symbol
from ._ndarray import NDArray
from .operator import legacy_python

legacy_python.LINKS.symbol = symbol
operator.NDArray = NDArray  # type: ignore[attr-defined]
