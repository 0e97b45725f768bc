"""Reading MXNet symbol JSON into Symbols: attribute splitting and the upgrades of older graphs.

``graph_from_json`` (in ``mxjax.graph.ir``) gives nodes with raw string attributes; here each
op node's attributes are split into typed op parameters and other attributes,
and graphs older than MXNet 1.9.1 get the upgrades MXNet's own loader applies
(FORMATS.md 2.9): hidden-key renames, missing auxiliary inputs, initializer
hints, and the old meaning of ``argmax(axis=-1)``.

Control-flow nodes (``_foreach``, ``_while_loop``, ``_cond``) keep their bodies as
the node's ``subgraphs``, as MXNet writes them; :func:`graph_body` turns such a
sub-graph into the op's :class:`Subgraph` parameter (:mod:`mxjax.graph.body`, shared
with the bodies ``mx.npx`` traces).  A body may read a constant array (a plain array
captured at trace time): its variable carries the value in ``__constant__``.
"""
from __future__ import annotations

import json
import warnings
from typing import Any

from ..graph.ir import MXNET_VERSION, Entry, Node, graph_from_json, topo_order
from ..base import MXNetError, MXNetTypeError, decode_attr
from ..serialization import file_label
from ._hints import apply_init_hints
from ..operator.control_flow import CONTROL_FLOW_ROLES, SUBGRAPHS
from ..operator.naming import op_for_json_name
from ..graph.body import graph_body
from ..graph.interpret import CONSTANTS, SUBGRAPH_OP
from .symbol import Symbol

NEWEST_READ = 20000  # MXNet 2.0.0: the newest JSON whose layout mxjax knows (2.0 writes it as 1.9.1 does)

_HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


def symbol_from_json(text: str, source: str | None = None) -> Symbol:
    """A Symbol from MXNet symbol JSON of any version MXNet 1.9.1 reads.

    ``source`` names where the text came from (a file) in error messages.
    """
    where = "symbol JSON" if source is None else f"symbol JSON {source}"
    if not isinstance(text, str):
        raise MXNetTypeError(f"{where}: expected the JSON text as str, got {type(text).__name__}")
    try:
        data = json.loads(text, strict=False)
    except (json.JSONDecodeError, RecursionError) as err:
        raise MXNetError(f"{where}: not valid JSON ({type(err).__name__}: {err})") from None
    _check_graph(data, where)
    try:
        outputs, version = graph_from_json(data)
        _prepare(outputs, version)
    except MXNetError as err:
        if source is None or source in str(err):
            raise
        text = str(err).removeprefix("symbol JSON: ")
        raise type(err)(f"{where}: {text}") from None
    _check_output_indices(outputs, where)
    return Symbol(outputs)


def _prepare(outputs: list[Entry], version: int) -> None:
    """Upgrade an older graph and split its attributes into op parameters."""
    if version > NEWEST_READ:
        warnings.warn(f"symbol JSON was written by MXNet version {version}, newer than {NEWEST_READ}; "
                      "loading it as is", stacklevel=4)
    nodes = topo_order(outputs)
    if version < MXNET_VERSION:
        _upgrade_hidden_keys(nodes)
    if version < 900:
        _add_missing_aux_inputs(nodes)
    if version < 904:
        apply_init_hints(nodes)
    if version < 905:
        for node in nodes:
            if node.op in ("argmax", "argmin") and node.attrs.get("axis") == "-1":
                del node.attrs["axis"]
    _split_graph_attrs(nodes)


# -- validation: everything Python would otherwise misread (negative ids index from the end) ----------

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_entry(entry: Any, limit: int, what: str, where: str) -> None:
    """``[node id, output index(, version)]`` with 0 <= id < limit."""
    if not (isinstance(entry, list) and len(entry) in (2, 3) and all(map(_is_int, entry))):
        raise MXNetError(f"{where}: {what} is {entry!r}; expected [node id, output index] or "
                         "[node id, output index, version] of integers")
    if not 0 <= entry[0] < limit:
        allowed = f"an id in 0..{limit - 1}" if limit else "no id: nothing is listed before it"
        raise MXNetError(f"{where}: {what} {entry!r} refers to node {entry[0]}; expected {allowed} "
                         "(a node may only read nodes listed before it)")
    if entry[1] < 0 or (len(entry) == 3 and entry[2] < 0):
        raise MXNetError(f"{where}: {what} {entry!r} has a negative output index or version")


def _check_graph(data: Any, where: str) -> None:
    """Raise MXNetError naming the bad entry unless ``data`` is a well-formed graph.

    Every input, control dependency and head names a node by an id in range, and an
    input or dependency names an EARLIER node (which also rules out cycles); nodes are
    objects with string ``op`` and ``name``; ``arg_nodes`` are ids of variables.
    """
    if not isinstance(data, dict):
        raise MXNetError(f"{where}: expected an object with 'nodes' and 'heads', got {type(data).__name__}")
    nodes, heads = data.get("nodes"), data.get("heads")
    if not isinstance(nodes, list) or not isinstance(heads, list):
        raise MXNetError(f"{where}: 'nodes' and 'heads' must be lists, got {type(nodes).__name__} and "
                         f"{type(heads).__name__}")
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise MXNetError(f"{where}: node {i} is malformed: a {type(node).__name__}, not an object")
        label = f"node {i} is malformed ({node.get('name')!r}):"
        for key in ("op", "name"):
            if not isinstance(node.get(key), str):
                raise MXNetError(f"{where}: {label} needs a string {key!r}, got {node.get(key)!r}")
        inputs = node.get("inputs", [])
        if not isinstance(inputs, list):
            raise MXNetError(f"{where}: {label} 'inputs' must be a list, got {type(inputs).__name__}")
        if node["op"] == "null" and inputs:
            raise MXNetError(f"{where}: {label} is a variable (op 'null') but has inputs {inputs!r}")
        for j, entry in enumerate(inputs):
            _check_entry(entry, i, f"{label} input {j}", where)
        deps = node.get("control_deps", [])
        if not (isinstance(deps, list) and all(_is_int(d) and 0 <= d < i for d in deps)):
            raise MXNetError(f"{where}: {label} control_deps {deps!r}; expected ids of earlier nodes (0..{i - 1})")
        for key in ("param", "attr", "attrs"):
            if not isinstance(node.get(key) or {}, dict):
                raise MXNetError(f"{where}: {label} {key!r} must be an object of strings, got {node[key]!r}")
        subs = node.get("subgraphs", [])
        if not isinstance(subs, list):
            raise MXNetError(f"{where}: {label} 'subgraphs' must be a list, got {type(subs).__name__}")
        for k, sub in enumerate(subs):
            _check_graph(sub, f"{where}: node {i} subgraph {k}")
    for j, entry in enumerate(heads):
        _check_entry(entry, len(nodes), f"bad heads entry {j}:", where)
    args = data.get("arg_nodes", [])
    if not (isinstance(args, list) and all(_is_int(a) and 0 <= a < len(nodes) for a in args)):
        raise MXNetError(f"{where}: arg_nodes {args!r}; expected ids of nodes (0..{len(nodes) - 1})")
    for a in args:
        if nodes[a]["op"] != "null":
            raise MXNetError(f"{where}: arg_nodes lists node {a} ({nodes[a]['name']!r}), which is an "
                             f"{nodes[a]['op']!r} node, not a variable")
    attrs = data.get("attrs") or {}
    version = attrs.get("mxnet_version") if isinstance(attrs, dict) else None
    if not isinstance(attrs, dict) or ("mxnet_version" in attrs and not (
            isinstance(version, list) and len(version) == 2 and _is_int(version[1]))):
        raise MXNetError(f"{where}: graph attrs {attrs!r}; expected an object whose mxnet_version is "
                         "[\"int\", <version>]")


def _check_output_indices(outputs: list[Entry], where: str) -> None:
    """Every entry reads an output its node has (known once the op parameters are decoded)."""
    def check(node: Node, index: int, what: str) -> None:
        if index >= node.num_outputs:
            raise MXNetError(f"{where}: {what} reads output {index} of node {node.name!r} ({node.op}), "
                             f"which has {node.num_outputs} output(s)")
    for node, index in outputs:
        check(node, index, "a head")
    for node in topo_order(outputs):
        for src, index in node.inputs:
            check(src, index, f"node {node.name!r}")
        for sub in node.subgraphs:
            _check_output_indices(sub, f"{where}: subgraph of {node.name!r}")


def _split_graph_attrs(nodes: list[Node]) -> None:
    for node in nodes:
        if node.is_variable:
            continue
        if node.op == SUBGRAPH_OP:  # a partitioned group: its parameters are its subgraph's nodes'
            node.num_outputs = len(node.subgraphs[0])
            _split_graph_attrs(topo_order(node.subgraphs[0]))
        elif node.op in CONTROL_FLOW_ROLES:
            _split_attrs(node)
            _read_bodies(node)
        else:
            _split_attrs(node)


def _read_bodies(node: Node) -> None:
    """A control-flow node's sub-graphs as its ``__subgraphs__`` parameter."""
    roles = CONTROL_FLOW_ROLES[node.op]
    if len(node.subgraphs) != len(roles):
        raise MXNetError(f"symbol JSON: node {node.name!r} ({node.op}) needs {len(roles)} subgraphs "
                         f"({', '.join(roles)}), got {len(node.subgraphs)}")
    bodies = []
    for role, sub in zip(roles, node.subgraphs):
        _split_graph_attrs(topo_order(sub))
        bodies.append(graph_body(sub, f"{node.op.lstrip('_')}_{role}"))  # the labels npx traces give
    node.params[SUBGRAPHS] = tuple(bodies)


def _split_attrs(node: Node) -> None:
    """Move the op's parameters out of the raw attributes, decoded with the op's types."""
    op = op_for_json_name(node.op)
    attrs, params = {}, {}
    for key, text in node.attrs.items():
        if key in op.params:
            try:
                params[key] = op.params[key].decode(text)
            except MXNetError:
                raise
            except (ValueError, TypeError, KeyError, SyntaxError, OverflowError) as err:
                raise MXNetError(f"node {node.name!r} ({node.op}): parameter {key}={text!r} cannot be read "
                                 f"({type(err).__name__}: {err})") from None
        elif key == CONSTANTS:
            params[key] = decode_attr(text)
        else:
            attrs[key] = text  # hidden (__x__) and unknown keys are kept and written back
    node.params, node.attrs = params, attrs
    try:
        node.num_outputs = max(1, int(op.count_outputs(params)))
    except (ValueError, TypeError, KeyError, OverflowError) as err:
        raise MXNetError(f"node {node.name!r} ({node.op}): its parameters {params} do not give a number "
                         f"of outputs ({type(err).__name__}: {err})") from None


def _upgrade_hidden_keys(nodes: list[Node]) -> None:
    for node in nodes:
        for key in list(node.attrs):
            if key in _HIDDEN_KEYS:
                node.attrs[f"__{key}__"] = node.attrs.pop(key)
        if node.is_variable:
            continue
        names = _input_names(node)
        for key in list(node.attrs):
            for hidden in _HIDDEN_KEYS:
                arg = key[: -len(hidden) - 1] if key.endswith("_" + hidden) else None
                if arg in names:
                    source = node.inputs[names.index(arg)][0]
                    if source.is_variable:
                        source.attrs[f"__{hidden}__"] = node.attrs.pop(key)
                    break


def _input_names(node: Node) -> list[str]:
    try:
        return list(op_for_json_name(node.op).inputs)
    except MXNetError:
        return []


def _add_missing_aux_inputs(nodes: list[Node]) -> None:
    """Pre-0.9 graphs omit auxiliary inputs: create ``<node>_<input>`` variables for them."""
    for node in nodes:
        if node.is_variable:
            continue
        op = op_for_json_name(node.op)
        if not op.aux_inputs:
            continue
        for slot in range(len(node.inputs), len(op.inputs)):
            name = op.inputs[slot]
            legacy = {"moving_mean": "moving_mean", "moving_var": "moving_var"}.get(name, name)
            node.inputs.append((Node("null", f"{node.name}_{legacy}", attrs=dict(node.attrs)), 0))


def fromjson(json: str) -> Symbol:
    """A Symbol from MXNet symbol JSON text (``mx.sym.fromjson`` / ``load_json``)."""
    return symbol_from_json(json)


load_json = fromjson


def load(fname: str) -> Symbol:
    """A Symbol from a ``*-symbol.json`` file; a corrupt file gives MXNetError naming it."""
    with open(fname, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise MXNetError(f"symbol JSON {file_label(fname)} is not UTF-8 text ({err})") from None
    return symbol_from_json(text, file_label(fname))
