"""Subgraph properties: which nodes a partitioner groups, and the backends that name them.

MXNet's partitioning API (``SubgraphSelector``/``SubgraphProperty``, registered under a
backend name and applied by ``optimize_for``), in Python: a selector picks seed nodes
and grows each group along inputs and outputs; the property makes a selector per
pass and builds the node that replaces a group.  The partitioner itself
(:mod:`mxjax.subgraph.partition`) guarantees the result has no cycles.
"""
from __future__ import annotations

from typing import Any, Sequence

from .._ir import Node
from ..base import MXNetError

__all__ = ["SubgraphSelector", "SubgraphProperty", "register_backend", "get_backend", "list_backends"]


class SubgraphSelector:
    """Decides membership, one group at a time (MXNet's ``SubgraphSelector``)."""

    def select(self, node: Node) -> bool:
        """Whether ``node`` may start a new group."""
        return False

    def select_input(self, node: Node, input_node: Node) -> bool:
        """Whether ``input_node`` (an op feeding ``node``, a member) joins the group."""
        return False

    def select_output(self, node: Node, output_node: Node) -> bool:
        """Whether ``output_node`` (an op reading ``node``, a member) joins the group."""
        return False

    def filter(self, candidates: list[Node]) -> list[Node]:
        """The members to keep once a group stops growing (all, by default)."""
        return candidates

    def reset(self) -> None:
        """Called before each new group."""


class SubgraphProperty:
    """A partitioning pass: makes selectors and the nodes that replace the groups.

    ``merge_unconnected``: every node the selector accepts joins one group per
    level of the graph, connected or not (the dynamic-shape split wants as few
    compiled segments as possible); otherwise groups grow along selected edges.
    ``min_size``: groups smaller than this are left alone.
    """

    name = "default"
    op_name = "_CachedOp"
    merge_unconnected = False
    min_size = 1

    def __init__(self, **options: Any) -> None:
        self.options = options

    def create_selector(self) -> SubgraphSelector:
        raise NotImplementedError(f"{type(self).__name__} must define create_selector()")

    def subgraph_attrs(self, members: Sequence[Node], subgraph_id: int) -> dict:
        """String attributes of the node that replaces a group."""
        return {}


_BACKENDS: dict[str, list[type]] = {}


def register_backend(name: str, *properties: type) -> None:
    """Register ``name`` as a partitioning backend applying these property classes in order."""
    for prop in properties:
        if not (isinstance(prop, type) and issubclass(prop, SubgraphProperty)):
            raise MXNetError(f"register_backend({name!r}): {prop!r} is not a SubgraphProperty class")
    _BACKENDS[name] = list(properties)


def get_backend(name: str) -> list[type]:
    found = _BACKENDS.get(name)
    if found is None:
        raise MXNetError(f"optimize_for: backend {name!r} is not registered; registered backends: "
                         f"{sorted(_BACKENDS) or 'none'} (register one with mx.subgraph.register_backend)")
    return found


def list_backends() -> list[str]:
    return sorted(_BACKENDS)
