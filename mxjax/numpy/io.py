"""``mx.np.io``: reading arrays from text (``genfromtxt``), through NumPy's parser."""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..device import current_device
from .._ndarray import array
from .multiarray import ndarray

__all__ = ["genfromtxt"]


def genfromtxt(*args: Any, **kwargs: Any) -> ndarray:
    """NumPy's ``genfromtxt`` (same arguments), returned as an ``mx.np.ndarray`` of the parsed dtype
    (float64 unless ``dtype`` says otherwise) on ``device`` (default: the current device)."""
    device = kwargs.pop("device", None) or current_device()
    values = onp.genfromtxt(*args, **kwargs)
    if values.dtype.kind not in "biufc":
        raise TypeError(f"genfromtxt: mx.np arrays cannot hold {values.dtype} data; pass a numeric dtype")
    return array(values, dtype=values.dtype, device=device, cls=ndarray)
