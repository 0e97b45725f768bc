"""``mx.sym`` / ``mx.symbol``: symbolic graphs, MXNet symbol JSON, shape inference and executors.

Every registered op is a symbol function, generated from the registry on first
use (``mx.sym.FullyConnected``, ``mx.sym.broadcast_add``, ``mx.sym.sum`` with 1.x
semantics); ``mx.sym.np`` offers the NumPy-named ops the same way, and ``op``,
``contrib``, ``linalg``, ``random``, ``sparse``, ``npx`` (``numpy_extension``) and
``np.linalg`` follow MXNet's module layout.  Importing the package puts NDArray's fluent methods on ``Symbol``.
"""
from __future__ import annotations

from typing import Any

from . import contrib, linalg, op, random, register, sparse  # noqa: F401
from . import image, image as gen_image  # noqa: F401
from . import contrib as gen_contrib  # noqa: F401  (MXNet's generated modules hold the same functions)
from . import linalg as gen_linalg  # noqa: F401
from . import op as gen_op  # noqa: F401
from . import sparse as gen_sparse  # noqa: F401
from . import numpy as np  # noqa: F401
from . import numpy as numpy  # noqa: F401
from . import numpy_extension as npx  # noqa: F401
from . import numpy_extension as numpy_extension  # noqa: F401
from ..base import NotImplementedForSymbol
from ._fluent import install as _install_fluent
from ._generated import legacy_function
from ._methods import install as _install_methods
from ._numpy_methods import install as _install_numpy_methods
from .executor import Executor
from .from_jax import from_jax
from ._json import fromjson, load, load_json
from ._split import split_v2
from .symbol import Group, Symbol, Variable, auto_name, symbol_function, var

__all__ = ["Symbol", "Executor", "var", "Variable", "Group", "load", "fromjson", "load_json", "np", "npx", "numpy",
           "numpy_extension", "contrib", "linalg", "op", "random", "sparse", "from_jax", "NotImplementedForSymbol", "split_v2", "shuffle"]

_install_fluent()
_install_methods()
_install_numpy_methods()
_FUNCTIONS: dict[str, Any] = {}


def shuffle(data: Symbol, **kwargs: Any) -> Symbol:
    """``random.shuffle`` under its op-function name: nodes are named ``shuffle<n>``, as MXNet names them."""
    if kwargs.get("name") is None:
        kwargs["name"] = auto_name("shuffle")
    return random.shuffle(data, **kwargs)


def __getattr__(name: str) -> Any:
    """``mx.sym.<op>``: the symbolic function of a registered op (1.x names and semantics)."""
    if name == "pow":  # MXNet 2's older spelling of power
        name = "power"
    return legacy_function(name, __name__, _FUNCTIONS)
