"""``mx.executor``: the ``Executor`` that ``Symbol.bind`` / ``simple_bind`` return (``mxjax.symbol.executor``)."""
from __future__ import annotations

from . import ndarray  # noqa: F401  (the names MXNet's module carries)
from . import numpy as np  # noqa: F401
from .symbol.executor import Executor

__all__ = ["Executor"]
