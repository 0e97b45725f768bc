"""``mx.nd.numpy`` (also ``mx.nd.np``): MXNet 2's imperative NumPy functions, the same functions as
``mx.np`` (one binding per op), returning ``mx.np.ndarray``."""
from __future__ import annotations

from ..numpy import *  # noqa: F401,F403
from ..numpy import __all__ as _numpy_all
from ..numpy import linalg, random  # noqa: F401

__all__ = [name for name in _numpy_all if name != "ndarray"] + ["linalg", "random"]
