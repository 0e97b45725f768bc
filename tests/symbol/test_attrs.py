"""Symbol attributes as MXNet 2.0 keeps them (hidden keys, AttrScope, op parameters, inherited
attributes of made variables) and the Symbol methods around the handle."""
import json

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError


def _net():
    data = mx.sym.var("data", lr_mult=2.0)
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc1", attr={"ctx_group": "dev1"})
    return data, fc, mx.sym.SoftmaxOutput(mx.sym.Activation(fc, act_type="relu", name="relu1"), name="softmax")


def test_hidden_keys_are_stored_dunder_and_listed_both_ways():
    data, fc, out = _net()
    assert data.list_attr() == {"__lr_mult__": "2.0", "lr_mult": "2.0"}
    assert fc.list_attr() == {"__ctx_group__": "dev1", "ctx_group": "dev1", "num_hidden": "4"}
    assert fc.attr("ctx_group") == fc.attr("__ctx_group__") == "dev1"
    assert fc.attr("num_hidden") == "4" and out.attr("nope") is None
    nodes = {n["name"]: n.get("attrs", {}) for n in json.loads(fc.tojson())["nodes"]}
    assert nodes["fc1"] == {"__ctx_group__": "dev1", "num_hidden": "4"}
    # variables made for the op's missing inputs carry the op's attributes, as NNVM composition does
    assert nodes["fc1_weight"] == nodes["fc1_bias"] == {"__ctx_group__": "dev1", "num_hidden": "4"}


def test_attr_dict_lists_every_node():
    _, _, out = _net()
    attrs = out.attr_dict()
    assert list(attrs) == ["data", "fc1_weight", "fc1_bias", "fc1", "relu1", "softmax_label", "softmax"]
    assert attrs["relu1"] == {"act_type": "relu"} and attrs["softmax"] == {} and attrs["softmax_label"] == {}
    assert attrs["data"] == {"__lr_mult__": "2.0", "lr_mult": "2.0"}
    with pytest.raises(DeprecationWarning, match="attr_dict"):
        out.list_attr(recursive=True)


def test_set_attr_strings_parameters_and_errors():
    data, fc, _ = _net()
    data._set_attr(mood="happy", wd_mult="0.5")
    assert data.list_attr()["mood"] == "happy" and data.attr("__wd_mult__") == "0.5"
    fc._set_attr(num_hidden="5", __note__="n")
    assert fc.list_attr()["num_hidden"] == "5" and fc.attr("__note__") == "n"
    assert fc.infer_shape(data=(2, 3))[1] == [(2, 5)]  # the parameter, not a string attribute
    with pytest.raises(ValueError, match="only accepts string values"):
        data._set_attr(x=1)
    with pytest.raises(MXNetError, match="FullyConnected .* has no argument 'mood'"):
        fc._set_attr(mood="happy")
    with pytest.raises(MXNetError, match="group of 2 outputs"):
        mx.sym.Group([data, fc])._set_attr(__x__="1")


def test_attr_scope_attaches_to_variables_and_ops():
    with mx.AttrScope(ctx_group="stage1", __mood__="x"):
        d = mx.sym.var("d", attr={"__mood__": "y"})
        fc = mx.sym.FullyConnected(d, num_hidden=3, name="fc")
        with mx.AttrScope(lr_mult="0.1"):
            out = mx.sym.relu(fc, name="r")
    plain = mx.sym.relu(d, name="outside")
    assert d.list_attr() == {"__ctx_group__": "stage1", "ctx_group": "stage1", "__mood__": "y"}
    assert fc.attr("ctx_group") == "stage1" and fc.attr("__mood__") == "x" and fc.attr("lr_mult") is None
    assert out.list_attr() == {"__ctx_group__": "stage1", "ctx_group": "stage1", "__mood__": "x",
                               "__lr_mult__": "0.1", "lr_mult": "0.1"}
    assert plain.list_attr() == {}


def test_infer_shape_partial_marks_unknown_none_and_infers_labels():
    _, _, out = _net()
    assert out.infer_shape_partial() == ([None] * 4, [None], [])
    args, outs, _ = out.infer_shape_partial(data=(2, 3))
    assert args == [(2, 3), (4, 3), (4,), (2,)] and outs == [(2, 4)]
    assert out.infer_shape(data=(2, 3))[0][-1] == (2,)  # softmax_label from the data, as MXNet infers it
    reg = mx.sym.LinearRegressionOutput(mx.sym.var("x"), name="lr")
    assert reg.infer_shape(x=(5, 2))[0] == [(5, 2), (5, 2)]
    types = out.infer_type(data="float16")
    assert types[0][0] == onp.float16 and types[1] == [onp.float16]


def test_internals_children_and_getitem():
    _, _, out = _net()
    internals = out.get_internals()
    assert internals.list_outputs() == ["data", "fc1_weight", "fc1_bias", "fc1_output", "relu1_output",
                                        "softmax_label", "softmax_output"]
    assert internals["fc1_output"].list_outputs() == ["fc1_output"]
    assert out.get_children().list_outputs() == ["relu1_output", "softmax_label"]
    assert mx.sym.var("v").get_children() is None
    with pytest.raises(ValueError, match="no output named 'zzz'"):
        internals["zzz"]


def test_json_round_trips_keep_attributes(tmp_path):
    _, _, out = _net()
    again = mx.sym.fromjson(out.tojson())
    assert again.attr_dict() == out.attr_dict() and again.tojson() == out.tojson()
    out.save(str(tmp_path / "net-symbol.json"))
    loaded = mx.sym.load(str(tmp_path / "net-symbol.json"))
    assert loaded.attr_dict() == out.attr_dict()
    assert loaded.list_arguments() == out.list_arguments()


def test_handle_and_array_kind_conversions():
    a = mx.sym.var("a")
    s = mx.sym.relu(a * 2)
    assert mx.sym.Symbol(s.handle).tojson() == s.tojson()
    for converted in (s.as_np_ndarray(), s.as_nd_ndarray()):
        assert converted is not s and converted.tojson() == s.tojson()
        (y,) = converted.eval(a=mx.nd.array([-1.0, 2.0]))
        onp.testing.assert_allclose(y.asnumpy(), [0.0, 4.0])


def test_gradient_raises_as_in_mxnet():
    with pytest.raises(MXNetError, match="not implemented"):
        mx.sym.var("a").gradient(["a"])


class _ReluGroups(mx.subgraph.SubgraphProperty):
    """Groups connected relu nodes."""

    def create_selector(self):
        class Selector(mx.subgraph.SubgraphSelector):
            def select(self, node):
                return node.op == "relu"

            def select_input(self, node, input_node):
                return input_node.op == "relu"
        return Selector()


mx.subgraph.register_backend("test_attrs_relu", _ReluGroups)


def test_get_backend_symbol_applies_a_registered_backend():
    a = mx.sym.var("a")
    s = mx.sym.relu(mx.sym.relu(a) * 2) + 1
    rewritten = s.get_backend_symbol("test_attrs_relu")
    ops = [n["op"] for n in json.loads(rewritten.tojson())["nodes"]]
    assert "relu" not in ops and "_CachedOp" in ops and "relu" in [n["op"] for n in json.loads(s.tojson())["nodes"]]
    x = mx.nd.array([-1.0, 0.5, 2.0])
    onp.testing.assert_allclose(rewritten.eval(a=x)[0].asnumpy(), s.eval(a=x)[0].asnumpy())
    with pytest.raises(MXNetError, match="'NoSuchBackend' is not registered"):
        a.get_backend_symbol("NoSuchBackend")


def test_value_methods_raise_not_implemented_for_symbol():
    with pytest.raises(mx.base.NotImplementedForSymbol,
                       match="Function asnumpy is not implemented for Symbol and only available in NDArray"):
        mx.sym.var("a").asnumpy()
