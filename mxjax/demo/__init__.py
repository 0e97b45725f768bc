"""``python -m mxjax.demo``: train a small CNN on real data, end to end, on the public API.

scikit-learn's bundled handwritten digits (1797 8x8 images, no download) go into RecordIO
files, come back through ``gluon.data`` and a prefetching ``DataLoader``, train a hybridized
CNN whose loss mines hard examples with a boolean mask (a dynamic-shape op), and leave an
exported model that ``SymbolBlock.imports`` loads back.  scikit-learn is the demo's own
dependency (``pip install -e '.[demo]'``), never mxjax's.

Modules, one job each: ``options`` (checks of the command line), ``data`` (digits to
RecordIO and back), ``model`` (the network and the mined loss), ``train`` (the loop, the
evaluation, export and re-import), ``cli`` (``main``).
"""
from __future__ import annotations

from .cli import main

__all__ = ["main"]
