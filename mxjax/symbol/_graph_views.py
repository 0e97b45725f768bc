"""What a ``Symbol`` reports about its graph: node order, the name lists, and node attributes.

``list_arguments``/``list_auxiliary_states``/``list_inputs``/``list_outputs`` in
MXNet's orders, and ``attr``/``list_attr``/``attr_dict``/``_set_attr`` over the
nodes' attributes.  Read-only views (bar ``_set_attr``) that never build a Symbol,
kept apart from ``symbol.py``; ``Symbol`` inherits them.
"""
from __future__ import annotations

from ..graph.ir import Node, topo_order
from ..graph.interpret import node_op
from . import _attrs
from ._naming import _output_name


class _GraphViews:
    """``Symbol``'s name lists and attribute methods (a mixin: no state of its own)."""

    __slots__ = ()

    def _nodes(self) -> list[Node]:
        return topo_order(self._outputs)

    def _aux_nodes(self) -> set[int]:
        aux = set()
        for node in self._nodes():
            if not node.is_variable:
                for slot in node_op(node).aux_inputs:
                    if slot < len(node.inputs) and node.inputs[slot][0].is_variable:
                        aux.add(id(node.inputs[slot][0]))
        return aux

    def list_arguments(self) -> list[str]:
        aux = self._aux_nodes()
        return [n.name for n in self._nodes() if n.is_variable and id(n) not in aux]

    def list_auxiliary_states(self) -> list[str]:
        aux = self._aux_nodes()
        return [n.name for n in self._nodes() if n.is_variable and id(n) in aux]

    def list_inputs(self) -> list[str]:
        return [n.name for n in self._nodes() if n.is_variable]

    def list_outputs(self) -> list[str]:
        return [_output_name(node, index) for node, index in self._outputs]

    # -- attributes ----------------------------------------------------------------
    def attr(self, key: str) -> str | None:
        """One attribute of this (single-output) symbol's node, or None (``ctx_group`` finds
        ``__ctx_group__``)."""
        return _attrs.lookup(self._outputs[0][0], key) if len(self._outputs) == 1 else None

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The attributes of the head node: its own, its op parameters, and hidden keys both ways."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        return _attrs.listed(self._outputs[0][0])

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """Node name -> ``list_attr`` of that node, for every node of the graph."""
        return {node.name: _attrs.listed(node) for node in self._nodes()}

    def _set_attr(self, **kwargs: str) -> None:
        """Set string attributes on the head node (an op parameter's name sets the parameter)."""
        _attrs.set_attrs(_attrs.single_node(self._outputs, "_set_attr"), kwargs)
