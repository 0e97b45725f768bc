"""``mx.np.function_base``: MXNet 2.0 keeps ``meshgrid`` and ``broadcast_arrays`` here (the same
functions as ``mx.np``'s)."""
from __future__ import annotations

from ._creation_ops import meshgrid
from ._manipulation import broadcast_arrays

__all__ = ["meshgrid", "broadcast_arrays"]
