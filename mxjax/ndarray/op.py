"""``mx.nd.op``: every registered operator's ``mx.nd`` function in one module (MXNet's
``mxnet.ndarray.op``), the same functions ``mx.nd`` exposes."""
from __future__ import annotations

from ._legacy import *  # noqa: F401,F403
from ._legacy import __all__ as _legacy_all
from ._shared import *  # noqa: F401,F403
from ._shared import __all__ as _shared_all
from ._layers import *  # noqa: F401,F403
from ._layers import __all__ as _layers_all
from ._random_ops import *  # noqa: F401,F403
from ._random_ops import __all__ as _random_ops_all
from ._extra import *  # noqa: F401,F403
from ._extra import __all__ as _extra_all
from ._updates import *  # noqa: F401,F403
from ._updates import __all__ as _updates_all

__all__ = [*_legacy_all, *_shared_all, *_layers_all, *_random_ops_all, *_extra_all, *_updates_all]
