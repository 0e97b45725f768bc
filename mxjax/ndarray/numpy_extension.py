"""``mx.nd.numpy_extension`` (also ``mx.nd.npx``): MXNet 2's imperative NumPy-extension operators,
the same functions as ``mx.npx``, returning ``mx.np.ndarray``."""
from __future__ import annotations

from ..numpy_extension import *  # noqa: F401,F403
from ..numpy_extension import __all__ as __all__  # noqa: F401
from ..numpy_extension import control_flow, random, utils  # noqa: F401
