"""``mx.nd``: MXNet 1.x's imperative API (op names, argument names and dtype rules of 1.x).

Functions return the legacy :class:`NDArray`.  Where 1.x semantics differ from NumPy's
(``sum(..., exclude=True)``, ``argmax`` giving float indices, comparisons giving 0/1 in
the input dtype, ``take`` clipping, full reductions of shape ``(1,)``) the functions
bind the legacy ops of ``operator/legacy*.py``; elsewhere they bind the ops ``mx.np``
and ``mx.npx`` use, accepting the 1.x keyword names (``data=``, ``lhs=``/``rhs=``).
"""
from __future__ import annotations

from .._ndarray import NDArray
from ._legacy import *  # noqa: F401,F403
from ._legacy import __all__ as _legacy_all
from ._shared import *  # noqa: F401,F403
from ._shared import __all__ as _shared_all
from ._functions import *  # noqa: F401,F403
from ._functions import __all__ as _functions_all
from ._layers import *  # noqa: F401,F403
from ._layers import __all__ as _layers_all
from ._rnn import RNN  # noqa: F401  (reads the train-mode flag)
from ._random_ops import *  # noqa: F401,F403
from ._random_ops import __all__ as _random_ops_all
from ._extra import *  # noqa: F401,F403
from ._extra import __all__ as _extra_all
from ._updates import *  # noqa: F401,F403
from ._updates import __all__ as _updates_all
from .._custom_host import Custom  # noqa: F401  (mx.operator's Python custom ops)
from ._quantized import nd_quantized_reshape as quantized_reshape  # noqa: F401
from ._quantized import nd_quantized_transpose as quantized_transpose  # noqa: F401
from . import contrib, linalg, random  # noqa: F401
from . import image, image as gen_image  # noqa: F401  (MXNet's generated module holds the same)
from ._imdecode import imdecode  # noqa: F401
from . import ndarray, numpy, numpy_extension, op, sparse, utils  # noqa: F401
from . import numpy as np, numpy_extension as npx  # noqa: F401  (MXNet's short names)
# MXNet's generated modules hold the same functions as these
from . import contrib as gen_contrib, linalg as gen_linalg, op as gen_op, sparse as gen_sparse  # noqa: F401
from ._io import save, load  # noqa: F401
from ._fluent import FLUENT_METHODS
from .._ndarray import register_fluent_methods

register_fluent_methods(FLUENT_METHODS)

__all__ = ["NDArray", "linalg", "random", "ndarray", "numpy", "numpy_extension", "np", "npx", "op", "sparse",
           "utils", "save", "load", *_legacy_all, *_shared_all, *_functions_all, *_layers_all, *_random_ops_all,
           *_extra_all, *_updates_all, "Custom", "image", "imdecode", "quantized_reshape", "quantized_transpose"]
