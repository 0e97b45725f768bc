"""Initializer hints ops put on their variable inputs when composed or upgraded (FORMATS.md 2.9 step 3)."""
from __future__ import annotations

import json

from ..graph.ir import Node

_BN_FAMILY = ("BatchNorm", "BatchNorm_v1", "_contrib_BatchNormWithReLU", "_contrib_SyncBatchNorm")
_INIT_HINTS = {name: {3: json.dumps(["zero", {}]), 4: json.dumps(["one", {}])} for name in _BN_FAMILY}
_INIT_HINTS["LeakyReLU"] = {1: json.dumps(["Constant", {"value": 0.25}])}


def apply_init_hints(nodes: list[Node]) -> None:
    """Initializer hints ops put on their variable inputs (BatchNorm moving stats, PReLU gamma)."""
    for node in nodes:
        for slot, init in _INIT_HINTS.get(node.op, {}).items():
            if slot < len(node.inputs):
                source = node.inputs[slot][0]
                if source.is_variable and "__init__" not in source.attrs:
                    source.attrs["__init__"] = init
