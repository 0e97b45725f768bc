"""``mx.np.arrayprint``: print options of ``mx.np.ndarray`` (its repr formats through NumPy's printer)."""
from __future__ import annotations

from typing import Any

import numpy as onp

__all__ = ["set_printoptions"]


def set_printoptions(precision: int | None = None, threshold: int | None = None, **kwarg: Any) -> None:
    """Set how ``mx.np.ndarray`` prints: ``precision`` digits of floats, and summarise arrays with more
    than ``threshold`` elements.  Like MXNet, only these two options are supported."""
    if kwarg:
        raise NotImplementedError("mxnet.numpy.set_printoptions only supports parameters precision and "
                                  f"threshold for now, got {sorted(kwarg)}")
    onp.set_printoptions(precision=precision, threshold=threshold)
