"""``mx.viz``: draw a Symbol as a Graphviz digraph and print its layer table.

``plot_network`` and ``print_summary`` follow MXNet 1.x/2.0's ``mx.viz``: the
same labels, colours, edge layout and table columns, computed from the graph
IR directly (shapes from ``infer_avals``) instead of re-parsing the JSON.
Where MXNet's own logic was accidental (a table row only for the first graph
input, parameter counts only for four hard-coded op types) mxjax does the
evident intent: every graph input gets a row and every layer counts the
parameters it actually reads.  Rendering needs the Graphviz ``dot`` binary;
building the ``Digraph`` (and its ``.source``) does not.
"""
from __future__ import annotations

import re
import warnings
from math import prod
from typing import Any

import numpy as onp

from .graph.ir import Node
from .base import MXNetError, MXNetTypeError, MXNetValueError, normalize_dtype
from .symbol.infer import infer_avals
from .symbol.interpret import node_op
from .symbol.symbol import Symbol

__all__ = ["plot_network", "print_summary"]

# MXNet's palette, indexed as its plot_network does
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")
_FAMILY_COLOR = {
    "Convolution": 1, "FullyConnected": 1,
    "Activation": 2, "LeakyReLU": 2,
    "BatchNorm": 3,
    "Pooling": 4,
    "Concat": 5, "Flatten": 5, "Reshape": 5, "reshape": 5, "_npx_reshape": 5, "concatenate": 5,
    "SoftmaxOutput": 6, "softmax": 6, "log_softmax": 6,
}
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma",
                    "_moving_var", "_moving_mean", "_running_var", "_running_mean")
# input slots that hold learned parameters, by the op's own input names
_PARAM_SLOTS = frozenset({"weight", "bias", "gamma", "beta"})


def _looks_like_weight(name: str) -> bool:
    """MXNet's ``hide_weights`` rule: the variable's name ends like a parameter's."""
    return name.endswith(_WEIGHT_SUFFIXES)


def _canonical(node: Node) -> str:
    """The registered op name (``_npx_convolution`` and ``Convolution`` are one family)."""
    try:
        return node_op(node).name
    except MXNetError:
        return node.op


def _param(node: Node, key: str) -> Any:
    if key in node.params:
        return node.params[key]
    return node.attrs.get(key)


def _dims(value: Any) -> str:
    """``(3, 3)`` / ``"(3, 3)"`` / ``3`` as MXNet's label writes it: ``3x3``."""
    if isinstance(value, str):
        return "x".join(re.findall(r"\d+", value))
    if isinstance(value, (tuple, list)):
        return "x".join(str(int(v)) for v in value)
    return str(value)


def _shape_text(aval: Any) -> str:
    """An output shape without its batch axis, as MXNet prints it (``64x28x28``)."""
    return "" if aval is None else "x".join(str(d) for d in aval.shape[1:])


def _check_symbol(symbol: Any, func: str) -> None:
    if not isinstance(symbol, Symbol):
        raise MXNetTypeError(f"{func}: symbol must be an mx.sym.Symbol, got {type(symbol).__name__}")


def _infer(symbol: Symbol, shape: Any, dtype: Any, func: str) -> dict[int, list]:
    """``{id(node): [aval per output]}`` for the given input shapes (and dtypes); every shape must resolve."""
    if not isinstance(shape, dict):
        raise MXNetTypeError(f"{func}: shape must be a dict of input name -> shape tuple, "
                             f"got {type(shape).__name__}")
    if dtype is not None and not isinstance(dtype, dict):
        raise MXNetTypeError(f"{func}: dtype must be a dict of input name -> dtype, got {type(dtype).__name__}")
    inputs = {n.name for n in symbol._nodes() if n.is_variable}
    shapes = {}
    for name, value in shape.items():
        if name not in inputs:
            raise MXNetValueError(f"{func}: {name!r} is not an input of the symbol; inputs are {sorted(inputs)}")
        try:
            shapes[name] = tuple(int(d) for d in value)
        except (TypeError, ValueError):
            raise MXNetValueError(f"{func}: shape of {name!r} must be a tuple of ints, got {value!r}") from None
    dtypes = {}
    for name, value in (dtype or {}).items():
        if name not in inputs:
            raise MXNetValueError(f"{func}: {name!r} is not an input of the symbol; inputs are {sorted(inputs)}")
        dtypes[name] = normalize_dtype(value)
    avals = infer_avals(symbol._outputs, shapes, dtypes, partial=True)
    unknown = [n for n in symbol._nodes() if n.is_variable and avals[id(n)][0] is None]
    if unknown:
        params, aux = _classify(symbol)
        # name the graph inputs first: parameter shapes usually follow from them
        roots = [n.name for n in unknown if id(n) not in params and id(n) not in aux]
        unknown = roots or [n.name for n in unknown]
        raise MXNetValueError(f"{func}: input shape is incomplete: cannot infer the shapes of {unknown} "
                              f"from {shapes}; pass them in shape=")
    return avals


def _infer_dtypes(symbol: Symbol, dtype: Any, func: str) -> dict[int, list]:
    """Dtypes only (no shapes given): through ``Symbol.infer_type``, mapped back to nodes."""
    if not isinstance(dtype, dict):
        raise MXNetTypeError(f"{func}: dtype must be a dict of input name -> dtype, got {type(dtype).__name__}")
    internals = symbol.get_internals()
    try:
        _, out_types, _ = internals.infer_type(**dtype)
    except MXNetError as err:
        raise MXNetValueError(f"{func}: cannot infer dtypes without shapes ({err}); pass shape= as well") from None
    if out_types is None or any(t is None for t in out_types):
        raise MXNetValueError(f"{func}: input type is incomplete; pass the dtypes of all inputs")
    avals: dict[int, list] = {}
    for (node, _), t in zip(internals._outputs, out_types):
        avals.setdefault(id(node), []).append(_DtypeOnly(onp.dtype(t)))
    return avals


class _DtypeOnly:
    """An aval with a dtype and no known shape (edge labels then show only the dtype)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: onp.dtype) -> None:
        self.dtype = dtype


def _node_style(node: Node, node_attr: dict) -> tuple[str, dict]:
    """MXNet's label and fill colour for an op node."""
    attr = dict(node_attr)
    family = _canonical(node)
    label = node.name
    if family == "Convolution":
        stride = _param(node, "stride")
        label = f"Convolution\n{_dims(_param(node, 'kernel'))}/{_dims(stride) if stride else '1'}, " \
                f"{_param(node, 'num_filter')}"
    elif family == "FullyConnected":
        label = f"FullyConnected\n{_param(node, 'num_hidden')}"
    elif family == "Activation":
        label = f"Activation\n{_param(node, 'act_type')}"
    elif family == "LeakyReLU":
        label = f"LeakyReLU\n{_param(node, 'act_type') or 'Leaky'}"
    elif family == "Pooling":
        kernel, stride = _param(node, "kernel"), _param(node, "stride")
        label = f"Pooling\n{_param(node, 'pool_type') or 'max'}, " \
                f"{_dims(kernel) if kernel else '[]'}/{_dims(stride) if stride else '1'}"
    elif family == "Custom":
        label = str(_param(node, "op_type"))
    attr["fillcolor"] = _COLORS[_FAMILY_COLOR.get(family, 7)]
    return label, attr


def plot_network(symbol: Symbol, title: str = "plot", save_format: str = "pdf", shape: dict | None = None,
                 dtype: dict | None = None, node_attrs: dict = {}, hide_weights: bool = True) -> Any:  # noqa: B006
    """A ``graphviz.Digraph`` of the graph computing ``symbol`` (MXNet's ``mx.viz.plot_network``).

    One box per op node, one oval per variable (variables named like parameters
    are hidden when ``hide_weights``).  Edges run ``consumer -> input`` with
    ``dir=back``, as MXNet writes them, so the drawn arrow points from input to
    consumer; with ``shape`` each edge is labelled with the tensor's shape
    without the batch axis (``64x28x28``), with ``dtype`` also ``(float32)``.
    """
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("plot_network requires the graphviz Python package (pip install graphviz)") from None
    _check_symbol(symbol, "plot_network")
    if not isinstance(node_attrs, dict):
        raise MXNetTypeError(f"plot_network: node_attrs must be a dict of Graphviz attributes, "
                             f"got {type(node_attrs).__name__}")
    avals = None
    if shape is not None:
        avals = _infer(symbol, shape, dtype, "plot_network")
    elif dtype is not None:
        avals = _infer_dtypes(symbol, dtype, "plot_network")
    nodes = symbol._nodes()
    names = [n.name for n in nodes]
    if len(names) != len(set(names)):
        seen: set[str] = set()
        repeated = sorted({n for n in names if n in seen or seen.add(n)})
        warnings.warn("There are multiple variables with the same name in your graph, this may result in "
                      "cyclic graph. Repeated names: " + ",".join(repeated), RuntimeWarning, stacklevel=2)

    node_attr = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
    node_attr.update(node_attrs)
    dot = Digraph(name=title, format=save_format)
    hidden: set[int] = set()
    for node in nodes:
        if node.is_variable:
            if hide_weights and _looks_like_weight(node.name):
                hidden.add(id(node))
                continue
            attr = dict(node_attr, shape="oval", fillcolor=_COLORS[0])
            dot.node(name=node.name, label=node.name, **attr)
        else:
            label, attr = _node_style(node, node_attr)
            dot.node(name=node.name, label=label, **attr)

    for node in nodes:
        if node.is_variable:
            continue
        entries = node.inputs
        if node.op == "_contrib_BilinearResize2D":  # its second input only supplies a target shape
            entries = entries[:1]
        for source, index in entries:
            if id(source) in hidden:
                continue
            label = ""
            if avals is not None:
                aval = avals[id(source)][index]
                if shape is not None:
                    label = _shape_text(aval)
                if dtype is not None:
                    label += f"({onp.dtype(aval.dtype).name})"
            dot.edge(tail_name=node.name, head_name=source.name, dir="back", arrowtail="open", label=label)
    return dot


def _classify(symbol: Symbol) -> tuple[set[int], set[int]]:
    """(parameter variables, auxiliary-state variables), by node id.

    A parameter is a variable an op reads in a learned-parameter slot (its input
    named weight/bias/gamma/beta) or one named like a parameter; auxiliary states
    (BatchNorm's moving statistics) are not trained and not counted, as in MXNet,
    whose BatchNorm row counts gamma and beta only.
    """
    params: set[int] = set()
    aux: set[int] = set()
    for node in symbol._nodes():
        if node.is_variable:
            continue
        try:
            op = node_op(node)
            slot_names, aux_slots = op.inputs, set(op.aux_inputs)
        except MXNetError:
            slot_names, aux_slots = (), set()
        for slot, (source, _) in enumerate(node.inputs):
            if not source.is_variable:
                continue
            if slot in aux_slots:
                aux.add(id(source))
            elif (slot < len(slot_names) and slot_names[slot] in _PARAM_SLOTS) or _looks_like_weight(source.name):
                params.add(id(source))
    return params - aux, aux


def print_summary(symbol: Symbol, shape: dict | None = None, line_length: int = 120,
                  positions: list = [.44, .64, .74, 1.]) -> None:  # noqa: B006
    """Print MXNet's layer table: name (type), output shape, parameter count, previous layers.

    Rows are the graph inputs (type ``null``) and op nodes in topological order;
    shapes omit the batch axis.  A row's ``Param #`` is the element count of the
    learned parameters the node reads (weights, biases, gamma/beta; not
    BatchNorm's moving statistics); ``Total params`` counts each parameter
    once, so a weight shared by two layers is not counted twice.
    """
    _check_symbol(symbol, "print_summary")
    if shape is None:
        raise MXNetValueError("print_summary: shape is required: a dict of input name -> shape tuple, "
                              "e.g. shape={'data': (1, 3, 224, 224)}")
    avals = _infer(symbol, shape, None, "print_summary")
    params, aux = _classify(symbol)
    inputs = {id(n) for n in symbol._nodes() if n.is_variable and id(n) not in params and id(n) not in aux}

    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def print_row(fields: list) -> None:
        line = ""
        for field, end in zip(fields, positions):
            line += str(field)
            line = line[:end]
            line += " " * (end - len(line))
        print(line)

    print("_" * line_length)
    print_row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    rows = [n for n in symbol._nodes() if not n.is_variable or id(n) in inputs]
    counted: dict[int, int] = {}
    for i, node in enumerate(rows):
        previous: list[str] = []
        count = 0
        if not node.is_variable:
            for source, _ in node.inputs:
                if id(source) in params:
                    size = prod(avals[id(source)][0].shape)
                    count += size
                    counted[id(source)] = size
                elif not source.is_variable or id(source) in inputs:
                    previous.append(source.name)
        kind = "null" if node.is_variable else node.op
        print_row([f"{node.name}({kind})", _shape_text(avals[id(node)][0]), count,
                   previous[0] if previous else ""])
        for name in previous[1:]:
            print_row(["", "", "", name])
        print(("=" if i == len(rows) - 1 else "_") * line_length)
    print(f"Total params: {sum(counted.values())}")
    print("_" * line_length)
