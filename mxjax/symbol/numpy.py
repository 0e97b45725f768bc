"""``mx.sym.np``: NumPy-named symbol functions (NumPy semantics), generated from the registry;
``mx.sym.np.linalg`` holds the linear-algebra routines, ``mx.sym.np.random`` the samplers."""
from __future__ import annotations

import sys
from typing import Any

from .._frontend import make_function
from ..operator import OPS
from . import numpy_linalg as linalg
from . import numpy_random as random
from .symbol import Symbol, _Symbol, symbol_function  # noqa: F401  (_Symbol: MXNet's class here)

sys.modules.setdefault(f"{__name__}.linalg", linalg)  # ``import mxjax.symbol.numpy.linalg``, as in MXNet
sys.modules.setdefault(f"{__name__}.random", random)

# NumPy's other names for registered ops, which MXNet 2.0's mx.sym.np also has (empty_like: mxjax's
# arrays are always initialised, so it is zeros_like, as mx.np.empty_like is)
_ALIASES = {"amax": "max", "amin": "min", "product": "prod", "row_stack": "vstack", "sometrue": "any",
            "empty_like": "zeros_like"}

_FUNCTIONS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    function = _FUNCTIONS.get(name)
    if function is None:
        op = OPS.get(_ALIASES.get(name, name))
        if op is None or name.startswith("__"):
            raise AttributeError(f"module 'mxjax.symbol.numpy' has no attribute {name!r}")
        front = make_function(op, name=name, out_cls=Symbol, module="mxjax.symbol.numpy")
        function = _FUNCTIONS[name] = symbol_function(front, legacy=False)
    return function
