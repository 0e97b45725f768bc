"""Symbol attributes as MXNet stores and lists them.

MXNet keeps a few well-known attributes under hidden names (``ctx_group`` is stored as
``__ctx_group__``) and lists both spellings; a node's attributes as listed are its
string attributes plus its op parameters, encoded.  Attributes given when a node is
made are those of the enclosing ``mx.attribute.AttrScope`` updated by the call's
``attr``; variables MXNet creates for an op's missing inputs (``fc_weight``) carry
the op node's attributes and parameters, as NNVM's composition copies them.
"""
from __future__ import annotations

from typing import Any

from ..graph.ir import Node
from ..base import MXNetError, encode_attr
from ..graph.interpret import CONSTANTS, node_op
from .._node_attrs import HIDDEN_KEYS, creation_attrs, stored_key  # noqa: F401  (creation_attrs: symbol.py's)


def listed(node: Node) -> dict[str, str]:
    """A node's attributes as ``list_attr`` gives them: stored attributes, parameters (encoded),
    and the plain spelling of each hidden key."""
    found = dict(node.attrs)
    if not node.is_variable:
        found.update({k: encode_attr(v) for k, v in node.params.items() if k != CONSTANTS})
    for key in HIDDEN_KEYS:
        if f"__{key}__" in found:
            found[key] = found[f"__{key}__"]
    return found


def lookup(node: Node, key: str) -> str | None:
    """One attribute of a node, by either spelling of a hidden key; None when absent."""
    return listed(node).get(key)


def set_attrs(node: Node, values: dict[str, Any]) -> None:
    """``Symbol._set_attr``: string values only; an op's own parameter is set as that parameter."""
    for key, value in values.items():
        if not isinstance(value, str):
            raise ValueError("Set Attr only accepts string values")
    for key, value in values.items():
        if not node.is_variable:
            spec = node_op(node).params.get(key)
            if spec is not None:
                node.params[key] = spec.decode(value)
                continue
            if key not in HIDDEN_KEYS and not (key.startswith("__") and key.endswith("__")):
                raise MXNetError(f"_set_attr: operator {node.op} ({node.name}) has no argument {key!r}; "
                                 "other attributes of an op node must look like __name__")
        node.attrs[stored_key(key)] = value


def inherit(variables: list[Node], node: Node) -> None:
    """Give variables made for ``node``'s missing inputs the node's attributes and parameters."""
    inherited = {k: v for k, v in listed(node).items() if k not in HIDDEN_KEYS}
    for variable in variables:
        variable.attrs = {**inherited, **variable.attrs}


def single_node(outputs: list, what: str) -> Node:
    """The node of a one-output symbol; MXNetError for a group."""
    if len(outputs) != 1:
        raise MXNetError(f"{what}: the symbol is a group of {len(outputs)} outputs; "
                         "attributes belong to one node (use sym[i])")
    return outputs[0][0]
