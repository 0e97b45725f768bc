"""``mx.npx``: MXNet 2's NumPy extensions -- neural-network operators and the NumPy-mode switches.

``npx.set_np()``, ``npx.save``/``npx.load`` and friends come from ``_utils``; the
operators (``npx.convolution``, ``npx.batch_norm``, ``npx.softmax``...) from
``_nn``, each a thin binding of one registered op.
"""
from __future__ import annotations

from ._utils import *  # noqa: F401,F403
from ._utils import __all__ as _utils_all
from ._nn import *  # noqa: F401,F403
from ._nn import __all__ as _nn_all
from ._contrib import *  # noqa: F401,F403
from ._contrib import __all__ as _contrib_all
from ._legacy import *  # noqa: F401,F403
from ._legacy import __all__ as _legacy_all
from ._quantized import *  # noqa: F401,F403
from ._quantized import __all__ as _quantized_all
from ._rnn import rnn  # noqa: F401  (reads the train-mode flag)
from .control_flow import cond, foreach, while_loop
from . import image, random, utils  # noqa: F401

__all__ = [*_utils_all, *_nn_all, *_contrib_all, *_legacy_all, *_quantized_all, "foreach", "while_loop", "cond",
           "image", "random", "utils"]
