"""``mx.contrib``: MXNet 2.0's experimental namespaces.

``mx.contrib.nd``/``mx.contrib.ndarray`` *is* ``mx.nd.contrib`` and ``mx.contrib.sym``/``mx.contrib.symbol``
*is* ``mx.sym.contrib`` (one module each, registered under both names), so ``mx.contrib.nd.box_nms is
mx.nd.contrib.box_nms``.  ``mx.contrib.text`` indexes tokens and loads word embeddings.
"""
from __future__ import annotations

import sys

from ..ndarray import contrib as ndarray
from ..symbol import contrib as symbol

# `import mxjax.contrib.ndarray` must find the same module objects as the attributes above.
sys.modules[__name__ + ".ndarray"] = ndarray
sys.modules[__name__ + ".symbol"] = symbol

nd = ndarray
sym = symbol

from . import text  # noqa: E402  (text.embedding imports mxjax.ndarray, already loaded above)

__all__ = ["nd", "ndarray", "sym", "symbol", "text"]
