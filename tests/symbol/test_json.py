"""MXNet symbol JSON: round trips, MXNet 1.9.1 fixtures, legacy upgrades, text details, errors.

Oracles: the files MXNet 1.9.1 wrote (``fixtures/symbol``, ``fixtures/gluon``) with their
``*.expected.json``, and FORMATS.md section 2.
"""
from __future__ import annotations

import json
import warnings

import pytest
from oracle import fixture

import mxjax as mx
from mxjax.base import MXNetError

_fixture = fixture  # shared/formats/fixtures/<parts>, skipped when missing


def _entries(entries: list) -> list:
    """Entries without the version element (FORMATS 2.3: readers ignore it; MXNet writes 1 for aux inputs)."""
    return [list(e[:2]) for e in entries]


def _graph(data: dict) -> dict:
    """The parts of a symbol JSON that carry meaning: nodes (entries normalised), arg_nodes, heads."""
    nodes = []
    for n in data["nodes"]:
        node = {k: v for k, v in n.items() if k != "inputs"}
        node["inputs"] = _entries(n["inputs"])
        nodes.append(node)
    return {"nodes": nodes, "arg_nodes": data["arg_nodes"], "heads": _entries(data["heads"])}


def _ops(sym) -> list[str]:
    return [n["op"] for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]


def _net():
    data = mx.sym.var("data", shape=(2, 3, 6, 6), lr_mult=0.5, __ctx_group__="dev1")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    bn = mx.sym.BatchNorm(conv, fix_gamma=False, eps=1e-5, momentum=0.9, name="bn")
    act = mx.sym.Activation(bn, act_type="relu", name="relu")
    pool = mx.sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    parts = mx.sym.split(pool, num_outputs=2, axis=1, name="sp")
    fc = mx.sym.FullyConnected(parts[1], num_hidden=3, no_bias=True, name="fc")
    total = mx.sym.sum(parts[0], axis=None, keepdims=True, name="s")
    return mx.sym.Group([fc, total * 2.5, parts[0]])


# ----------------------------------------------------------------------------- round trips

def test_round_trip_of_built_symbol(tmp_path):
    net = _net()
    text = net.tojson()
    back = mx.sym.fromjson(text)
    assert back.tojson() == text
    for method in ("list_arguments", "list_auxiliary_states", "list_outputs", "list_inputs", "attr_dict"):
        assert getattr(back, method)() == getattr(net, method)()
    assert back.infer_shape() == net.infer_shape()
    path = tmp_path / "net-symbol.json"
    net.save(str(path))
    assert path.read_text(encoding="utf-8") == text
    loaded = mx.sym.load(str(path))
    assert loaded.tojson() == text
    assert mx.sym.load_json(text).tojson() == text


def test_written_layout():
    data = json.loads(_net().tojson())
    assert data["attrs"] == {"mxnet_version": ["int", 10901]}
    nodes = data["nodes"]
    assert data["arg_nodes"] == [i for i, n in enumerate(nodes) if n["op"] == "null"]
    assert len(data["node_row_ptr"]) == len(nodes) + 1
    for i, node in enumerate(nodes):
        assert all(e[0] < i and len(e) == 3 for e in node["inputs"])  # topological, 3-element entries
        if "attrs" in node:
            assert list(node["attrs"]) == sorted(node["attrs"])
            assert all(isinstance(v, str) for v in node["attrs"].values())
    by_name = {n["name"]: n for n in nodes}
    assert by_name["data"]["attrs"] == {"__ctx_group__": "dev1", "__lr_mult__": "0.5", "__shape__": "(2, 3, 6, 6)"}
    # only user-given parameters, as Python's str() writes them (FORMATS 2.7)
    assert by_name["conv"]["attrs"] == {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)"}
    assert by_name["bn"]["attrs"] == {"eps": "1e-05", "fix_gamma": "False", "momentum": "0.9"}
    assert by_name["fc"]["attrs"] == {"no_bias": "True", "num_hidden": "3"}
    assert by_name["s"]["attrs"] == {"axis": "None", "keepdims": "True"}
    assert by_name["sp"]["attrs"] == {"axis": "1", "num_outputs": "2"}


@pytest.mark.parametrize("build, ops", [
    (lambda x: mx.sym.FullyConnected(x, num_hidden=2, name="fc"), ["FullyConnected"]),
    (lambda x: mx.sym.Convolution(x, kernel=(1, 1), num_filter=2, name="cv"), ["Convolution"]),
    (lambda x: mx.sym.BatchNorm(x, name="bn"), ["BatchNorm"]),
    (lambda x: mx.sym.Activation(x, act_type="relu", name="a"), ["Activation"]),
    (lambda x: mx.sym.Pooling(x, kernel=(2, 2), name="p"), ["Pooling"]),
    (lambda x: mx.sym.reshape(x, shape=(-1,), name="r"), ["Reshape"]),
    (lambda x: mx.sym.Reshape(x, shape=(-1,), name="r"), ["Reshape"]),
    (lambda x: mx.sym.split(x, num_outputs=2, name="sp")[0], ["SliceChannel"]),
    (lambda x: mx.sym.Concat(x, x, dim=1, name="c"), ["Concat"]),
    (lambda x: mx.sym.sum(x, axis=1, name="s"), ["sum"]),
    (lambda x: mx.sym.argmax(x, axis=1, name="am"), ["argmax"]),
    (lambda x: mx.sym.np.add(x, x), ["_npi_add"]),
    (lambda x: mx.sym.np.sum(x, axis=1), ["_np_sum"]),
    (lambda x: x * 2.5, ["_mul_scalar"]),
])
def test_op_names_written_are_mxnets(build, ops):
    sym = build(mx.sym.var("x"))
    assert _ops(sym) == ops
    assert _ops(mx.sym.fromjson(sym.tojson())) == ops


def test_legacy_and_numpy_sum_keep_their_meaning_through_json():
    x = mx.sym.var("x")
    legacy = mx.sym.fromjson(mx.sym.sum(x, axis=1, exclude=True, name="s").tojson())
    assert legacy.infer_shape(x=(2, 3, 4))[1] == [(3,)]
    numpy_sum = mx.sym.fromjson(mx.sym.np.sum(x).tojson())
    assert numpy_sum.infer_shape(x=(2, 3, 4))[1] == [()]
    assert mx.sym.fromjson(mx.sym.sum(x, name="s2").tojson()).infer_shape(x=(2, 3))[1] == [(1,)]


def test_numpy_scalar_op_json_is_mxnets():
    node = json.loads(mx.sym.np.multiply(mx.sym.var("x"), 2.0).tojson())["nodes"][-1]
    assert node["op"] == "_npi_multiply_scalar"
    assert float(node["attrs"]["scalar"]) == 2.0 and "__constants__" not in node["attrs"]


def test_non_ascii_names_round_trip_as_raw_utf8(tmp_path):
    x = mx.sym.var("données_é", shape=(2, 3), __note__="ü")
    sym = mx.sym.Activation(x, act_type="relu", name="活性")
    text = sym.tojson()
    assert "\\u" not in text and "données_é" in text and "活性" in text
    back = mx.sym.fromjson(text)
    assert back.list_arguments() == ["données_é"] and back.list_outputs() == ["活性_output"]
    assert back.attr_dict()["données_é"]["__note__"] == "ü"
    path = tmp_path / "u-symbol.json"
    sym.save(str(path))
    raw = path.read_bytes()
    assert "活性".encode("utf-8") in raw and b"\\u" not in raw
    assert mx.sym.load(str(path)).tojson() == text


def test_control_deps_round_trip_and_pickle():
    import copy
    import pickle

    graph = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": [[0, 0, 0]]},
                       {"op": "Activation", "name": "b", "attrs": {"act_type": "tanh"}, "inputs": [[0, 0, 0]],
                        "control_deps": [1]}],
             "arg_nodes": [0], "heads": [[2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    sym = mx.sym.fromjson(json.dumps(graph))
    assert _graph(json.loads(sym.tojson())) == _graph(graph)
    for clone in (pickle.loads(pickle.dumps(sym)), copy.deepcopy(sym)):
        assert clone.tojson() == sym.tojson()


# ----------------------------------------------------------------------------- MXNet fixtures

FIXTURE_SYMBOLS = [
    ("symbol", "multi_output-symbol.json", "multi_output.expected.json"),
    ("symbol", "legacy_v0.8-symbol.json", "legacy_v0.8.expected.json"),
    ("gluon", "tiny-symbol.json", "tiny.expected.json"),
    ("gluon", "tiny_np-symbol.json", "tiny_np.expected.json"),
]


@pytest.mark.parametrize("folder, name, expected", FIXTURE_SYMBOLS)
def test_fixture_lists(folder, name, expected):
    sym = mx.sym.load(str(_fixture(folder, name)))
    want = json.loads(_fixture(folder, expected).read_text())
    assert sym.list_arguments() == want["list_arguments"]
    assert sym.list_auxiliary_states() == want["list_auxiliary_states"]
    assert sym.list_outputs() == want["list_outputs"]
    if "list_inputs" in want:
        assert sym.list_inputs() == want["list_inputs"]


def test_tiny_fixture_parameter_shapes():
    sym = mx.sym.load(str(_fixture("gluon", "tiny-symbol.json")))
    want = json.loads(_fixture("gluon", "tiny.expected.json").read_text())["export_param_shapes"]
    args, outs, aux = sym.infer_shape(data=(2, 3, 6, 6))
    got = {f"arg:{n}": list(s) for n, s in zip(sym.list_arguments(), args) if n != "data"}
    got.update({f"aux:{n}": list(s) for n, s in zip(sym.list_auxiliary_states(), aux)})
    assert got == want
    assert outs == [(2, 5)]


@pytest.mark.parametrize("folder, name", [
    ("gluon", "tiny-symbol.json"),
    ("gluon", "tiny_np-symbol.json"),
    ("symbol", "legacy_v0.8.upgraded-symbol.json"),
    ("symbol", "multi_output-symbol.json"),
])
def test_tojson_reproduces_mxnet_file(folder, name):
    path = _fixture(folder, name)
    written = json.loads(mx.sym.load(str(path)).tojson())
    original = json.loads(path.read_text())
    assert _graph(written) == _graph(original)
    assert written["attrs"]["mxnet_version"] == ["int", 10901]


def test_legacy_v08_upgrade_matches_mxnet():
    sym = mx.sym.load(str(_fixture("symbol", "legacy_v0.8-symbol.json")))
    want = json.loads(_fixture("symbol", "legacy_v0.8.upgraded-symbol.json").read_text())
    got = json.loads(sym.tojson())
    # entries are compared with their version: the upgrader writes 0 (FORMATS 2.3)
    assert got["nodes"] == want["nodes"]
    assert got["heads"] == want["heads"]
    assert got["arg_nodes"] == want["arg_nodes"]
    assert got["attrs"] == want["attrs"]


def _small(version: int | None, fc_attrs: dict, var_attrs: dict | None = None, extra_op: dict | None = None) -> str:
    nodes = [{"op": "null", "name": "data", "inputs": []},
             {"op": "null", "name": "fc_weight", "inputs": [], "attr": var_attrs or {}},
             {"op": "FullyConnected", "name": "fc", "param": {"num_hidden": "4", "no_bias": "True"},
              "attr": fc_attrs, "inputs": [[0, 0], [1, 0]]}]
    if extra_op:
        nodes.append(dict(extra_op, inputs=[[2, 0]]))
    graph = {"nodes": nodes, "arg_nodes": [0, 1], "heads": [[len(nodes) - 1, 0]]}
    if version is not None:
        graph["attrs"] = {"mxnet_version": ["int", version]}
    return json.dumps(graph)


def test_upgrade_steps_depend_on_version():
    argmax = {"op": "argmax", "name": "am", "attrs": {"axis": "-1"}}
    # 1.2.0: hidden keys are repaired, argmax's axis=-1 is kept (that upgrade stops at 0.9.5)
    sym = mx.sym.fromjson(_small(10200, {"weight_lr_mult": "0.1", "wd_mult": "0"}, extra_op=argmax))
    attrs = sym.attr_dict()
    assert attrs["fc_weight"] == {"__lr_mult__": "0.1", "lr_mult": "0.1"}  # hidden keys listed both ways
    assert attrs["fc"] == {"__wd_mult__": "0", "wd_mult": "0", "no_bias": "True", "num_hidden": "4"}
    assert attrs["am"] == {"axis": "-1"}
    # no version at all counts as 0.8: argmax axis=-1 means "flatten" and is dropped
    old = mx.sym.fromjson(_small(None, {}, extra_op=argmax))
    assert old.attr_dict()["am"] == {}  # every node is listed, as MXNet 2 lists them
    assert old.infer_shape(data=(2, 5))[1] == [(1,)]  # legacy argmax over everything
    # current version: nothing is touched
    current = mx.sym.fromjson(_small(10901, {"weight_lr_mult": "0.1"}))
    assert current.attr_dict()["fc"]["weight_lr_mult"] == "0.1"


def test_newer_version_loads_with_a_warning():
    with pytest.warns(UserWarning, match="newer"):
        sym = mx.sym.fromjson(_small(20100, {}))
    assert sym.list_arguments() == ["data", "fc_weight"]


def test_mxnet2_json_loads_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sym = mx.sym.fromjson(_small(20000, {}))
    assert sym.list_arguments() == ["data", "fc_weight"]


def test_reader_accepts_mxnet_attribute_spellings():
    graph = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                       {"op": "Convolution", "name": "cv",
                        "attrs": {"kernel": "[3,3]", "num_filter": "2", "no_bias": "true", "pad": "(1, 1,)",
                                  "stride": "1"},
                        "inputs": [[0, 0, 0], [0, 0, 0]]},
                       {"op": "clip", "name": "c", "attrs": {"a_min": "-inf", "a_max": "Infinity"},
                        "inputs": [[1, 0, 0]]}],
             "arg_nodes": [0], "heads": [[2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    sym = mx.sym.fromjson(json.dumps(graph))
    attrs = sym.attr_dict()
    assert attrs["cv"] == {"kernel": "(3, 3)", "num_filter": "2", "no_bias": "True", "pad": "(1, 1)",
                           "stride": "(1,)"}
    assert attrs["c"] == {"a_min": "-inf", "a_max": "inf"}


@pytest.mark.parametrize("key, text, want", [("no_bias", "FALSE", "False"), ("kernel", "(3L, 3L)", "(3, 3)")])
def test_reader_accepts_uppercase_bools_and_long_suffixes(key, text, want):
    attrs = {"kernel": "(1, 1)", "num_filter": "2", "no_bias": "True", key: text}
    graph = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                       {"op": "Convolution", "name": "cv", "attrs": attrs, "inputs": [[0, 0, 0]]}],
             "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    assert mx.sym.fromjson(json.dumps(graph)).attr(key) == want


def test_symbol_api_reproduces_multi_output_fixture():
    # the construction in fixtures/generate.py (a fresh process there: fresh name counters here),
    # with mx.init.Constant(0.5) spelled as its JSON
    with mx.name.NameManager():
        g = _multi_output_graph()
    want = _graph(json.loads(_fixture("symbol", "multi_output-symbol.json").read_text()))
    got = _graph(json.loads(g.tojson()))
    for node in want["nodes"]:
        if node["op"] == "elemwise_add":  # mxjax's a + b broadcasts, so it is written as broadcast_add
            node["op"] = "broadcast_add"
    assert got == want


def _multi_output_graph():
    x = mx.sym.var("x", shape=(2, 6), dtype="float32", lr_mult=0.5, init='["constant", {"value": 0.5}]')
    bn = mx.sym.BatchNorm(x, fix_gamma=False, eps=1e-3, name="bn")
    parts = mx.sym.split(bn, num_outputs=3, axis=1, name="sp")
    a = parts[0] + parts[2]
    b = mx.sym.sum(parts[1], axis=None, keepdims=True, name="s")
    c = mx.sym.clip(a, a_min=-1.0, a_max=1.0, name="c")
    d = mx.sym.reshape(c * 2.5, shape=(-1,), name="r")
    e = mx.sym.Pooling(mx.sym.reshape(x, (1, 1, 2, 6), name="reshape0"), kernel=(1, 2), stride=(1, 2),
                       pool_type="max", name="p")
    return mx.sym.Group([d, b, parts[1], e])


# ----------------------------------------------------------------------------- malformed input

GOOD_NODE = {"op": "null", "name": "x", "inputs": []}


@pytest.mark.parametrize("text, pattern", [
    ("not json", "not valid JSON"),
    ("[]", "'nodes' and 'heads'"),
    (json.dumps({"heads": [[0, 0, 0]], "arg_nodes": []}), "'nodes' and 'heads'"),
    (json.dumps({"nodes": [GOOD_NODE], "arg_nodes": [0]}), "'nodes' and 'heads'"),
    (json.dumps({"nodes": [{"op": "Activation", "name": "a", "attrs": {"act_type": "relu"}, "inputs": [[1, 0, 0]]},
                           GOOD_NODE], "arg_nodes": [1], "heads": [[0, 0, 0]]}), "node 0 is malformed"),
    (json.dumps({"nodes": [{"name": "x", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0, 0]]}),
     "node 0 is malformed"),
    (json.dumps({"nodes": [GOOD_NODE], "arg_nodes": [0], "heads": [[3, 0, 0]]}), "bad heads entry"),
    (json.dumps({"nodes": [GOOD_NODE, {"op": "NoSuchOp", "name": "n", "inputs": [[0, 0, 0]]}],
                 "arg_nodes": [0], "heads": [[1, 0, 0]]}), "NoSuchOp"),
])
def test_malformed_json_raises(text, pattern):
    with pytest.raises(MXNetError, match=pattern):
        mx.sym.fromjson(text)


def test_unknown_op_attribute_is_kept_and_written_back():
    graph = {"nodes": [GOOD_NODE, {"op": "Activation", "name": "a", "inputs": [[0, 0, 0]],
                                   "attrs": {"act_type": "relu", "__profiler_scope__": "s", "mystery": "1"}}],
             "arg_nodes": [0], "heads": [[1, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sym = mx.sym.fromjson(json.dumps(graph))
    node = json.loads(sym.tojson())["nodes"][1]
    assert node["attrs"] == {"__profiler_scope__": "s", "act_type": "relu", "mystery": "1"}
