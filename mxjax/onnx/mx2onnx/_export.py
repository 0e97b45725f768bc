"""``export_model`` and ``get_operator_support``: walk a Symbol's JSON graph and build
an ONNX model, one registered converter per MXNet node.

Shapes and dtypes of every tensor come from mxjax's own inference over the graph
(``in_shapes`` for the data inputs, the arrays for the parameters); converters that
need them (reshape codes, squeeze, reductions) read them from their ``OpNode``.
"""
from __future__ import annotations

import json
import logging
import os
from typing import Any

import numpy as onp

from ... import ndarray, symbol
from ...base import MXNetError
from ...symbol import Symbol
from ...symbol.infer import infer_avals
from ._registry import CONVERTERS, OPSET, GraphBuilder, OpNode, require_onnx

_log = logging.getLogger(__name__)

IR_VERSION = 7  # the ONNX IR version that goes with opset 13, so that older runtimes load the file


def get_operator_support(opset_version: int | None = None) -> list[str]:
    """Sorted names of the MXNet ops that can be exported at ``opset_version`` (default:
    the newest opset of the installed ``onnx``)."""
    onnx = require_onnx()
    if opset_version is None:
        opset_version = onnx.defs.onnx_opset_version()
    if int(opset_version) < OPSET:
        return []
    return sorted(CONVERTERS)


# -- reading the inputs ------------------------------------------------------------------
def _as_numpy(value: Any) -> onp.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else onp.asarray(value)


def _load_files(sym_path: str, params_path: str) -> tuple[Symbol, dict]:
    for path in (sym_path, params_path):
        if not os.path.isfile(path):
            raise ValueError(f"export_model: {path!r} is not a file; give the -symbol.json and .params paths")
    loaded = ndarray.load(params_path)
    if not isinstance(loaded, dict):
        raise ValueError(f"export_model: {params_path!r} holds a list of arrays, not named parameters")
    return symbol.load(sym_path), loaded


def _read_model(sym: Any, params: Any) -> tuple[Symbol, dict[str, onp.ndarray]]:
    if isinstance(sym, (str, os.PathLike)) and isinstance(params, (str, os.PathLike)):
        sym, params = _load_files(os.fspath(sym), os.fspath(params))
    elif isinstance(sym, Symbol) and isinstance(params, (list, tuple)) and len(params) == 2 \
            and all(isinstance(p, dict) for p in params):
        params = {**params[0], **params[1]}
    elif not (isinstance(sym, Symbol) and isinstance(params, dict)):
        raise ValueError("export_model: sym and params must both be file paths, or a Symbol and a dict "
                         f"(or [arg_params, aux_params]); got {type(sym).__name__} and {type(params).__name__}")
    values = {}
    for key, value in params.items():
        name = key.split(":", 1)[1] if key.startswith(("arg:", "aux:")) else key
        values[name] = _as_numpy(value)
    return sym, values


def _data_inputs(sym: Symbol, params: dict) -> list[str]:
    """Graph inputs the caller feeds: not parameters, and not the label MXNet adds for the
    last node (``<last node>_label``), which inference does not use."""
    internals = sym.get_internals()
    label = f"{internals[len(internals) - 1].name}_label"
    return [n for n in sym.list_inputs() if n not in params and n != label]


# -- the graph walk -----------------------------------------------------------------------
def _tensor_info(name: str, dtype: Any, shape: Any) -> Any:
    from onnx import helper
    dims = None if shape is None else [None if d is None else d for d in shape]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(onp.dtype(dtype)), dims)


def _build_graph(sym: Symbol, params: dict, in_shapes: list[tuple], in_dtypes: list[Any],
                 dynamic: bool, dynamic_input_shapes: list | None, verbose: bool) -> Any:
    from onnx import helper
    data_names = _data_inputs(sym, params)
    if len(data_names) != len(in_shapes):
        raise ValueError(f"export_model: the model has {len(data_names)} data input(s) {data_names} "
                         f"but in_shapes gives {len(in_shapes)} shape(s)")
    if len(in_dtypes) != len(in_shapes):
        raise ValueError(f"export_model: in_types has {len(in_dtypes)} entries for {len(in_shapes)} inputs")
    shapes = {n: tuple(int(d) for d in s) for n, s in zip(data_names, in_shapes)}
    dtypes = {n: onp.dtype(t) for n, t in zip(data_names, in_dtypes)}
    declared = dict(zip(data_names, in_shapes))
    if dynamic:
        given = dynamic_input_shapes or [(None,) * len(s) for s in in_shapes]
        if len(given) != len(in_shapes) or any(len(g) != len(s) for g, s in zip(given, in_shapes)):
            raise ValueError("export_model: dynamic_input_shapes must give one shape of the same rank "
                             f"per input; got {given} for in_shapes {in_shapes}")
        declared = dict(zip(data_names, given))
    elif dynamic_input_shapes is not None:
        raise ValueError("export_model: dynamic_input_shapes needs dynamic=True")
    for name, value in params.items():
        shapes[name], dtypes[name] = value.shape, value.dtype

    nodes = sym._nodes()
    avals = infer_avals(sym._outputs, shapes, dtypes, partial=True)
    graph_json = json.loads(sym.tojson())["nodes"]
    if [n["name"] for n in graph_json] != [n.name for n in nodes]:
        raise MXNetError("export_model: the symbol's JSON and its graph list different nodes")

    builder = GraphBuilder(dynamic=dynamic)
    tensor_names: dict[tuple[int, int], str] = {}
    graph_inputs, seen_names = [], set()
    params_used = set(sym.list_inputs()) & set(params)
    builder.used_names.update(n.name for n in nodes if n.is_variable)
    for idx, (entry, node) in enumerate(zip(graph_json, nodes)):
        name = entry["name"]
        if name in seen_names:
            name = f"idx_{idx}_{name}"
        seen_names.add(name)
        if node.is_variable:
            tensor_names[(idx, 0)] = name
            if name in params_used:  # listed as an input too, as MXNet's exporter does
                builder.add_initializer(name, params[name])
                graph_inputs.append(_tensor_info(name, params[name].dtype, params[name].shape))
            elif name in declared:
                graph_inputs.append(_tensor_info(name, dtypes[name], declared[name]))
            continue
        outs = avals[id(node)]
        if any(a is None for a in outs):
            raise MXNetError(f"export_model: cannot infer the output shape of node {name!r} (op {entry['op']}) "
                             "from in_shapes and the parameters")
        out_names = [name] if len(outs) == 1 else [f"{name}{i}" for i in range(len(outs))]
        builder.used_names.update(out_names)
        for i, out_name in enumerate(out_names):
            tensor_names[(idx, i)] = out_name
        converter = CONVERTERS.get(entry["op"])
        if converter is None:
            raise MXNetError(f"export_model: no ONNX converter for op {entry['op']!r} (node {name!r}); "
                             "mx.onnx.get_operator_support() lists the ops that can be exported")
        in_entries = [(src, i) for src, i, *_ in entry["inputs"]]
        in_avals = [avals[id(nodes[src])][i] for src, i in in_entries]
        op_node = OpNode(
            graph=builder, op=entry["op"], name=name,
            attrs={k: v for k, v in entry.get("attrs", {}).items() if not k.startswith("__")},
            inputs=[tensor_names[e] for e in in_entries],
            in_shapes=[None if a is None else tuple(a.shape) for a in in_avals],
            in_dtypes=[None if a is None else onp.dtype(a.dtype) for a in in_avals],
            outputs=out_names, out_shapes=[tuple(a.shape) for a in outs],
            out_dtypes=[onp.dtype(a.dtype) for a in outs])
        if verbose:
            _log.info("export_model: converting node %d %r (op %s)", idx, name, entry["op"])
        count = len(builder.nodes)
        converter(op_node)
        made = {o for n in builder.nodes[count:] for o in n.output}
        missing = [o for o in out_names if o not in made]
        if missing:
            raise MXNetError(f"export_model: the converter of op {entry['op']} wrote no tensor {missing}")

    index = {id(n): i for i, n in enumerate(nodes)}
    outputs = []
    for node, i in sym._outputs:
        aval = avals[id(node)][i]
        shape = [None] * len(aval.shape) if dynamic else list(aval.shape)
        outputs.append(_tensor_info(tensor_names[(index[id(node)], i)], aval.dtype, shape))
    return helper.make_graph(builder.nodes, "mxnet_converted_model", graph_inputs, outputs,
                             initializer=builder.initializers)


def export_model(sym, params, in_shapes=None, in_types=onp.float32, onnx_file_path='model.onnx',
                 verbose=False, dynamic=False, dynamic_input_shapes=None, run_shape_inference=False,
                 input_type=None, input_shape=None, large_model=False):
    """Export a Symbol (or a -symbol.json path) and its parameters (dict, [arg, aux] or a
    .params path) to an ONNX file at ``onnx_file_path``; returns that path.

    ``in_shapes`` lists the shape of each data input (``input_shape`` is its old name),
    ``in_types`` their dtype(s) (old name ``input_type``).  ``dynamic=True`` leaves the
    input dimensions unfixed (or as ``dynamic_input_shapes`` gives them).  ``large_model``
    stores the weights in files next to the model.
    """
    onnx = require_onnx()
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("export_model: in_shapes is required (the shape of each data input)")
    in_shapes = [tuple(s) for s in in_shapes]
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    sym, values = _read_model(sym, params)
    graph = _build_graph(sym, values, in_shapes, list(in_types), dynamic, dynamic_input_shapes, verbose)
    model = onnx.helper.make_model(graph, producer_name="mxjax",
                                   opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as err:  # noqa: BLE001  (MXNet keeps the model as exported when this fails)
            _log.info("export_model: ONNX shape inference failed (%s); keeping the model without it", err)
    onnx_file_path = os.fspath(onnx_file_path)
    if large_model:
        from onnx.external_data_helper import convert_model_to_external_data
        convert_model_to_external_data(model, all_tensors_to_one_file=False,
                                       location=os.path.basename(onnx_file_path) + ".data")
    onnx.save_model(model, onnx_file_path)
    onnx.checker.check_model(onnx_file_path)
    return onnx_file_path
