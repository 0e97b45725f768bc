"""Subgraph properties: which nodes a partitioner groups, and the backends that name them.

MXNet's partitioning API (``SubgraphSelector``/``SubgraphProperty``, registered under a
backend name and applied by ``optimize_for``), in Python: a selector picks seed nodes
and grows each group along inputs and outputs; the property makes a selector per
pass and builds the node that replaces a group.  The partitioner itself
(:mod:`mxjax.subgraph.partition`) guarantees the result has no cycles.

A property may declare the options it takes (``accepted_options``, with defaults) so
that ``HybridBlock.optimize_for`` can reject a misspelled option instead of letting the
backend ignore it; one that declares nothing takes any option, as MXNet's C++ backends do.
"""
from __future__ import annotations

from typing import Any, ClassVar, Iterable, Sequence

from ..graph.ir import Node
from ..base import MXNetError

__all__ = ["SubgraphSelector", "SubgraphProperty", "register_backend", "get_backend", "list_backends",
           "backend_options", "check_backend_options"]

# Taken by every backend: MXNet's Symbol.optimize_for consumes these itself (gluon's
# optimize_for forwards them there, e.g. quantization's ``skip_infer=True``).
PARTITION_OPTIONS = ("shape_dict", "type_dict", "stype_dict", "skip_infer")


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
    ``accepted_options``: ``{name: default}`` of the options this pass reads from
    ``self.options`` (defaults filled in); ``None`` (the default) declares nothing and
    takes any option, so properties written before the declaration existed keep working.
    """

    name = "default"
    op_name = "_CachedOp"
    merge_unconnected = False
    min_size = 1
    accepted_options: ClassVar[dict[str, Any] | None] = None

    def __init__(self, **options: Any) -> None:
        self.options = {**(self.accepted_options or {}), **options}

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
    """The property classes registered as ``name``; MXNetError naming the registered ones if none."""
    found = _BACKENDS.get(name)
    if found is None:
        raise MXNetError(f"optimize_for: backend {name!r} is not registered; registered backends: "
                         f"{sorted(_BACKENDS) or 'none'} (register one with mx.subgraph.register_backend)")
    return found


def list_backends() -> list[str]:
    """The registered backend names, sorted."""
    return sorted(_BACKENDS)


def backend_options(name: str) -> dict[str, Any] | None:
    """``{option: default}`` that backend ``name`` takes (its properties' declarations merged,
    each gets every option), or None when one of them declares nothing (then any option goes)."""
    merged: dict[str, Any] = {}
    for prop in get_backend(name):
        if prop.accepted_options is None:
            return None
        for option, default in prop.accepted_options.items():
            merged.setdefault(option, default)
    return merged


def _describe(options: dict[str, Any], general: Iterable[str]) -> str:
    own = ", ".join(f"{k}={v!r}" for k, v in sorted(options.items())) or "none of its own"
    return f"{own} (and, for any backend, {', '.join(general)})"


def check_backend_options(owner: str, name: str, options: dict[str, Any]) -> None:
    """MXNetError when ``options`` holds a name that backend ``name`` does not take.

    ``owner`` is the caller as the user wrote it (``"Dense.optimize_for"``).
    """
    accepted = backend_options(name)
    if accepted is None:
        return
    unknown = [k for k in options if k not in accepted and k not in PARTITION_OPTIONS]
    if unknown:
        what = "option" if len(unknown) == 1 else "options"
        raise MXNetError(f"{owner}: backend {name!r} has no {what} {', '.join(map(repr, unknown))}; "
                         f"it accepts {_describe(accepted, PARTITION_OPTIONS)}")
