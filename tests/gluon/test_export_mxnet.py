"""mxjax's exports load in real MXNet: the fixture is a model mxjax exported and MXNet 1.9.1 ran
(tools/make_export_fixture.py wrote it).  MXNet rejects an attribute its operator does not know."""
import importlib.util
import json
import pathlib

import numpy as onp

import mxjax as mx

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "export_for_mxnet"


def _tool():
    spec = importlib.util.spec_from_file_location("make_export_fixture", ROOT / "tools" / "make_export_fixture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ops_and_attrs(symbol_file):
    """Each operator node's op and attributes, in order (node names depend on what ran before)."""
    nodes = json.loads(pathlib.Path(symbol_file).read_text())["nodes"]
    return [(n["op"], n.get("attrs", {})) for n in nodes if n["op"] != "null"]


def test_export_is_still_what_mxnet_accepted(tmp_path):
    net, _ = _tool().build()
    symbol_file, _ = net.export(str(tmp_path / "model"))
    exported = _ops_and_attrs(symbol_file)
    assert exported == _ops_and_attrs(FIXTURE / "model-symbol.json")
    for op, attrs in exported:  # mxjax's run-time parameters (_train) are no MXNet attributes
        assert not [k for k in attrs if k.startswith("_") and not k.startswith("__")], (op, attrs)


def test_the_exported_files_give_mxnets_outputs():
    block = mx.gluon.SymbolBlock.imports(str(FIXTURE / "model-symbol.json"), ["data"],
                                         str(FIXTURE / "model-0000.params"))
    out = block(mx.np.array(onp.load(FIXTURE / "input.npy")))
    onp.testing.assert_allclose(out.asnumpy(), onp.load(FIXTURE / "mxnet_output.npy"), rtol=1e-5, atol=1e-6)
