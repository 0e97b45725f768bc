"""Symbol JSON that lies: ids out of range, negative or self-referencing, missing keys, wrong
types, output indices a node does not have.  Every such graph raises MXNetError naming the bad
entry (and the file, when read from one); nothing else escapes and nothing loads a wrong graph."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import mxjax as mx
from mxjax.base import MXNetError


def _graph() -> dict:
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    parts = mx.sym.split(fc, num_outputs=2, axis=1, name="sp")
    out = mx.sym.Group([mx.sym.Activation(parts[0], act_type="relu", name="act"), parts[1]])
    return json.loads(out.tojson())


GOOD = _graph()


def _load(graph, tmp_path=None):
    text = json.dumps(graph)
    if tmp_path is None:
        return mx.sym.fromjson(text)
    path = tmp_path / "g-symbol.json"
    path.write_text(text)
    return mx.sym.load(str(path))


def _first(graph, op):
    return next(i for i, n in enumerate(graph["nodes"]) if n["op"] == op)


@pytest.mark.parametrize("mutate, pattern", [
    # Python would read a negative id as "count from the end": some other node
    (lambda g: g["nodes"][_first(g, "FullyConnected")]["inputs"][0].__setitem__(0, -1), r"refers to node -1"),
    (lambda g: g["heads"][0].__setitem__(0, -2), r"bad heads entry 0: \[-2, 0, 0\] refers to node -2"),
    (lambda g: g["heads"][0].__setitem__(0, 99), r"refers to node 99"),
    # a node reading itself or a later node: a cycle, or an order no writer produces
    (lambda g: g["nodes"][3]["inputs"][0].__setitem__(0, 3), r"node 3 is malformed .*refers to node 3"),
    (lambda g: g["nodes"][3]["inputs"][0].__setitem__(0, 4), r"refers to node 4"),
    (lambda g: g["nodes"][3]["inputs"][0].__setitem__(1, -1), r"negative output index"),
    (lambda g: g["nodes"][3]["inputs"].__setitem__(0, [0]), r"expected \[node id, output index\]"),
    (lambda g: g["nodes"][3]["inputs"].__setitem__(0, [0, "0"]), r"of integers"),
    (lambda g: g["nodes"][3]["inputs"].__setitem__(0, [True, 0]), r"of integers"),
    (lambda g: g["nodes"][3].__setitem__("inputs", {"0": 0}), r"'inputs' must be a list"),
    (lambda g: g["nodes"][3].pop("op"), r"needs a string 'op'"),
    (lambda g: g["nodes"][3].__setitem__("name", 7), r"needs a string 'name'"),
    (lambda g: g["nodes"].__setitem__(1, "fc"), r"node 1 is malformed: a str"),
    (lambda g: g["nodes"][0].__setitem__("inputs", [[0, 0, 0]]), r"variable .* has inputs"),
    (lambda g: g["nodes"][3].__setitem__("attrs", ["num_hidden"]), r"'attrs' must be an object"),
    (lambda g: g["nodes"][3].__setitem__("control_deps", [5]), r"control_deps \[5\]"),
    (lambda g: g.__setitem__("arg_nodes", [-1]), r"arg_nodes \[-1\]"),
    (lambda g: g.__setitem__("arg_nodes", [_first(g, "FullyConnected")]), r"not a variable"),
    (lambda g: g.__setitem__("heads", {"0": [0, 0]}), r"'nodes' and 'heads' must be lists"),
    (lambda g: g.__setitem__("attrs", {"mxnet_version": ["int", "x"]}), r"mxnet_version"),
    # output indices are known only once the op is: split has 2 outputs, the head asks for its 3rd
    (lambda g: g["heads"][1].__setitem__(1, 2), r"a head reads output 2 of node .sp. \((SliceChannel|split)\), which has 2"),
    (lambda g: g["nodes"][_first(g, "Activation")]["inputs"][0].__setitem__(1, 5), r"reads output 5 of node 'sp'"),
    (lambda g: g["nodes"][_first(g, "FullyConnected")]["attrs"].__setitem__("num_hidden", "many"),
     r"num_hidden"),
])
@pytest.mark.parametrize("from_file", [False, True])
def test_lying_graph_raises_naming_the_entry(mutate, pattern, from_file, tmp_path):
    graph = copy.deepcopy(GOOD)
    mutate(graph)
    with pytest.raises(MXNetError, match=pattern) as info:
        _load(graph, tmp_path if from_file else None)
    if from_file:
        assert str(tmp_path / "g-symbol.json") in str(info.value)


def test_good_graph_loads_from_file(tmp_path):
    sym = _load(GOOD, tmp_path)
    assert sym.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert json.loads(sym.tojson())["nodes"] == GOOD["nodes"]


def test_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "bin-symbol.json"
    path.write_bytes(b'{"nodes": [], "heads": [], "x": "\xff\xfe"}')
    with pytest.raises(MXNetError, match="bin-symbol.json is not UTF-8"):
        mx.sym.load(str(path))


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(MXNetError, match="not valid JSON"):
        mx.sym.fromjson("[" * 100000 + "]" * 100000)


# ----------------------------------------------------------------------------- random corruption

def _paths(value, prefix=()):
    """Every (path, value) inside a JSON value, containers included."""
    yield prefix, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _parent(graph, path):
    for key in path[:-1]:
        graph = graph[key]
    return graph


WRONG = st.one_of(st.none(), st.booleans(), st.integers(-5, 12), st.floats(allow_nan=False),
                  st.text(max_size=3), st.just([]), st.just({}), st.just([0]), st.just([1, 0, 0]))


@st.composite
def corrupted(draw):
    graph = copy.deepcopy(GOOD)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p, _ in _paths(graph) if p]
        path = draw(st.sampled_from(paths))
        parent, key = _parent(graph, path), path[-1]
        action = draw(st.sampled_from(["int", "delete", "wrong"]))
        if action == "int":  # ids and indices: negative, out of range, self-referencing
            parent[key] = draw(st.integers(-4, len(GOOD["nodes"]) + 2))
        elif action == "delete" and isinstance(parent, dict):
            del parent[key]
        elif action == "delete":
            del parent[key]
        else:
            parent[key] = copy.deepcopy(draw(WRONG))  # a fresh container: later steps may mutate it
    return graph


def _loaded_or_named_error(graph, tmp_path):
    try:
        sym = _load(graph, tmp_path)
    except MXNetError as err:
        if tmp_path is not None:
            assert str(tmp_path / "g-symbol.json") in str(err)
        return
    # it loaded: then it is a consistent graph that writes back and loads again to the same graph
    text = sym.tojson()
    again = mx.sym.fromjson(text)
    assert again.tojson() == text
    assert again.list_outputs() == sym.list_outputs()
    sym.get_internals().list_outputs()


@settings(max_examples=150, deadline=None)
@given(graph=corrupted())
def test_random_corruption_loads_or_raises_mxnet_error(graph):
    _loaded_or_named_error(graph, None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=corrupted())
def test_random_corruption_of_a_file_names_it(graph, tmp_path):
    _loaded_or_named_error(graph, tmp_path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(json.dumps(GOOD)) - 1))
def test_truncated_file_names_it(cut, tmp_path):
    path = tmp_path / "cut-symbol.json"
    path.write_text(json.dumps(GOOD)[:cut])
    with pytest.raises(MXNetError, match="cut-symbol.json"):
        mx.sym.load(str(path))
