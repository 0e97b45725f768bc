"""mx.viz: plot_network's Digraph (source only; no `dot` binary needed) and print_summary's table."""
from __future__ import annotations

import json
from math import prod
from pathlib import Path

import pytest

import mxjax as mx
from mxjax import visualization as viz

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "formats" / "gluon"
DATA = (2, 3, 10, 10)
CM = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")


def _net():
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), stride=(1, 1), num_filter=8, name="conv")
    net = mx.sym.BatchNorm(net, name="bn")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    net = mx.sym.Flatten(net, name="flat")
    return mx.sym.FullyConnected(net, num_hidden=10, name="fc")


def _split(dot):
    """(node lines by name, edge lines by (tail, head)) of a Digraph's body."""
    nodes, edges = {}, {}
    for line in dot.body:
        line = line.strip()
        if " -> " in line:
            tail, rest = line.split(" -> ", 1)
            edges[(tail, rest.split(" ", 1)[0])] = line
        else:
            nodes[line.split(" ", 1)[0]] = line
    return nodes, edges


# ----------------------------------------------------------------------------- plot_network

def test_plot_network_hides_weights():
    dot = viz.plot_network(_net())
    nodes, edges = _split(dot)
    assert list(nodes) == ["data", "conv", "bn", "relu", "pool", "flat", "fc"]
    assert set(edges) == {("conv", "data"), ("bn", "conv"), ("relu", "bn"), ("pool", "relu"),
                          ("flat", "pool"), ("fc", "flat")}
    for line in edges.values():  # MXNet's layout: consumer -> input drawn backwards, no label without shapes
        assert 'label=""' in line and "dir=back" in line and "arrowtail=open" in line


def test_plot_network_shows_weights():
    dot = viz.plot_network(_net(), hide_weights=False)
    nodes, edges = _split(dot)
    weights = ["conv_weight", "conv_bias", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var",
               "fc_weight", "fc_bias"]
    assert len(nodes) == 7 + len(weights) and set(weights) <= set(nodes)
    assert len(edges) == 6 + len(weights)
    assert ("conv", "conv_weight") in edges and ("bn", "bn_moving_var") in edges
    for name in weights:
        assert "shape=oval" in nodes[name] and CM[0] in nodes[name]


def test_plot_network_labels_and_colors():
    dot = viz.plot_network(_net())
    nodes, _ = _split(dot)
    source = dot.source
    for label in ["Convolution\n3x3/1x1, 8", "FullyConnected\n10", "Activation\nrelu", "Pooling\nmax, 2x2/2x2"]:
        assert f'label="{label}"' in source
    expected = {"data": CM[0], "conv": CM[1], "fc": CM[1], "relu": CM[2], "bn": CM[3], "pool": CM[4],
                "flat": CM[5]}
    for name, color in expected.items():
        assert f'fillcolor="{color}"' in nodes[name], name
    assert "label=bn " in nodes["bn"] and "shape=box" in nodes["bn"]  # other ops show their node name
    assert "shape=oval" in nodes["data"]


def test_plot_network_other_families():
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv")  # no stride: MXNet writes "1"
    net = mx.sym.LeakyReLU(net, act_type="prelu", name="prelu")
    net = mx.sym.Flatten(net, name="flat")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    dot = viz.plot_network(net)
    nodes, edges = _split(dot)
    assert 'label="Convolution\n3x3/1, 4"' in nodes["conv"]
    assert 'label="LeakyReLU\nprelu"' in nodes["prelu"] and CM[2] in nodes["prelu"]
    assert CM[6] in nodes["softmax"]
    assert "softmax_label" in nodes and ("softmax", "softmax_label") in edges  # a label is an input
    assert "prelu_gamma" not in nodes
    add = mx.sym.var("a") + mx.sym.var("b")
    nodes, _ = _split(viz.plot_network(add))
    assert CM[7] in nodes[add.name]


def test_plot_network_shape_labels():
    dot = viz.plot_network(_net(), shape={"data": DATA})
    _, edges = _split(dot)
    expected = {("conv", "data"): "3x10x10", ("bn", "conv"): "8x8x8", ("relu", "bn"): "8x8x8",
                ("pool", "relu"): "8x8x8", ("flat", "pool"): "8x4x4", ("fc", "flat"): "128"}
    for key, label in expected.items():
        assert f'label="{label}"' in edges[key] or f"label={label} " in edges[key], (key, edges[key])
    _, edges = _split(viz.plot_network(_net(), shape={"data": DATA}, hide_weights=False))
    assert 'label="3x3x3"' in edges[("conv", "conv_weight")]  # weight (8, 3, 3, 3) without its first axis


def test_plot_network_dtype_labels():
    _, edges = _split(viz.plot_network(_net(), shape={"data": DATA}, dtype={"data": "float16"}))
    assert 'label="8x4x4(float16)"' in edges[("flat", "pool")]
    add = mx.sym.var("a") + mx.sym.var("b")  # dtypes alone, where shape-free inference can do it
    _, edges = _split(viz.plot_network(add, dtype={"a": "float64", "b": "float64"}))
    assert 'label="(float64)"' in edges[(add.name, "a")]


def test_plot_network_attrs_title_format():
    dot = viz.plot_network(_net(), title="mynet", save_format="png",
                           node_attrs={"shape": "ellipse", "fixedsize": "false"})
    assert dot.name == "mynet" and dot.format == "png"
    assert dot.source.startswith("digraph mynet {")
    nodes, _ = _split(dot)
    assert "shape=ellipse" in nodes["conv"] and "fixedsize=false" in nodes["conv"]
    assert "shape=oval" in nodes["data"]  # inputs keep their oval, as in MXNet


def test_plot_network_npx_op_names():
    text = (FIXTURES / "tiny_np-symbol.json").read_text()
    graph = json.loads(text)
    for node in graph["nodes"]:  # the same graph as MXNet 2 may spell it
        node["op"] = {"FullyConnected": "_npx_fully_connected", "Activation": "_npx_activation"}.get(
            node["op"], node["op"])
    nodes, _ = _split(viz.plot_network(mx.sym.fromjson(json.dumps(graph))))
    assert 'label="FullyConnected\n3"' in nodes["npnet_dense0_fwd"] and CM[1] in nodes["npnet_dense0_fwd"]
    assert 'label="Activation\ntanh"' in nodes["npnet_tanh0_fwd"]


def test_plot_network_duplicate_names_warn():
    a, b = mx.sym.var("x"), mx.sym.var("x")
    with pytest.warns(RuntimeWarning, match="Repeated names: x"):
        viz.plot_network(mx.sym.FullyConnected(a + b, num_hidden=2, name="fcx"))


def test_plot_network_bad_input():
    with pytest.raises(TypeError, match="must be an mx.sym.Symbol"):
        viz.plot_network("not a symbol")
    with pytest.raises(TypeError, match="shape must be a dict"):
        viz.plot_network(_net(), shape=(2, 3, 10, 10))
    with pytest.raises(TypeError, match="node_attrs must be a dict"):
        viz.plot_network(_net(), node_attrs=["shape"])
    with pytest.raises(ValueError, match="'label' is not an input"):
        viz.plot_network(_net(), shape={"data": DATA, "label": (2,)})
    with pytest.raises(ValueError, match="must be a tuple of ints"):
        viz.plot_network(_net(), shape={"data": "big"})
    with pytest.raises(ValueError, match=r"incomplete.*other"):
        viz.plot_network(mx.sym.broadcast_add(_net(), mx.sym.var("other"), name="add"), shape={"data": DATA})
    # dtypes alone propagate (no shapes needed): edges are labelled with the dtype
    assert "(float16)" in viz.plot_network(_net(), dtype={"data": "float16"}).source


# ----------------------------------------------------------------------------- print_summary

def _rows(out, line_length=120, positions=(.44, .64, .74, 1.)):
    """Table rows as [name(type), shape, params, previous] (continuation rows included) and the total."""
    cuts = [0] + [int(line_length * p) for p in positions]
    rows, total = [], None
    for line in out.splitlines():
        if not line or line[0] in "_=" or line.startswith("Layer (type)"):
            continue
        if line.startswith("Total params: "):
            total = int(line.split(": ")[1])
            continue
        assert len(line) == line_length
        rows.append([line[a:b].strip() for a, b in zip(cuts, cuts[1:])])
    return rows, total


def test_print_summary_table(capsys):
    assert viz.print_summary(_net(), shape={"data": DATA}) is None
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "_" * 120 and lines[2] == "=" * 120 and lines[-1] == "_" * 120
    assert lines[1].split() == ["Layer", "(type)", "Output", "Shape", "Param", "#", "Previous", "Layer"]
    assert lines[-3] == "=" * 120  # the last layer closes with '=' as in MXNet
    conv = 8 * 3 * 3 * 3 + 8
    bn = 2 * 8  # gamma and beta; the moving statistics are auxiliary states
    fc = (8 * 4 * 4) * 10 + 10
    rows, total = _rows(out)
    assert rows == [
        ["data(null)", "3x10x10", "0", ""],
        ["conv(Convolution)", "8x8x8", str(conv), "data"],
        ["bn(BatchNorm)", "8x8x8", str(bn), "conv"],
        ["relu(Activation)", "8x8x8", "0", "bn"],
        ["pool(Pooling)", "8x4x4", "0", "relu"],
        ["flat(Flatten)", "128", "0", "pool"],
        ["fc(FullyConnected)", "10", str(fc), "flat"],
    ]
    assert total == conv + bn + fc


def test_print_summary_multiple_inputs_and_shared_weight(capsys):
    weight = mx.sym.var("shared_weight")
    f1 = mx.sym.FullyConnected(mx.sym.var("x"), weight=weight, num_hidden=3, no_bias=True, name="f1")
    f2 = mx.sym.FullyConnected(mx.sym.var("y"), weight=weight, num_hidden=3, no_bias=True, name="f2")
    out_sym = mx.sym.elemwise_add(f1, f2, name="sum")
    viz.print_summary(out_sym, shape={"x": (2, 4), "y": (2, 4)})
    rows, total = _rows(capsys.readouterr().out)
    assert rows == [
        ["x(null)", "4", "0", ""],
        ["f1(FullyConnected)", "3", "12", "x"],
        ["y(null)", "4", "0", ""],
        ["f2(FullyConnected)", "3", "12", "y"],
        [f"sum({out_sym._outputs[0][0].op})", "3", "0", "f1"],
        ["", "", "", "f2"],
    ]
    assert total == 12  # a shared weight is one set of parameters


def test_print_summary_param_slots(capsys):
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, weight=mx.sym.var("w"), bias=mx.sym.var("b"), num_hidden=4, name="fc")
    net = mx.sym.LeakyReLU(net, act_type="prelu", name="act")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    viz.print_summary(net, shape={"data": (2, 5), "softmax_label": (2,)})
    rows, total = _rows(capsys.readouterr().out)
    # 'w' and 'b' count by their slot though not named like parameters; the label is a graph input
    assert rows[1] == ["fc(FullyConnected)", "4", str(5 * 4 + 4), "data"]
    assert rows[2] == ["act(LeakyReLU)", "4", "4", "fc"]
    assert rows[3] == ["softmax_label(null)", "", "0", ""]
    assert rows[4] == ["softmax(SoftmaxOutput)", "4", "0", "act"] and rows[5] == ["", "", "", "softmax_label"]
    assert total == 5 * 4 + 4 + 4


def test_print_summary_line_length_and_positions(capsys):
    viz.print_summary(_net(), shape={"data": DATA}, line_length=80, positions=[30, 50, 60, 80])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "_" * 80
    rows, total = _rows(out, 80, (30 / 80, 50 / 80, 60 / 80, 1.))
    assert rows[1] == ["conv(Convolution)", "8x8x8", str(8 * 3 * 3 * 3 + 8), "data"]
    viz.print_summary(_net(), shape={"data": DATA}, line_length=40)
    for line in capsys.readouterr().out.splitlines()[:-2]:
        assert len(line) == 40  # fields are cut to their columns


def test_print_summary_bad_input(capsys):
    with pytest.raises(TypeError, match="must be an mx.sym.Symbol"):
        viz.print_summary(42, shape={"data": DATA})
    with pytest.raises(ValueError, match="shape is required"):
        viz.print_summary(_net())
    with pytest.raises(TypeError, match="shape must be a dict"):
        viz.print_summary(_net(), shape=[DATA])
    with pytest.raises(ValueError, match=r"incomplete.*\['data'\]"):
        viz.print_summary(_net(), shape={})
    with pytest.raises(mx.base.MXNetError, match="conv"):
        viz.print_summary(_net(), shape={"data": (2, 3)})  # inference itself rejects the shape
    assert capsys.readouterr().out == ""  # nothing printed before the error


def test_print_summary_mxnet_fixture(capsys):
    path = FIXTURES / "tiny-symbol.json"
    expected_path = FIXTURES / "tiny.expected.json"
    sym = mx.sym.load(str(path))
    viz.print_summary(sym, shape={"data": (2, 3, 6, 6)})
    rows, total = _rows(capsys.readouterr().out)
    shapes = json.loads(expected_path.read_text())["export_param_shapes"]
    assert total == sum(prod(s) for k, s in shapes.items() if k.startswith("arg:"))
    assert rows[0] == ["data(null)", "3x6x6", "0", ""]
    assert rows[1] == ["net_conv0_fwd(Convolution)", "4x6x6", str(4 * 3 * 3 * 3 + 4), "data"]
    assert rows[2] == ["net_batchnorm0_fwd(BatchNorm)", "4x6x6", "8", "net_conv0_fwd"]
    assert rows[-1] == ["net_dense0_fwd(FullyConnected)", "5", str(5 * 144 + 5), "net_relu0_fwd"]
    nodes, edges = _split(viz.plot_network(sym, shape={"data": (2, 3, 6, 6)}))
    assert 'label="Convolution\n3x3/1x1, 4"' in nodes["net_conv0_fwd"]
    assert 'label="4x6x6"' in edges[("net_batchnorm0_fwd", "net_conv0_fwd")]
    assert len(nodes) == 5 and len(edges) == 4
