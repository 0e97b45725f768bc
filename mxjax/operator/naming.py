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
NUMPY_PREFIXES = ("_npi_", "_np_", "_npx_")


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
            if alias.startswith(NUMPY_PREFIXES):
                return alias
    return op.name


# An op applied to an array and a Python number is written as its scalar twin, as MXNet does
# (``x * 2.5``: legacy ``_mul_scalar``, NumPy ``_npi_multiply_scalar``): (array left, array right)
_LEGACY_TWINS = {
    "add": ("_plus_scalar", "_plus_scalar"), "subtract": ("_minus_scalar", "_rminus_scalar"),
    "multiply": ("_mul_scalar", "_mul_scalar"), "true_divide": ("_div_scalar", "_rdiv_scalar"),
    "mod": ("_mod_scalar", "_rmod_scalar"), "power": ("_power_scalar", "_rpower_scalar"),
    "maximum": ("_maximum_scalar", "_maximum_scalar"), "minimum": ("_minimum_scalar", "_minimum_scalar"),
    "broadcast_equal": ("_equal_scalar", "_equal_scalar"),
    "broadcast_not_equal": ("_not_equal_scalar", "_not_equal_scalar"),
    "broadcast_greater": ("_greater_scalar", "_lesser_scalar"),
    "broadcast_greater_equal": ("_greater_equal_scalar", "_lesser_equal_scalar"),
    "broadcast_lesser": ("_lesser_scalar", "_greater_scalar"),
    "broadcast_lesser_equal": ("_lesser_equal_scalar", "_greater_equal_scalar"),
}
_NUMPY_TWINS = {
    "add": ("_npi_add_scalar", "_npi_add_scalar"), "subtract": ("_npi_subtract_scalar", "_npi_rsubtract_scalar"),
    "multiply": ("_npi_multiply_scalar", "_npi_multiply_scalar"),
    "true_divide": ("_npi_true_divide_scalar", "_npi_rtrue_divide_scalar"),
    "floor_divide": ("_npi_floor_divide_scalar", "_npi_rfloor_divide_scalar"),
    "mod": ("_npi_mod_scalar", "_npi_rmod_scalar"), "power": ("_npi_power_scalar", "_npi_rpower_scalar"),
    "maximum": ("_npi_maximum_scalar", "_npi_maximum_scalar"),
    "minimum": ("_npi_minimum_scalar", "_npi_minimum_scalar"),
    "equal": ("_npi_equal_scalar", "_npi_equal_scalar"), "not_equal": ("_npi_not_equal_scalar", "_npi_not_equal_scalar"),
    "greater": ("_npi_greater_scalar", "_npi_less_scalar"),
    "greater_equal": ("_npi_greater_equal_scalar", "_npi_less_equal_scalar"),
    "less": ("_npi_less_scalar", "_npi_greater_scalar"),
    "less_equal": ("_npi_less_equal_scalar", "_npi_greater_equal_scalar"),
}


def scalar_twin(op: OpDef, inputs: list, legacy: bool) -> tuple[OpDef, dict, int] | None:
    """``(twin op, its params, array slot)`` for a binary op with one Python-number operand, else None."""
    table = _LEGACY_TWINS if legacy else _NUMPY_TWINS
    if op.name not in table or len(inputs) != 2:
        return None
    numbers = [isinstance(x, (int, float)) and not isinstance(x, bool) for x in inputs]
    if numbers.count(True) != 1:
        return None
    array_slot = numbers.index(False)
    scalar = inputs[1 - array_slot]
    twin = get_op(table[op.name][0 if array_slot == 0 else 1])
    params = {"scalar": float(scalar)}
    if not legacy:  # MXNet 2 writes is_int; 1.x's scalar ops write the scalar only
        params["is_int"] = isinstance(scalar, int)
    return twin, params, array_slot
