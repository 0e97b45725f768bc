"""Shape rules MXNet's shape inference has and XLA's cannot give: the parameter shapes an op needs
from its data shape (FullyConnected's weight from ``num_hidden``), and 1.x creation nodes whose 0
dimensions their consumer fills in.  Shared by inference (``mxjax.symbol.infer``) and graph evaluation (``_interpret``)."""
from __future__ import annotations

from math import prod
from typing import Any, Callable

from ._ir import Node
from .operator.rnn import param_size  # the RNN op's own layout rule


def _fc(shapes: list, p: dict) -> dict:
    data = shapes[0]
    in_dim = prod(data[1:]) if p.get("flatten", True) else data[-1]
    return {1: (p["num_hidden"], in_dim), 2: (p["num_hidden"],)}


def _channels(data: tuple, layout: Any) -> int:
    return data[-1] if layout and str(layout).endswith("C") else data[1]


def _conv(shapes: list, p: dict) -> dict:
    data, kernel, groups = shapes[0], tuple(p.get("kernel", ())), p.get("num_group", 1)
    c = _channels(data, p.get("layout"))
    layout = p.get("layout")
    weight = ((p["num_filter"], *kernel, c // groups) if layout and str(layout).endswith("C")
              else (p["num_filter"], c // groups, *kernel))
    return {1: weight, 2: (p["num_filter"],)}


def _deconv(shapes: list, p: dict) -> dict:
    data, kernel, groups = shapes[0], tuple(p.get("kernel", ())), p.get("num_group", 1)
    c = _channels(data, p.get("layout"))
    return {1: (c, p["num_filter"] // groups, *kernel), 2: (p["num_filter"],)}


def _rnn(shapes: list, p: dict) -> dict:
    """The flat parameter vector and the (cell) states from TNC data, as MXNet's RNN shape rule."""
    steps, batch, size_in = shapes[0]
    layers, directions, hidden = p["num_layers"], 2 if p.get("bidirectional") else 1, p["state_size"]
    out = p.get("projection_size") or hidden
    return {1: (param_size(p["mode"], layers, directions, size_in, hidden, p.get("projection_size")),),
            2: (layers * directions, batch, out), 3: (layers * directions, batch, hidden)}


def _per_channel(axis_key: str, default_axis: int, slots: tuple) -> Callable:
    def rule(shapes: list, p: dict) -> dict:
        data = shapes[0]
        c = (data[p.get(axis_key, default_axis)],)
        return {slot: c for slot in slots}
    return rule


INPUT_RULES: dict[str, Callable[[list, dict], dict]] = {
    "FullyConnected": _fc,
    "Convolution": _conv,
    "Deconvolution": _deconv,
    "RNN": _rnn,
    "BatchNorm": _per_channel("axis", 1, (1, 2, 3, 4)),
    "LayerNorm": _per_channel("axis", -1, (1, 2)),
    "GroupNorm": lambda s, p: {1: (s[0][1],), 2: (s[0][1],)},
    "InstanceNorm": lambda s, p: {1: (s[0][1],), 2: (s[0][1],)},
    "Embedding": lambda s, p: {1: (p["input_dim"], p["output_dim"])},
    "LeakyReLU": lambda s, p: {1: (s[0][1],)},
    "SoftmaxOutput": lambda s, p: {1: (s[0][0], *s[0][2:]) if p.get("multi_output") else s[0][:-1]},
    "SVMOutput": lambda s, p: {1: s[0][:-1]},
    # the regression outputs take labels of the data's shape
    **{name: (lambda s, p: {1: s[0]}) for name in (
        "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput")},
}


_CREATION = ("_zeros", "_ones", "_full")


def is_deferred_creation(node: Node) -> bool:
    """A 1.x ``zeros``/``ones``/``full`` node whose shape has 0s: dimensions MXNet 1.x infers from the
    node's consumer (Gluon 1.x's exported RNN layers make their begin states as ``zeros((L*D, 0, H))``)."""
    if node.is_variable or node.op not in _CREATION:
        return False
    shape = node.params.get("shape", ())
    return isinstance(shape, (tuple, list)) and 0 in shape


def consumer_shape(op_name: str, params: dict, slot: int, in_shapes: list) -> tuple | None:
    """The shape op ``op_name``'s rule (``INPUT_RULES``) gives input ``slot``, from its data shape;
    None when it has no rule for it."""
    rule = INPUT_RULES.get(op_name)
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
