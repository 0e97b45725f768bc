"""Graphs built with mx.sym.random, mx.sym.npx, mx.sym.np, the operators of NumPy symbols, legacy
aliases, mx.sym.sparse, variadic ops and AttrScope write the nodes MXNet 2.0 writes for the same
source, and are symbols of the same semantics (fixtures by tools/make_symbol_fixtures.py)."""
import json
import pathlib

import pytest

import mxjax as mx

FIXTURES = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "symbol_api" / "graphs.json").read_text())
CASES = FIXTURES["cases"]


def _nodes(symbol):
    return [[n["op"], n["name"], n.get("attrs", {})] for n in json.loads(symbol.tojson())["nodes"]]


def _run(source):
    with mx.name.NameManager():
        scope = {"mx": mx, **{v: mx.sym.var(v) for v in "abc"},
                 **{f"n{v}": mx.sym.var(v).as_np_ndarray() for v in "abc"}}
        exec(source, scope)  # noqa: S102  (the fixture's own case source)
    return scope["out"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_json_matches_mxnet(case):
    out = _run(CASES[case]["code"])
    assert _nodes(out) == CASES[case]["nodes"]
    assert type(out).__name__ == CASES[case]["kind"]  # NumPy semantics or legacy, as MXNet's class says
