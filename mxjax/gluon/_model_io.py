"""``Block.save``/``Block.load``: MXNet 2.0's model structure file plus the parameters.

``save(prefix)`` writes ``prefix-model.json`` (each block by class name and position,
``{"dense1": {"hybridized": ..., "params": {"weight": uuid}, <children>}}``, with the
cached graph of a hybridized block) and ``prefix-model.params`` (``save_parameters``).
``load(prefix)`` checks the structure against the block, restores the parameter ids
and the hybridized state, and loads the parameters.  (MXNet 2.0.0b1 writes the
parameters to ``MyModel-model.params`` whatever the prefix; both name them after it.)
"""
from __future__ import annotations

import io
import json
from typing import Any

from .._atomic import atomic_write_group
from ..base import MXNetError
from ..serialization import file_label, reading
from ..symbol import var

__all__ = ["save_model", "load_model"]


def _describe(block: Any, structure: dict, index: int) -> int:
    entry: dict = {}
    structure[f"{type(block).__name__.lower()}{index}"] = entry
    index += 1
    if hasattr(block, "_cache"):  # a HybridBlock: its cached graph, when it has built one
        graph = block._traced_graph() if block._active else None
        if graph is not None:
            entry["in_format"] = [0] * len(graph.data_names)
            entry["out_format"] = [0] * graph.n_out if graph.multi else 0
            entry["inputs"] = [var(name).tojson() for name in graph.data_names]
            entry["symbol"] = graph.symbol.tojson()
        entry["hybridized"] = graph is not None
    entry["params"] = {name: param._uuid for name, param in block._reg_params.items()}
    for child in block._children.values():
        index = _describe(child, entry, index)
    return index


def save_model(block: Any, prefix: str) -> None:
    structure: dict = {}
    _describe(block, structure, 0)
    params = io.BytesIO()
    block.save_parameters(params)
    # both files complete before either replaces an old one, so they always belong together
    atomic_write_group({f"{prefix}-model.json": json.dumps(structure), f"{prefix}-model.params": params.getvalue()})


def _restore(block: Any, structure: dict, index: int, source: str) -> int:
    key = f"{type(block).__name__.lower()}{index}"
    if key not in structure:
        have = [k for k, v in structure.items() if isinstance(v, dict) and k != "params"]
        raise MXNetError(f"Block.load: {source} has no entry {key!r} for {type(block).__name__} (found {have}); "
                         "build the model in the same order as when it was saved")
    entry = structure[key]
    if not isinstance(entry, dict) or not isinstance(entry.get("params", {}), dict):
        raise MXNetError(f"Block.load: {source}: entry {key!r} must be an object with a 'params' object, "
                         f"got {entry!r}")
    index += 1
    if entry.get("hybridized") and hasattr(block, "_cache"):
        block.hybridize(True)  # the graph is traced again on the first call
    for name, uuid in entry.get("params", {}).items():
        if name not in block._reg_params:
            raise MXNetError(f"Block.load: {source} lists parameter {name!r} of {key}, which "
                             f"{type(block).__name__} does not have (it has {list(block._reg_params)})")
        block._reg_params[name]._uuid = uuid
    for child in block._children.values():
        index = _restore(child, entry, index, source)
    return index


def load_model(block: Any, prefix: str) -> None:
    path = f"{prefix}-model.json"
    source = file_label(path)
    with open(path, "rb") as handle:
        raw = handle.read()
    with reading(path, "Block.load: model structure file"):
        structure = json.loads(raw.decode("utf-8"))
    if not isinstance(structure, dict):
        raise MXNetError(f"Block.load: {source} holds a {type(structure).__name__}, not the structure object")
    _restore(block, structure, 0, source)
    block.load_parameters(f"{prefix}-model.params")
