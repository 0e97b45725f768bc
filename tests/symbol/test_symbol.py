"""mx.sym construction, naming, composition and shape/type inference.

Oracles: NumPy (values of small evaluated graphs), MXNet 1.x conventions from
FORMATS.md section 2 (names, list orders, attribute strings) and the MXNet 1.9.1
fixture ``multi_output-symbol.json`` with its ``*.expected.json``.
"""
from __future__ import annotations

import json

import numpy as onp
import pytest
from oracle import fixture

import mxjax as mx
from mxjax.base import MXNetError, MXNetValueError

_fixture = fixture  # shared/formats/fixtures/<parts>, skipped when missing


def _ops(sym) -> list[tuple[str, str, dict]]:
    """(op, name, attrs) of each op node of ``sym``'s JSON."""
    return [(n["op"], n["name"], n.get("attrs", {})) for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]


def _eval(sym, **arrays):
    return [o.asnumpy() for o in sym.eval(mx.cpu(), **{k: mx.nd.array(v) for k, v in arrays.items()})]


# ----------------------------------------------------------------------------- variables

def test_var_attributes():
    x = mx.sym.var("x", shape=(2, 3), dtype="float16", init="zeros", lr_mult=0.5, wd_mult=2,
                   __ctx_group__="dev1", attr={"__mirror_stage__": "True"})
    assert mx.sym.Variable is mx.sym.var
    assert isinstance(x, mx.sym.Symbol)
    assert x.name == "x"
    want = {"__shape__": "(2, 3)", "__dtype__": "2", "__init__": "zeros", "__lr_mult__": "0.5",
            "__wd_mult__": "2.0", "__ctx_group__": "dev1", "__mirror_stage__": "True"}
    listed = {**want, "lr_mult": "0.5", "wd_mult": "2.0", "ctx_group": "dev1", "mirror_stage": "True"}
    assert x.list_attr() == listed  # MXNet lists hidden keys under both spellings
    assert x.attr_dict() == {"x": listed}
    assert x.attr("__lr_mult__") == "0.5"
    assert x.attr("__shape__") == "(2, 3)"
    assert x.attr("__nope__") is None
    assert x.list_arguments() == ["x"] and x.list_outputs() == ["x"] and x.list_auxiliary_states() == []
    assert mx.sym.var("y", dtype="float32").attr("__dtype__") == "0"  # FORMATS 1.4 type flags
    assert mx.sym.var("y").list_attr() == {}
    assert mx.sym.var("y", init='["constant", {"value": 0.5}]').attr("__init__") == '["constant", {"value": 0.5}]'


def test_var_bad_arguments():
    with pytest.raises(TypeError, match="name must be a string"):
        mx.sym.var(3)
    with pytest.raises(MXNetValueError, match="'foo' must look like __name__"):
        mx.sym.var("v", foo=1)


# ----------------------------------------------------------------------------- layers

def _d():
    return mx.sym.var("data")


LAYERS = [
    # (builder, arguments, auxiliary states, outputs, attrs of the op node)
    (lambda: mx.sym.FullyConnected(data=_d(), num_hidden=4, name="fc"),
     ["data", "fc_weight", "fc_bias"], [], ["fc_output"], {"num_hidden": "4"}),
    (lambda: mx.sym.FullyConnected(data=_d(), num_hidden=4, no_bias=True, name="fc"),
     ["data", "fc_weight"], [], ["fc_output"], {"num_hidden": "4", "no_bias": "True"}),
    (lambda: mx.sym.FullyConnected(_d(), mx.sym.var("w"), num_hidden=2, name="fc"),
     ["data", "w", "fc_bias"], [], ["fc_output"], {"num_hidden": "2"}),
    (lambda: mx.sym.Convolution(_d(), kernel=(3, 3), num_filter=4, pad=(1, 1), name="cv"),
     ["data", "cv_weight", "cv_bias"], [], ["cv_output"], {"kernel": "(3, 3)", "num_filter": "4", "pad": "(1, 1)"}),
    (lambda: mx.sym.Convolution(_d(), kernel=(3, 3), num_filter=4, no_bias=True, name="cv"),
     ["data", "cv_weight"], [], ["cv_output"], {"kernel": "(3, 3)", "num_filter": "4", "no_bias": "True"}),
    (lambda: mx.sym.BatchNorm(_d(), fix_gamma=False, eps=1e-5, name="bn"),
     ["data", "bn_gamma", "bn_beta"], ["bn_moving_mean", "bn_moving_var"], ["bn_output"],
     {"fix_gamma": "False", "eps": "1e-05"}),
    (lambda: mx.sym.Activation(_d(), act_type="relu", name="act"), ["data"], [], ["act_output"], {"act_type": "relu"}),
    (lambda: mx.sym.Pooling(_d(), kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool"),
     ["data"], [], ["pool_output"], {"kernel": "(2, 2)", "stride": "(2, 2)", "pool_type": "max"}),
    (lambda: mx.sym.LeakyReLU(_d(), act_type="prelu", name="pr"), ["data", "pr_gamma"], [], ["pr_output"],
     {"act_type": "prelu"}),
    (lambda: mx.sym.Concat(mx.sym.var("a"), mx.sym.var("b"), dim=1, name="cat"), ["a", "b"], [], ["cat_output"],
     {"dim": "1", "num_args": "2"}),  # MXNet writes the input count of variadic ops
    (lambda: mx.sym.sum(_d(), axis=1, exclude=True, name="s"), ["data"], [], ["s_output"],
     {"axis": "1", "exclude": "True"}),
]


@pytest.mark.parametrize("build, args, aux, outs, attrs", LAYERS)
def test_layer_symbols(build, args, aux, outs, attrs):
    sym = build()
    assert sym.list_arguments() == args
    assert sym.list_auxiliary_states() == aux
    assert sym.list_inputs() == args + aux  # aux states come last here: they are the op's last inputs
    assert sym.list_outputs() == outs
    assert sym.list_attr() == attrs
    for key, value in attrs.items():
        assert sym.attr(key) == value


def test_init_hints_on_aux_states_and_prelu_gamma():
    bn = mx.sym.BatchNorm(_d(), name="bn")
    attrs = bn.attr_dict()
    assert attrs["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["bn_moving_var"]["__init__"] == '["one", {}]'
    pr = mx.sym.LeakyReLU(_d(), act_type="prelu", name="pr")
    assert json.loads(pr.attr_dict()["pr_gamma"]["__init__"]) == ["Constant", {"value": 0.25}]
    # a user-given __init__ wins over the hint
    mean = mx.sym.var("m", init="ones")
    bn2 = mx.sym.BatchNorm(_d(), moving_mean=mean, name="bn2")
    assert bn2.attr_dict()["m"]["__init__"] == "ones"
    assert bn2.list_auxiliary_states() == ["m", "bn2_moving_var"]


def test_auto_names_of_layers():
    fc = mx.sym.FullyConnected(_d(), num_hidden=2)
    name = fc.name
    assert name.startswith("fullyconnected") and name[len("fullyconnected"):].isdigit()
    assert fc.list_arguments() == ["data", f"{name}_weight", f"{name}_bias"]


def test_auto_names_of_operators_match_mxnet():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    assert (a + b).name.startswith("_plus")
    assert (a * 2.5).name.startswith("_mulscalar")
    with mx.name.NameManager():
        assert [(a + b).name, (a + b).name, (a * 2.5).name] == ["_plus0", "_plus1", "_mulscalar0"]
        assert mx.sym.FullyConnected(a, num_hidden=2).name == "fullyconnected0"
    with mx.name.Prefix("net_"):
        assert mx.sym.Activation(a, act_type="relu").name == "net_activation0"


def test_split_outputs_and_indexing():
    sp = mx.sym.split(_d(), num_outputs=3, axis=1, name="sp")
    assert len(sp) == 3
    assert [s.list_outputs() for s in sp] == [["sp_output0"], ["sp_output1"], ["sp_output2"]]
    assert sp[1].list_outputs() == ["sp_output1"]
    group = mx.sym.Group([sp[0], sp[1], sp[2]])
    assert group.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"]
    assert group.infer_shape(data=(2, 6))[1] == [(2, 2)] * 3
    assert _ops(group) == [("SliceChannel", "sp", {"axis": "1", "num_outputs": "3"})]
    cat = mx.sym.Concat(sp[2], sp[0], dim=1, name="cat")
    x = onp.arange(12, dtype="float32").reshape(2, 6)
    onp.testing.assert_array_equal(_eval(cat, data=x)[0], onp.concatenate([x[:, 4:], x[:, :2]], axis=1))


@pytest.mark.parametrize("build, outs", [
    (lambda: mx.sym.SliceChannel(_d(), num_outputs=3, name="sp"), ["sp_output0", "sp_output1", "sp_output2"]),
    (lambda: mx.sym.BatchNorm(_d(), output_mean_var=True, name="bn"), ["bn_output", "bn_mean", "bn_var"]),
])
def test_multi_output_function_returns_one_symbol(build, outs):
    sym = build()
    assert isinstance(sym, mx.sym.Symbol)
    assert sym.list_outputs() == outs


@pytest.mark.parametrize("shape, kwargs, want", [
    ((0, -1), {}, (2, 12)),
    ((-2,), {}, (2, 3, 4)),
    ((-3, -2), {}, (6, 4)),
    ((-4, 1, 2, -2), {}, (1, 2, 3, 4)),
    ((4, -1), {}, (4, 6)),
    ((-1, 0), {"reverse": True}, (6, 4)),
])
def test_reshape_special_codes(shape, kwargs, want):
    sym = mx.sym.Reshape(_d(), shape=shape, name="r", **kwargs)
    assert sym.infer_shape(data=(2, 3, 4)) == ([(2, 3, 4)], [want], [])
    assert _ops(sym)[0][0] == "Reshape"


def test_reshape_values():
    x = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    sym = mx.sym.Reshape(_d(), shape=(-3, -2), name="r")
    onp.testing.assert_array_equal(_eval(sym, data=x)[0], x.reshape(6, 4))


@pytest.mark.parametrize("kwargs, reduce_axes, keepdims", [
    ({"axis": 1, "exclude": True}, (0, 2), False),
    ({"axis": (1, 2), "keepdims": True}, (1, 2), True),
    ({}, None, False),
])
def test_legacy_sum(kwargs, reduce_axes, keepdims):
    x = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    got = _eval(mx.sym.sum(_d(), name="s", **kwargs), data=x)[0]
    want = x.sum(axis=reduce_axes, keepdims=keepdims)
    want = onp.reshape(want, (1,)) if reduce_axes is None else want  # legacy full reduction gives (1,)
    assert got.shape == want.shape and got.dtype == onp.float32
    onp.testing.assert_allclose(got, want)


# ----------------------------------------------------------------------------- operators

A = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32")
B = onp.array([2.0, 2.0, 7.0], "float32")

OPERATORS = [
    # (expression, numpy reference, op written to JSON or None, its attrs)
    (lambda a, b: a * 2.5, lambda a, b: a * 2.5, "_mul_scalar", {"scalar": "2.5"}),
    (lambda a, b: 2 - a, lambda a, b: 2 - a, "_rminus_scalar", {"scalar": "2.0"}),
    (lambda a, b: a + 1, lambda a, b: a + 1, "_plus_scalar", {"scalar": "1.0"}),
    (lambda a, b: 1 / a, lambda a, b: 1 / a, "_rdiv_scalar", {"scalar": "1.0"}),
    (lambda a, b: a ** 2, lambda a, b: a ** 2, "_power_scalar", {"scalar": "2.0"}),
    (lambda a, b: 2 ** a, lambda a, b: 2 ** a, "_rpower_scalar", {"scalar": "2.0"}),
    (lambda a, b: -a, lambda a, b: -a, "_mul_scalar", {"scalar": "-1.0"}),
    (lambda a, b: a < 2, lambda a, b: (a < 2).astype("float32"), "_lesser_scalar", {"scalar": "2.0"}),
    (lambda a, b: 3 < a, lambda a, b: (3 < a).astype("float32"), "_greater_scalar", {"scalar": "3.0"}),
    (lambda a, b: a != 1, lambda a, b: (a != 1).astype("float32"), "_not_equal_scalar", {"scalar": "1.0"}),
    (lambda a, b: a > b, lambda a, b: (a > b).astype("float32"), "broadcast_greater", {}),
    (lambda a, b: a <= b, lambda a, b: (a <= b).astype("float32"), "broadcast_lesser_equal", {}),
    (lambda a, b: a == b, lambda a, b: (a == b).astype("float32"), "broadcast_equal", {}),
    (lambda a, b: a + b, lambda a, b: a + b, None, {}),
    (lambda a, b: a - b, lambda a, b: a - b, None, {}),
    (lambda a, b: a * b, lambda a, b: a * b, None, {}),
    (lambda a, b: a / b, lambda a, b: a / b, None, {}),
    (lambda a, b: a % b, lambda a, b: onp.mod(a, b), None, {}),
    (lambda a, b: a ** b, lambda a, b: a ** b, None, {}),
]


@pytest.mark.parametrize("expr, ref, op, attrs", OPERATORS)
def test_operators(expr, ref, op, attrs):
    sym = expr(mx.sym.var("a"), mx.sym.var("b"))
    nodes = _ops(sym)
    assert len(nodes) == 1
    if op is not None:
        assert nodes[0][0] == op and nodes[0][2] == attrs
    inputs = {k: v for k, v in (("a", A), ("b", B)) if k in sym.list_arguments()}
    got = _eval(sym, **inputs)[0]
    want = ref(A, B)
    assert got.shape == want.shape and got.dtype == onp.float32
    onp.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("expr, op", [
    (lambda a, b: a + b, "broadcast_add"), (lambda a, b: a - b, "broadcast_sub"),
    (lambda a, b: a * b, "broadcast_mul"), (lambda a, b: a / b, "broadcast_div"),
    (lambda a, b: mx.sym.elemwise_add(a, b), "elemwise_add"),
    (lambda a, b: mx.sym.broadcast_plus(a, b), "broadcast_plus"),
])
def test_symbol_arithmetic_writes_broadcast_ops(expr, op):
    assert _ops(expr(mx.sym.var("a"), mx.sym.var("b")))[0][0] == op


_LEGACY_NAMED = [
    ("exp", lambda x: mx.sym.exp(x)), ("log", lambda x: mx.sym.log(x)), ("sqrt", lambda x: mx.sym.sqrt(x)),
    ("square", lambda x: mx.sym.square(x)), ("tanh", lambda x: mx.sym.tanh(x)),
    ("negative", lambda x: mx.sym.negative(x)), ("sigmoid", lambda x: mx.sym.sigmoid(x)),
    ("relu", lambda x: mx.sym.relu(x)), ("softmax", lambda x: mx.sym.softmax(x)),
    ("clip", lambda x: mx.sym.clip(x, a_min=0.0, a_max=1.0)), ("transpose", lambda x: mx.sym.transpose(x)),
    ("expand_dims", lambda x: mx.sym.expand_dims(x, axis=0)), ("zeros_like", lambda x: mx.sym.zeros_like(x)),
]


@pytest.mark.parametrize("op, build", _LEGACY_NAMED, ids=[n for n, _ in _LEGACY_NAMED])
def test_legacy_functions_write_legacy_names(op, build):
    assert _ops(build(mx.sym.var("x")))[0][0] == op


def test_sym_np_functions():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    add = mx.sym.np.add(a, b)
    assert [n[0] for n in _ops(add)] == ["_npi_add"]
    onp.testing.assert_allclose(_eval(add, a=A, b=B)[0], A + B)
    total = mx.sym.np.sum(a, axis=1)
    assert [n[0] for n in _ops(total)] == ["_np_sum"]
    assert total.infer_shape(a=(2, 3))[1] == [(2,)]
    assert mx.sym.np.sum(a).infer_shape(a=(2, 3))[1] == [()]  # NumPy semantics: a 0-d result
    shaped = mx.sym.np.less(mx.sym.var("a", shape=(2, 3)), mx.sym.var("b", shape=(3,)))
    assert shaped.infer_type(a="float32", b="float32")[1] == [onp.bool_]
    with pytest.raises(AttributeError, match="no attribute 'no_such_function'"):
        mx.sym.np.no_such_function  # noqa: B018


# ----------------------------------------------------------------------------- structure

def test_group_and_list_orders():
    a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
    m = mx.sym.broadcast_mul(c, mx.sym.broadcast_add(a, b, name="ab"), name="m")
    # post-order DFS from the heads, inputs in order (FORMATS 2.4)
    assert m.list_arguments() == ["c", "a", "b"]
    g = mx.sym.Group([m, mx.sym.Activation(b, act_type="relu", name="r"), a])
    assert len(g) == 3
    assert g.list_outputs() == ["m_output", "r_output", "a"]
    assert g.list_arguments() == ["c", "a", "b"]
    assert g["r_output"].list_outputs() == ["r_output"]
    assert g[-1].list_outputs() == ["a"]
    heads = json.loads(g.tojson())["heads"]
    names = [n["name"] for n in json.loads(g.tojson())["nodes"]]
    assert [names[h[0]] for h in heads] == ["m", "r", "a"]
    with pytest.raises(IndexError, match="out of range"):
        g[3]
    with pytest.raises(MXNetValueError, match="no output named 'nope'"):
        g["nope"]
    with pytest.raises(MXNetValueError, match="non-empty list of Symbols"):
        mx.sym.Group([])


def test_list_inputs_interleaves_aux_states_in_node_order():
    bn = mx.sym.BatchNorm(_d(), name="bn")
    net = mx.sym.FullyConnected(bn, num_hidden=2, name="fc")
    assert net.list_inputs() == ["data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var",
                                 "fc_weight", "fc_bias"]
    assert net.list_arguments() == ["data", "bn_gamma", "bn_beta", "fc_weight", "fc_bias"]
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]


def _mlp():
    fc = mx.sym.FullyConnected(_d(), num_hidden=4, name="fc")
    act = mx.sym.Activation(fc, act_type="relu", name="relu")
    return mx.sym.FullyConnected(act, num_hidden=2, name="fc2")


def test_get_internals_and_children():
    net = _mlp()
    internals = net.get_internals()
    assert internals.list_outputs() == ["data", "fc_weight", "fc_bias", "fc_output", "relu_output",
                                        "fc2_weight", "fc2_bias", "fc2_output"]
    fc = internals["fc_output"]
    assert fc.list_outputs() == ["fc_output"]
    assert fc.list_arguments() == ["data", "fc_weight", "fc_bias"]
    assert fc.infer_shape(data=(3, 5))[1] == [(3, 4)]
    assert net.get_children().list_outputs() == ["relu_output", "fc2_weight", "fc2_bias"]
    assert mx.sym.var("v").get_children() is None


def test_get_internals_of_fixture():
    sym = mx.sym.load(str(_fixture("symbol", "multi_output-symbol.json")))
    # visible outputs only: BatchNorm shows 1 of its 3, SliceChannel all 3
    assert sym.get_internals().list_outputs() == [
        "x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output",
        "sp_output0", "sp_output1", "sp_output2", "_plus0_output", "c_output", "_mulscalar0_output",
        "r_output", "s_output", "reshape0_output", "p_output"]


def test_composition():
    net = _mlp()
    other = mx.sym.var("x") * 2
    composed = net(data=other)
    assert composed.list_arguments() == ["x", "fc_weight", "fc_bias", "fc2_weight", "fc2_bias"]
    assert net.list_arguments() == ["data", "fc_weight", "fc_bias", "fc2_weight", "fc2_bias"]  # unchanged
    assert composed.infer_shape(x=(3, 5))[0][1] == (4, 5)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    add = mx.sym.broadcast_add(a, b, name="n")
    x, y = mx.sym.var("x"), mx.sym.var("y")
    assert add(x, y).list_arguments() == ["x", "y"]
    assert add(x).list_arguments() == ["x", "b"]
    assert add(b=x).list_arguments() == ["a", "x"]
    onp.testing.assert_allclose(_eval(add(x, y * 3), x=A, y=B)[0], A + 3 * B)
    with pytest.raises(MXNetValueError, match="no argument 'q'"):
        add(q=x)
    with pytest.raises(MXNetValueError, match="single-output Symbol"):
        add(a=mx.sym.Group([x, y]))
    with pytest.raises(MXNetValueError, match="3 positional symbols for 2 arguments"):
        add(x, y, x)


def test_group_input_to_an_op_is_rejected():
    with pytest.raises(MXNetError, match="group of 2 symbols"):
        mx.sym.Activation(mx.sym.Group([mx.sym.var("a"), mx.sym.var("b")]), act_type="relu")


def test_random_op_as_symbol_function():
    drop = mx.sym.Dropout(_d(), p=0.5, name="drop")
    assert drop.list_arguments() == ["data"]
    assert _ops(drop) == [("Dropout", "drop", {"p": "0.5"})]


# ----------------------------------------------------------------------------- infer_shape / infer_type

def test_infer_shape_conventions():
    net = _mlp()
    want = ([(5, 7), (4, 7), (4,), (2, 4), (2,)], [(5, 2)], [])
    assert net.infer_shape(data=(5, 7)) == want
    assert net.infer_shape((5, 7)) == want
    assert net.infer_shape(data=[5, 7]) == want
    assert net.infer_shape() == (None, None, None)
    assert net.infer_shape(fc2_weight=(2, 4)) == (None, None, None)
    assert net.infer_shape_partial() == ([None] * 5, [None], [])  # MXNet 2 marks unknown shapes None
    assert net.infer_shape_partial(fc2_weight=(2, 4)) == ([None, None, None, (2, 4), None], [None], [])
    with pytest.raises(MXNetValueError, match="'nope' is not an input"):
        net.infer_shape(nope=(1,))
    with pytest.raises(MXNetValueError, match="6 positional values for 5 arguments"):
        net.infer_shape(*[(1,)] * 6)


def test_infer_shape_with_aux_and_shape_attrs():
    net = mx.sym.BatchNorm(mx.sym.Convolution(_d(), kernel=(3, 3), num_filter=4, name="cv"), name="bn")
    assert net.infer_shape(data=(2, 3, 8, 8)) == (
        [(2, 3, 8, 8), (4, 3, 3, 3), (4,), (4,), (4,)], [(2, 4, 6, 6)], [(4,), (4,)])
    x = mx.sym.var("x", shape=(2, 6))
    assert mx.sym.FullyConnected(x, num_hidden=3, name="fc").infer_shape() == (
        [(2, 6), (3, 6), (3,)], [(2, 3)], [])


def test_infer_shape_of_fixture():
    sym = mx.sym.load(str(_fixture("symbol", "multi_output-symbol.json")))
    want = json.loads(_fixture("symbol", "multi_output.expected.json").read_text())["infer_shape"]
    # x carries __shape__ (2, 6), so nothing needs to be given
    for got in (sym.infer_shape(), sym.infer_shape(x=(2, 6))):
        args, outs, aux = got
        assert [list(s) for s in args] == want["arg_shapes"]
        assert [list(s) for s in outs] == want["out_shapes"]
        assert [list(s) for s in aux] == want["aux_shapes"]


@pytest.mark.parametrize("build, shapes, pattern", [
    (lambda a, b: mx.sym.broadcast_add(a, b, name="badd"), {"a": (2, 3), "b": (4,)},
     r"badd.*\(2, 3\).*\(4,\)|badd.*\[2, 3\].*\[4\]"),
    (lambda a, b: mx.sym.FullyConnected(a, b, num_hidden=3, no_bias=True, name="fcx"), {"a": (2, 3), "b": (4, 3)},
     r"fcx.*\(4, 3\)"),
    (lambda a, b: mx.sym.Concat(a, b, dim=1, name="cc"), {"a": (2, 3), "b": (4, 3)}, r"cc"),
])
def test_inconsistent_shapes_name_the_node(build, shapes, pattern):
    sym = build(mx.sym.var("a"), mx.sym.var("b"))
    with pytest.raises(MXNetError, match=pattern):
        sym.infer_shape(**shapes)


def test_infer_type():
    a = mx.sym.var("a")
    relu = mx.sym.Activation(a, act_type="relu", name="r")
    assert relu.infer_type(a="float16") == ([onp.float16], [onp.float16], [])
    assert relu.infer_type(a=onp.float64) == ([onp.float64], [onp.float64], [])
    assert relu.infer_type("float16") == ([onp.float16], [onp.float16], [])
    add = mx.sym.broadcast_add(a, mx.sym.var("b"), name="ab")
    assert add.infer_type(a="float16", b="float16") == ([onp.float16, onp.float16], [onp.float16], [])
    assert mx.sym.Activation(mx.sym.var("h", dtype="float16"), act_type="relu").infer_type()[1] == [onp.float16]


def test_infer_type_through_layers_with_parameters():
    fc = mx.sym.FullyConnected(_d(), num_hidden=4, name="fc")
    assert fc.infer_type(data="float16") == ([onp.float16] * 3, [onp.float16], [])


def test_infer_type_fills_unknown_inputs():
    add = mx.sym.broadcast_add(mx.sym.var("a"), mx.sym.var("b"), name="ab")
    assert add.infer_type(a="float16") == ([onp.float16, onp.float16], [onp.float16], [])


@pytest.mark.parametrize("build, given, want", [
    (lambda a, b: mx.sym.np.less(a, b), {"a": "float32", "b": "float32"},
     ([onp.float32, onp.float32], [onp.bool_], [])),
    (lambda a, b: mx.sym.np.argmax(a, axis=0), {"a": "float32"}, ([onp.float32], [onp.int64], [])),
    (lambda a, b: mx.sym.BatchNorm(a, name="bn"), {"a": "float16"},
     ([onp.float16, onp.float32, onp.float32], [onp.float16], [onp.float32, onp.float32])),
], ids=["less", "argmax", "batchnorm"])
def test_infer_type_of_dtype_changing_ops_without_shapes(build, given, want):
    assert build(mx.sym.var("a"), mx.sym.var("b")).infer_type(**given) == want
