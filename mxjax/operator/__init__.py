"""The operator registry and every op definition (importing this package registers them all)."""
from __future__ import annotations

from .registry import OPS, DynamicShapeError, OpDef, Param, clear_caches, defop, get_op, list_ops, register

# Op modules, imported once here so the registry's contents never depend on import order.
from . import core, elemwise, creation, manipulation, reduction, sorting  # noqa: E402,F401
from . import linalg, random, nn, legacy, numpy_extra, dynamic  # noqa: E402,F401
from . import control_flow  # noqa: E402,F401
from . import contrib_math, contrib_attention, contrib_box, contrib_nms, contrib_multibox  # noqa: E402,F401
from . import contrib_dynamic, contrib_roi, contrib_optim, contrib_sldwin  # noqa: E402,F401

__all__ = ["OPS", "DynamicShapeError", "OpDef", "Param", "clear_caches", "defop", "get_op", "list_ops", "register"]
