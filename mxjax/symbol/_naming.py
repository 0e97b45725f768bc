"""MXNet's naming rules for symbol graphs: output names, automatic node names, JSON params.

``_output_name`` gives the names ``list_outputs`` reports (``fc1_output``,
``bn_mean``), ``name_hint``/``auto_name`` the automatic node names
(``fullyconnected0``; with ``_OPERATOR_HINTS``/``_BROADCAST_NAMES``, ``a + b`` is node
``_plus0`` written as ``broadcast_add``), and ``_json_params`` the parameter strings
JSON carries.  Pure functions of nodes, kept apart from ``symbol.py`` so that the
Symbol mixins can use them without the class.
"""
from __future__ import annotations

from .. import name as _names
from ..graph.ir import Node
from ..base import encode_attr
from ..graph.interpret import CONSTANTS, node_op
from ..operator.naming import NUMPY_PREFIXES


def _visible_outputs(node: Node) -> int:
    if node.is_variable:
        return 1
    return max(1, node_op(node).count_outputs(node.params))


def _output_name(node: Node, index: int) -> str:
    if node.is_variable:
        return node.name
    if node.op in ("BatchNorm", "_npx_batch_norm") and _visible_outputs(node) == 3:
        return f"{node.name}_{('output', 'mean', 'var')[index]}"
    if _visible_outputs(node) == 1:
        return f"{node.name}_output"
    names = node_op(node).output_names
    return f"{node.name}_{names(node.params)[index]}" if names else f"{node.name}_output{index}"


def _encoded_params(node: Node) -> dict[str, str]:
    return {k: encode_attr(v) for k, v in node.params.items() if k != CONSTANTS}


def _json_params(node: Node) -> dict[str, str]:
    params = _encoded_params(node)
    if CONSTANTS in node.params:
        params[CONSTANTS] = encode_attr(node.params[CONSTANTS])
    return params


def _json_op_name_outputs(node: Node) -> int:
    return _visible_outputs(node)


def name_hint(op_name: str) -> str:
    """MXNet's naming hint for an op: its name lowercased; scalar ops drop inner underscores
    (``_mul_scalar`` nodes are named ``_mulscalar0``, as MXNet's ``_MulScalar``); NumPy ops drop
    their prefix (``_npi_multiply_scalar`` nodes are named ``multiply_scalar0``, as in MXNet 2.0)."""
    if op_name.startswith(NUMPY_PREFIXES):
        return op_name[op_name.index("_", 1) + 1:].lower()
    if op_name.startswith("_") and op_name.endswith("_scalar"):
        return "_" + op_name[1:-len("_scalar")].replace("_", "") + "scalar"
    return op_name.lower()


def auto_name(hint: str) -> str:
    """MXNet's automatic node names: ``<hint><counter>`` (``fullyconnected0``), per ``mx.name`` manager."""
    return _names.current().get(None, hint)


_BROADCAST_NAMES = {"add": "broadcast_add", "subtract": "broadcast_sub", "multiply": "broadcast_mul",
                    "true_divide": "broadcast_div", "mod": "broadcast_mod", "power": "broadcast_power"}
# MXNet names the nodes of symbol operators after its internal ops: a + b is _plus0
_OPERATOR_HINTS = {"add": "_plus", "subtract": "_minus", "multiply": "_mul", "true_divide": "_div",
                   "mod": "_mod", "power": "_power", "broadcast_equal": "_equal",
                   "broadcast_not_equal": "_not_equal", "broadcast_greater": "_greater",
                   "broadcast_greater_equal": "_greater_equal", "broadcast_lesser": "_lesser",
                   "broadcast_lesser_equal": "_lesser_equal"}
