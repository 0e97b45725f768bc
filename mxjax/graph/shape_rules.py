"""1.x creation nodes whose 0 dimensions their consumer fills in, from the consumer op's own
``param_shapes`` rule.  Shared by inference (``mxjax.symbol.infer``) and graph evaluation
(``mxjax.graph.interpret``)."""
from __future__ import annotations

from typing import Any

from .ir import Node

_CREATION = ("_zeros", "_ones", "_full")


def is_deferred_creation(node: Node) -> bool:
    """A 1.x ``zeros``/``ones``/``full`` node whose shape has 0s: dimensions MXNet 1.x infers from the
    node's consumer (Gluon 1.x's exported RNN layers make their begin states as ``zeros((L*D, 0, H))``)."""
    if node.is_variable or node.op not in _CREATION:
        return False
    shape = node.params.get("shape", ())
    return isinstance(shape, (tuple, list)) and 0 in shape


def consumer_shape(op: Any, params: dict, slot: int, in_shapes: list) -> tuple | None:
    """The shape ``op``'s ``param_shapes`` rule gives input ``slot``, from its data shape; None when it
    has no rule for it."""
    rule = op.param_shapes
    if rule is None or not in_shapes or in_shapes[0] is None:
        return None
    try:
        shape = rule(list(in_shapes), dict(params)).get(slot)
    except (KeyError, TypeError, IndexError, ZeroDivisionError):
        return None
    return None if shape is None else tuple(int(d) for d in shape)


def resolved_creation_shape(source: Node, wanted: tuple) -> tuple:
    """The deferred creation node's shape with its 0s taken from ``wanted`` (the consumer's rule)."""
    shape = tuple(source.params["shape"])
    if len(shape) != len(wanted):
        return wanted
    return tuple(w if s == 0 else s for s, w in zip(shape, wanted))
