"""``mx.np.stride_tricks``: MXNet 2.0 keeps ``broadcast_arrays`` here (the same function as ``mx.np``'s)."""
from __future__ import annotations

from ._manipulation import broadcast_arrays

__all__ = ["broadcast_arrays"]
