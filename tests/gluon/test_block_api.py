"""MXNet 2.0's Block API: save/load (files written by MXNet 2.0.0b1), load_dict, params, setattr,
collect_params(select), share_parameters, register_op_hook, infer_type, row_sparse_data."""
import importlib.util
import json
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax import gluon
from mxjax.gluon import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gluon_api"
REF = onp.load(FIXTURE / "block_api_mxnet20.npz")


def _saved_net():
    spec = importlib.util.spec_from_file_location("make_gluon_fixtures", ROOT / "tools" / "make_gluon_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.saved_net(mx)


def _keys(structure):
    return {k: _keys(v) if isinstance(v, dict) else None for k, v in structure.items()}


def test_load_reads_what_mxnet20_saved():
    net = _saved_net()
    net.load(str(FIXTURE / "saved"))
    assert net._active  # it was saved hybridized
    onp.testing.assert_allclose(net(mx.np.array(REF["save_x"])).asnumpy(), REF["save_out"], rtol=1e-5, atol=1e-6)
    saved = json.loads((FIXTURE / "saved-model.json").read_text())
    assert net[0].weight._uuid == saved["hybridsequential0"]["dense1"]["params"]["weight"]


def test_save_writes_mxnet20s_structure(tmp_path):
    net = _saved_net()
    net.initialize()
    net.hybridize()
    x = mx.np.array(REF["save_x"])
    out = net(x).asnumpy()
    net.save(str(tmp_path / "mine"))
    mine = json.loads((tmp_path / "mine-model.json").read_text())
    assert _keys(mine) == _keys(json.loads((FIXTURE / "saved-model.json").read_text()))
    assert mx.sym.fromjson(mine["hybridsequential0"]["symbol"]).list_inputs()[0] == "data"
    again = _saved_net()
    again.load(str(tmp_path / "mine"))
    onp.testing.assert_allclose(again(x).asnumpy(), out, rtol=1e-6)
    other = nn.HybridSequential()
    other.add(nn.Dense(4, in_units=3), nn.Dropout(0.5))
    found = r"mine-model.json has no entry 'dropout2' for Dropout \(found \['dense1', 'dense3'\]\)"
    with pytest.raises(mx.MXNetError, match=found):
        other.load(str(tmp_path / "mine"))


def test_load_dict_params_and_setattr():
    net = _saved_net()
    net.initialize()
    values = {"0.weight": onp.full((4, 3), 0.5, "float32"), "0.bias": mx.np.zeros(4),
              "arg:1.weight": onp.ones((2, 4), "float32"), "1.bias": onp.zeros(2, "float32")}
    net.load_dict(values)
    x = REF["save_x"]
    want = onp.maximum(x @ onp.full((3, 4), 0.5), 0) @ onp.ones((4, 2))
    onp.testing.assert_allclose(net(mx.np.array(x)).asnumpy(), want, rtol=1e-5)
    with pytest.raises(mx.MXNetError, match=r"load_dict: param_dict has no values for parameters \[.1.bias.\]"):
        net.load_dict({k: v for k, v in values.items() if k != "1.bias"})
    with pytest.raises(ValueError, match=r"has values for \['2.weight'\]"):
        net.load_dict({**values, "2.weight": onp.ones(2)})
    net.load_dict({"0.bias": onp.ones(4, "float32")}, allow_missing=True)
    assert net[0].bias.data().asnumpy().tolist() == [1, 1, 1, 1]
    assert list(net.params) == [] and list(net[0].params) == ["weight", "bias"]
    net.setattr("grad_req", "null")
    net.setattr("lr_mult", 0.5)
    assert {(p.grad_req, p.lr_mult) for p in net.collect_params().values()} == {("null", 0.5)}


def test_collect_params_select_and_share_parameters():
    net = _saved_net()
    assert list(net.collect_params(".*weight")) == ["0.weight", "1.weight"]
    assert list(net.collect_params("1\\..*|.*bias")) == ["0.bias", "1.weight", "1.bias"]
    with pytest.raises(TypeError, match="HybridSequential.collect_params: select must be a regular expression"):
        net.collect_params(["weight"])
    with pytest.raises(ValueError, match="HybridSequential.collect_params: select '\\(' is not a valid"):
        net.collect_params("(")
    net.initialize()
    twin = _saved_net()
    twin.share_parameters(net.collect_params())
    x = mx.np.array(REF["save_x"])
    onp.testing.assert_allclose(twin(x).asnumpy(), net(x).asnumpy())
    assert twin[1].weight is net[1].weight


def test_register_op_hook_names_ops_as_mxnet20():
    net = _saved_net()
    net.initialize()
    x = mx.np.array(REF["save_x"])
    seen = []
    net.register_op_hook(lambda name, op, array: seen.append([name, op, list(array.shape)]))
    net(x)
    assert seen == []  # imperative calls are not monitored, as in MXNet
    net.hybridize()
    out = net(x)
    mxnet = json.loads((FIXTURE / "op_hook_mxnet20.json").read_text())
    assert seen == [entry for entry in mxnet if entry[0].endswith("_output")]
    seen.clear()
    values = {}
    net.register_op_hook(lambda name, op, array: (seen.append([name, op, list(array.shape)]),
                                                  values.setdefault(name, array.asnumpy())), monitor_all=True)
    net(x)
    assert [e for e in seen if e[1] == "FullyConnected"] == [e for e in mxnet if e[1] == "FullyConnected"]
    hidden = onp.maximum(REF["save_x"] @ net[0].weight.data().asnumpy().T + net[0].bias.data().asnumpy(), 0)
    onp.testing.assert_allclose(values["node_1_output"], hidden, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(values["node_2_output"], out.asnumpy(), rtol=1e-6)
    onp.testing.assert_allclose(values["node_0_weight"], net[0].weight.data().asnumpy())


def test_infer_type_sets_parameter_dtypes():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.infer_type(mx.np.ones((2, 4), dtype="float64"))
    assert net.weight.dtype == onp.float64 and net.bias.dtype == onp.float64


def test_row_sparse_data_raises_for_dense_parameters():
    param = gluon.Parameter("weight", shape=(2, 3))
    param.initialize()
    with pytest.raises(RuntimeError, match="Parameter weight via row_sparse_data.*storage type is default"):
        param.row_sparse_data(mx.np.array([0]))
    with pytest.raises(RuntimeError, match="Parameter 'weight' on all devices via list_row_sparse_data"):
        param.list_row_sparse_data(mx.np.array([0]))


def test_hooks_and_tensor_types():
    net = _saved_net()
    net.initialize()
    calls = []
    pre = net.register_forward_pre_hook(lambda block, args: calls.append(("pre", len(args))))
    post = net.register_forward_hook(lambda block, args, out: calls.append(("post", tuple(out.shape))))
    net(mx.np.array(REF["save_x"]))
    pre.detach()
    post.detach()
    net(mx.np.array(REF["save_x"]))
    assert calls == [("pre", 1), ("post", (2, 2))]
    assert isinstance(mx.np.ones(2), gluon.tensor_types) and isinstance(mx.sym.var("x"), gluon.tensor_types)
    assert isinstance(2.5, gluon.numeric_types)


def test_sequential_returns_the_last_blocks_extra_outputs():
    """As MXNet: extra outputs of one child feed the next as extra inputs; the last child's come back."""
    class Split(gluon.HybridBlock):
        def forward(self, x, *args):
            return x * 2, x + 1

    for container in (gluon.nn.Sequential(), gluon.nn.HybridSequential()):
        container.add(Split())
        out = container(mx.np.array([1.0, 2.0]))
        assert isinstance(out, tuple) and len(out) == 2
        assert out[0].asnumpy().tolist() == [2.0, 4.0] and out[1].asnumpy().tolist() == [2.0, 3.0]
