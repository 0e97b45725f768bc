"""The converter table and what a converter works with.

A converter turns one MXNet node (from the symbol JSON, keyed by its MXNet op name)
into ONNX nodes.  It receives an :class:`OpNode`: the node's string attributes, the
ONNX names, shapes and dtypes of its inputs and outputs, and helpers that append
ONNX nodes and constants to the graph being built.  It must write every output name
in ``node.outputs``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as onp

from ...base import MXNetError

OPSET = 13  # the ONNX opset every converter here targets (MXNet 2.0 exports opset 12/13)

CONVERTERS: dict[str, Callable[["OpNode"], None]] = {}


def register(*op_names: str) -> Callable:
    """Decorator: use the function as the converter of each MXNet op in ``op_names``."""
    def add(fn: Callable[["OpNode"], None]) -> Callable[["OpNode"], None]:
        for name in op_names:
            if name in CONVERTERS:
                raise MXNetError(f"mx.onnx: a converter for op {name!r} is already registered")
            CONVERTERS[name] = fn
        return fn
    return add


def require_onnx() -> Any:
    """The ``onnx`` module, or an ImportError that says how to install it."""
    try:
        import onnx
    except ImportError as err:
        raise ImportError("mx.onnx needs the 'onnx' package, an optional extra of mxjax: "
                          "pip install mxjax[onnx]  (or: pip install onnx)") from err
    return onnx


# -- attribute parsing (MXNet JSON attributes are strings) ---------------------------
def _literal(text: str) -> Any:
    text = text.strip()
    if text in ("None", ""):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        low = text.lower()
        if low in ("true", "false"):
            return low == "true"
        return text


@dataclass
class GraphBuilder:
    """The ONNX graph under construction: nodes, initializers and a name pool."""

    dynamic: bool = False
    nodes: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    used_names: set = field(default_factory=set)

    def fresh(self, hint: str) -> str:
        """A tensor name not used yet, based on ``hint``."""
        name, k = hint, 0
        while name in self.used_names:
            k += 1
            name = f"{hint}_{k}"
        self.used_names.add(name)
        return name

    def add_initializer(self, name: str, value: onp.ndarray) -> None:
        from onnx import numpy_helper
        self.initializers.append(numpy_helper.from_array(onp.asarray(value), name))


@dataclass
class OpNode:
    """One MXNet node being converted (see the module docstring)."""

    graph: GraphBuilder
    op: str
    name: str
    attrs: dict[str, str]
    inputs: list[str]
    in_shapes: list[tuple]
    in_dtypes: list[onp.dtype]
    outputs: list[str]
    out_shapes: list[tuple]
    out_dtypes: list[onp.dtype]

    # -- attributes ---------------------------------------------------------------
    def attr(self, key: str, default: Any = None) -> Any:
        """The attribute as a Python value (tuples, numbers, bools, None), or ``default``."""
        if key not in self.attrs:
            return default
        value = _literal(self.attrs[key])
        return default if value is None else value

    def tuple_attr(self, key: str, default: tuple = ()) -> tuple:
        value = self.attr(key, default)
        return tuple(value) if isinstance(value, (tuple, list)) else (value,)

    def bool_attr(self, key: str, default: bool = False) -> bool:
        value = self.attr(key, default)
        if isinstance(value, str):
            raise self.error(f"attribute {key}={value!r} is not a boolean")
        return bool(value)

    def error(self, why: str) -> MXNetError:
        """An MXNetError naming this node and its op."""
        return MXNetError(f"mx.onnx.export_model: cannot convert node {self.name!r} (op {self.op}): {why}")

    # -- graph building ------------------------------------------------------------
    def emit(self, op_type: str, inputs: list[str], outputs: list[str] | int | None = None,
             **attrs: Any) -> Any:
        """Append an ONNX node; returns its output name (or names when several are asked for).

        ``outputs`` is a list of names, a count of fresh names, or None for one fresh name.
        """
        from onnx import helper
        if outputs is None or isinstance(outputs, int):
            count = 1 if outputs is None else outputs
            names = [self.graph.fresh(f"{self.name}_{op_type.lower()}") for _ in range(count)]
        else:
            names = list(outputs)
        self.graph.nodes.append(helper.make_node(op_type, list(inputs), names,
                                                 name=self.graph.fresh(f"{self.name}_{op_type}"),
                                                 **{k: v for k, v in attrs.items() if v is not None}))
        return names[0] if outputs is None or isinstance(outputs, list) and len(names) == 1 else names

    def const(self, value: Any, dtype: Any, hint: str = "const") -> str:
        """An initializer holding ``value`` as ``dtype``; returns its name."""
        name = self.graph.fresh(f"{self.name}_{hint}")
        self.graph.add_initializer(name, onp.asarray(value, dtype=dtype))
        return name

    def ints(self, values: Any, hint: str = "ints") -> str:
        """An int64 initializer (shapes, axes, pads)."""
        return self.const(onp.asarray(list(values), dtype=onp.int64).reshape(-1), onp.int64, hint)

    def scalar_like(self, value: Any, index: int = 0, hint: str = "scalar") -> str:
        """A 0-d constant with the dtype of input ``index``."""
        return self.const(value, self.in_dtypes[index], hint)

    def rank(self, index: int = 0) -> int:
        return len(self.in_shapes[index])

    def out(self, index: int = 0) -> list[str]:
        """``[name of output index]``, to pass as ``emit``'s ``outputs``."""
        return [self.outputs[index]]
