"""``mx.sym`` / ``mx.symbol``: symbolic graphs, MXNet symbol JSON, shape inference and executors.

Every registered op is a symbol function, generated from the registry on first
use (``mx.sym.FullyConnected``, ``mx.sym.broadcast_add``, ``mx.sym.sum`` with 1.x
semantics); ``mx.sym.np`` offers the NumPy-named ops the same way, and ``op``,
``contrib``, ``linalg``, ``npx`` (``numpy_extension``) and ``np.linalg`` follow MXNet's
module layout.  Importing the package puts NDArray's fluent methods on ``Symbol``.
"""
from __future__ import annotations

from typing import Any

from . import contrib, linalg, op  # noqa: F401
from . import numpy as np  # noqa: F401
from . import numpy as numpy  # noqa: F401
from . import numpy_extension as npx  # noqa: F401
from . import numpy_extension as numpy_extension  # noqa: F401
from ._fluent import NotImplementedForSymbol, install as _install_fluent
from ._generated import legacy_function
from ._methods import install as _install_methods
from .executor import Executor
from .from_jax import from_jax
from ._json import fromjson, load, load_json
from .symbol import Group, Symbol, Variable, symbol_function, var

__all__ = ["Symbol", "Executor", "var", "Variable", "Group", "load", "fromjson", "load_json", "np", "npx", "numpy",
           "numpy_extension", "contrib", "linalg", "op", "from_jax", "NotImplementedForSymbol"]

_install_fluent()
_install_methods()
_FUNCTIONS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """``mx.sym.<op>``: the symbolic function of a registered op (1.x names and semantics)."""
    if name == "pow":  # MXNet 2's older spelling of power
        name = "power"
    return legacy_function(name, __name__, _FUNCTIONS)
