"""``mx.numpy_op_signature``: NumPy-style signatures for ``mx.np``/``mx.npx`` functions built from ops.

MXNet's generated op functions take ``(*args, **kwargs)``; at import this module gives
``inspect.signature`` the NumPy parameter lists MXNet documents for them (its
``_numpy_op_doc``: ``_np_<name>`` for ``mx.np``, ``_npx_<name>`` for ``mx.npx``, with
``_random_``/``_linalg_``/``_image_`` naming a submodule).  mxjax's front-ends are
generated the same way; a function whose own signature is already explicit keeps it.
"""
from __future__ import annotations

import inspect
from typing import Any

from . import numpy as mx_np
from . import numpy_extension as mx_npx

_NP_OP_SUBMODULE_LIST = ["_random_", "_linalg_"]   # MXNet's mx.base tables
_NP_EXT_OP_SUBMODULE_LIST = ["_image_", "_random_"]


def _get_op_submodule_name(op_name: str, op_name_prefix: str, submodule_name_list: list) -> str:
    """The ``_<submodule>_`` part of ``op_name`` after its prefix, or ''."""
    rest = op_name[len(op_name_prefix):]
    return next((s for s in submodule_name_list if rest.startswith(s)), "")

_REQUIRED = inspect.Parameter.empty
# MXNet 2.0's _numpy_op_doc: op name -> ((parameter, default), ...); _REQUIRED marks a required one
_SIGNATURES: dict[str, tuple] = {
    "_np__random_shuffle": (("x", _REQUIRED),),
    "_np_copy": (("a", _REQUIRED), ("out", None)),
    "_np_diag": (("array", _REQUIRED), ("k", 0)),
    "_np_diagflat": (("array", _REQUIRED), ("k", 0)),
    "_np_diagonal": (("a", _REQUIRED), ("offset", 0), ("axis1", 0), ("axis2", 1)),
    "_np_dot": (("a", _REQUIRED), ("b", _REQUIRED), ("out", None)),
    "_np_moveaxis": (("a", _REQUIRED), ("source", _REQUIRED), ("destination", _REQUIRED)),
    "_np_prod": (("a", _REQUIRED), ("axis", None), ("dtype", None), ("out", None), ("keepdims", False)),
    "_np_product": (("a", _REQUIRED), ("axis", None), ("dtype", None), ("out", None), ("keepdims", False)),
    "_np_repeat": (("a", _REQUIRED), ("repeats", _REQUIRED), ("axis", None)),
    "_np_reshape": (("a", _REQUIRED), ("newshape", _REQUIRED), ("order", "C"), ("out", None)),
    "_np_sometrue": (("a", _REQUIRED), ("axis", None), ("keepdims", False), ("out", None)),
    "_np_squeeze": (("a", _REQUIRED), ("axis", None), ("out", None)),
    "_npx_constraint_check": (("x", _REQUIRED), ("msg", _REQUIRED)),
    "_npx_index_add": (("a", _REQUIRED), ("ind", _REQUIRED), ("val", _REQUIRED)),
    "_npx_index_update": (("a", _REQUIRED), ("ind", _REQUIRED), ("val", _REQUIRED)),
    "_npx_nonzero": (("a", _REQUIRED),),
    "_npx_reshape": (("a", _REQUIRED), ("newshape", _REQUIRED), ("reverse", False), ("order", "C")),
}


def _get_builtin_op(op_name: str) -> Any:
    """The ``mx.np``/``mx.npx`` function of an op name such as ``_np_copy`` or ``_np__random_shuffle``
    (None for a name of neither prefix; ValueError for a missing submodule or function)."""
    if op_name.startswith("_np_"):
        root, prefix, submodules = mx_np, "_np_", _NP_OP_SUBMODULE_LIST
    elif op_name.startswith("_npx_"):
        root, prefix, submodules = mx_npx, "_npx_", _NP_EXT_OP_SUBMODULE_LIST
    else:
        return None
    submodule = _get_op_submodule_name(op_name, prefix, submodules)
    module = root
    if submodule:
        module = getattr(root, submodule[1:-1], None)
        if module is None:
            raise ValueError(f"Cannot find submodule {submodule[1:-1]} in module {root.__name__}")
    op = getattr(module, op_name[len(prefix) + len(submodule):], None)
    if op is None:
        raise ValueError(f"Cannot find operator {op_name[len(prefix):]} in module {root.__name__}")
    return op


def _signature(params: tuple) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    return inspect.Signature([inspect.Parameter(name, kind, default=default) for name, default in params])


def _is_generic(op: Any) -> bool:
    """Whether ``op``'s own signature is the generated ``(*args, ..., **kwargs)`` form."""
    try:
        params = inspect.signature(op).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)


def _register_op_signatures() -> None:
    for op_name, params in _SIGNATURES.items():
        op = _get_builtin_op(op_name)
        if op is not None and _is_generic(op):
            op.__signature__ = _signature(params)


_register_op_signatures()
