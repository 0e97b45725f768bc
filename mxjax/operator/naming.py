"""Op names in graphs and symbol JSON: what a name read from a file means, and what name to write.

Graph nodes (deferred compute, symbols, the autograd tape) store the name MXNet
writes, so a graph reads back the same whichever way it was built.

MXNet 1.x JSON uses legacy names whose meaning differs from the NumPy op of the
same spelling (``sum`` is the legacy reduction with ``exclude``); MXNet 2 writes
NumPy ops as ``_np_*``/``_npi_*``.  Reading maps through the legacy table; writing
picks the name MXNet itself would write, so MXNet can load what mxjax saves.
"""
from __future__ import annotations

from .legacy import LEGACY_JSON_NAMES, legacy_op_name
from .registry import OpDef, get_op

_WRITE_AS = {registered: json for json, registered in LEGACY_JSON_NAMES.items() if registered.startswith("_legacy_")}
_NUMPY_PREFIXES = ("_npi_", "_np_", "_npx_")


def op_for_json_name(name: str) -> OpDef:
    """The registered op a symbol-JSON op name refers to."""
    return get_op(legacy_op_name(name))


def json_name(op: OpDef) -> str:
    """The op name MXNet writes for this op."""
    if op.name in _WRITE_AS:
        return _WRITE_AS[op.name]
    # a NumPy-named op: MXNet writes _np*_ names.  The NumPy ops whose names mean a legacy op in
    # JSON (split, sort, pad, ...) carry an _np_ alias for this, so reading back never confuses them.
    if op.name.islower() and not op.name.startswith("_"):
        for alias in op.aliases:
            if alias.startswith(_NUMPY_PREFIXES):
                return alias
    return op.name
