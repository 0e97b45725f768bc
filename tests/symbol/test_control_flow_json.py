"""Control-flow nodes in symbol JSON: MXNet's layout (subgraphs, *_locs), export -> SymbolBlock.imports round trips
(values and gradients against NumPy and the original block), and graphs written in MXNet 1.x's own layout."""
import json

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon, np, npx
from mxjax.base import decode_attr
from mxjax.gluon import nn
from oracle import close

RNG = onp.random.default_rng(11)


class Recurrent(gluon.HybridBlock):
    """foreach: a tanh RNN whose Dense weight (a closure) and an outside scale are the node's free inputs."""

    def __init__(self):
        super().__init__()
        self.cell = nn.Dense(2, in_units=5)
        self.scale = gluon.Parameter("scale", shape=(2,), init=mx.init.Constant(0.7))

    def forward(self, x):  # (T, B, 3)
        scale = self.scale.data() * 2

        def body(xt, states):
            h = np.tanh(self.cell(np.concatenate([xt, states[0]], axis=-1)))
            return h * scale, [h]

        outs, (h,) = npx.foreach(body, x, [np.zeros((x.shape[1], 2))])
        return outs + h

    def numpy(self, x, p):
        h, outs = onp.zeros((x.shape[1], 2)), []
        for xt in x:
            h = onp.tanh(onp.concatenate([xt, h], axis=-1) @ p["cell.weight"].T + p["cell.bias"])
            outs.append(h * p["scale"] * 2)
        return onp.stack(outs) + h


class Growing(gluon.HybridBlock):
    """while_loop: the trip count depends on the data; each step emits a Dense feature and the counter."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, in_units=3)

    def forward(self, x):  # (3,)
        def func(i, v):
            return [np.tanh(self.dense(v.reshape(1, 3))).reshape(2), i], [i + 1, v * 1.5]
        outs, (i, v) = npx.while_loop(lambda i, v: np.abs(v).sum() < 6, func, [np.zeros((), dtype="int64"), x],
                                      max_iterations=6)
        return outs[0] * 2 + v.sum() + outs[1].reshape(6, 1) + i

    def numpy(self, x, p):
        v, rows = x.astype(onp.float64), []
        while onp.abs(v).sum() < 6:
            rows.append(onp.tanh(p["dense.weight"] @ v + p["dense.bias"]) * 2 + len(rows))
            v = v * 1.5
        want = onp.zeros((6, 2))
        want[:len(rows)] = onp.reshape(rows, (-1, 2))
        return want + v.sum() + len(rows)


class Branches(gluon.HybridBlock):
    """cond: both branches read the Dense weight."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(3, in_units=3)

    def forward(self, x):
        return npx.cond(lambda x: x.sum() > 0, lambda x: self.dense(x) * 2, lambda x: np.tanh(self.dense(-x)), [x])

    def numpy(self, x, p):
        w, b = p["dense.weight"], p["dense.bias"]
        return (x @ w.T + b) * 2 if x.sum() > 0 else onp.tanh(-x @ w.T + b)


class Constant(gluon.HybridBlock):
    """A plain array read inside a nested loop body: a constant of the sub-graph, saved in the JSON."""

    CONST = np.array([0.5, -1.25])

    def forward(self, x):  # (T, U, 2)
        def outer(xt, s):
            outs, s2 = npx.foreach(lambda xu, c: (xu * s + c * self.CONST, c + xu), xt, s)
            return outs.sum(axis=0), s2
        outs, s = npx.foreach(outer, x, np.ones(x.shape[2:]))
        return outs * s

    def numpy(self, x, p):
        s, rows = onp.ones(2), []
        for xt in x:
            c, acc = s, 0
            for xu in xt:
                acc, c = acc + xu * s + c * onp.array([0.5, -1.25]), c + xu
            rows.append(acc)
            s = c
        return onp.stack(rows) * s


CASES = [(Recurrent, (4, 2, 3), 1.0), (Growing, (3,), 0.4), (Growing, (3,), 9.0), (Branches, (2, 3), 1.0),
         (Branches, (2, 3), -1.0), (Constant, (3, 2, 2), 1.0)]


def _run(block, x):
    """(output, input gradient, {parameter name: gradient}) of a fixed weighted sum of the output."""
    x = np.array(x)
    x.attach_grad()
    with autograd.record():
        out = block(x)
        loss = (out * np.array(onp.linspace(-1, 1, out.size).reshape(out.shape))).sum()
    loss.backward()
    grads = {name: p.grad().asnumpy() for name, p in block.collect_params().items() if p.grad_req != "null"}
    return out.asnumpy(), x.grad.asnumpy(), grads


def _input(shape, sign):
    """The same data whichever tests run (Growing: 5 steps at sign 0.4, none at 9)."""
    return (onp.abs(onp.random.default_rng(4).normal(size=shape)) * sign).astype(onp.float32)


def _exported(cls, shape, sign, tmp_path):
    net = cls()
    net.initialize()
    x = _input(shape, sign)
    net.hybridize()
    original = _run(net, x)
    symbol_file, params_file = net.export(str(tmp_path / "net"))
    params = {name: p.data().asnumpy().astype(onp.float64) for name, p in net.collect_params().items()}
    return net, x, original, symbol_file, params_file, params


@pytest.mark.parametrize("cls, shape, sign", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_export_then_imports_gives_the_same_values_and_gradients(cls, shape, sign, tmp_path):
    net, x, (out, gx, grads), symbol_file, params_file, params = _exported(cls, shape, sign, tmp_path)
    close(out, net.numpy(x.astype(onp.float64), params), rtol=1e-5, atol=1e-5)
    imported = gluon.SymbolBlock.imports(symbol_file, ["data"], params_file if params else None)
    out2, gx2, grads2 = _run(imported, x)
    close(out2, out, rtol=1e-6, atol=1e-6)
    close(gx2, gx, rtol=1e-6, atol=1e-6)
    assert sorted(grads2) == sorted(grads)
    for name in grads:
        close(grads2[name], grads[name], rtol=1e-6, atol=1e-6)


def _control_nodes(graph):
    """Every control-flow node of a JSON graph dict, nested ones included."""
    found = []
    for node in graph["nodes"]:
        if node["op"] in ("_foreach", "_while_loop", "_cond"):
            found.append(node)
        for sub in node.get("subgraphs", []):
            found.extend(_control_nodes(sub))
    return found


def _inputs(graph):
    return [graph["nodes"][i]["name"] for i in graph["arg_nodes"]]


def test_exported_nodes_use_mxnet_layout(tmp_path):
    layouts = {}
    for cls, shape, sign in CASES[:4]:
        _, _, _, symbol_file, _, _ = _exported(cls, shape, sign, tmp_path)
        for node in _control_nodes(json.load(open(symbol_file))):
            layouts[node["op"]] = node
    foreach, loop, branch = layouts["_foreach"], layouts["_while_loop"], layouts["_cond"]
    # foreach: inputs data, state, then the remaining (free) inputs; locs index the body's inputs
    attrs, (body,) = foreach["attrs"], foreach["subgraphs"]
    assert int(attrs["num_args"]) == len(foreach["inputs"]) + 1
    assert (int(attrs["num_outputs"]), int(attrs["num_out_data"])) == (2, 1) and len(body["heads"]) == 2
    locs = [loc for key in ("in_data_locs", "in_state_locs", "remain_locs") for loc in decode_attr(attrs[key])]
    assert sorted(locs) == list(range(len(_inputs(body))))
    assert {"cell.weight", "cell.bias"} <= set(_inputs(body))   # the closure's weight, by its name
    assert all(body["nodes"][h[0]]["op"] != "null" for h in body["heads"])   # outputs are never inputs (MXNet)
    # while_loop: cond and func sub-graphs; each loop variable is one of func's inputs
    attrs, (cond_g, func_g) = loop["attrs"], loop["subgraphs"]
    assert int(attrs["num_args"]) == len(loop["inputs"]) + 2 and attrs["max_iterations"] == "6"
    assert len(decode_attr(attrs["cond_input_locs"])) == len(_inputs(cond_g)) and len(cond_g["heads"]) == 1
    assert len(decode_attr(attrs["func_input_locs"])) == len(_inputs(func_g))
    assert len(decode_attr(attrs["func_var_locs"])) == 2 and -1 not in decode_attr(attrs["func_var_locs"])
    # cond: pred, then and else sub-graphs
    attrs = branch["attrs"]
    assert len(branch["subgraphs"]) == 3 and int(attrs["num_args"]) == len(branch["inputs"]) + 3
    for key, sub in zip(("cond_input_locs", "then_input_locs", "else_input_locs"), branch["subgraphs"]):
        assert len(decode_attr(attrs[key])) == len(_inputs(sub))


@pytest.mark.parametrize("cls, shape, sign", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_symbol_json_round_trip_keeps_the_subgraphs(cls, shape, sign):
    net = cls()
    net.initialize()
    net.hybridize()
    x = _input(shape, sign)
    want = net(np.array(x)).asnumpy()
    symbol = net._cache.programs()[0][1].symbol
    text = symbol.tojson()
    loaded = mx.sym.load_json(text)
    assert loaded.tojson() == text
    assert len(_control_nodes(json.loads(text))) >= 1
    args = {name: p.data() for name, p in net.collect_params().items()}
    close(loaded.eval(data=np.array(x), **args)[0], want, rtol=1e-6, atol=1e-6)


class Normalized(gluon.HybridBlock):
    """BatchNorm inside a loop body: its training flag comes from the caller, also in an imported graph."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm(in_channels=3)

    def forward(self, x):  # (T, B, 3)
        return npx.foreach(lambda xt, s: (self.bn(xt) + s, s + 1), x, np.zeros((3,)))[0]


def test_imported_loop_body_follows_the_training_flag(tmp_path):
    net = Normalized()
    net.initialize()
    net.hybridize()
    x = RNG.normal(size=(3, 5, 3)).astype(onp.float32)
    net(np.array(x))                                   # traced in predict mode
    symbol_file, params_file = net.export(str(tmp_path / "bn"))
    imported = gluon.SymbolBlock.imports(symbol_file, ["data"], params_file)
    steps = onp.arange(3.0)[:, None, None]
    batch = (x - x.mean(axis=1, keepdims=True)) / onp.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    close(imported(np.array(x)), x / onp.sqrt(1 + 1e-5) + steps, rtol=1e-5, atol=1e-5)   # moving stats 0, 1
    with autograd.record():                            # training: each step's batch statistics
        trained = imported(np.array(x))
    close(trained, batch + steps, rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------- MXNet 1.x's own layout

def _var(name):
    return {"op": "null", "name": name, "inputs": []}


def _graph(nodes, heads):
    return {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
            "heads": [[h, 0, 0] for h in heads], "attrs": {"mxnet_version": ["int", 10901]}}


def test_reads_mxnet_foreach_with_permuted_locations():
    # out = state + w * data, next = state + data: the body's list_inputs order is (state, w, data), so the
    # node inputs (data, state, weight) go to body inputs 2, 0, 1
    body = _graph([_var("state"), _var("w"), _var("data"),
                   {"op": "broadcast_mul", "name": "mul", "inputs": [[1, 0, 0], [2, 0, 0]]},
                   {"op": "elemwise_add", "name": "out", "inputs": [[0, 0, 0], [3, 0, 0]]},
                   {"op": "elemwise_add", "name": "next", "inputs": [[0, 0, 0], [2, 0, 0]]}], [4, 5])
    node = {"op": "_foreach", "name": "foreach0", "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]], "subgraphs": [body],
            "attrs": {"num_args": "4", "num_outputs": "2", "num_out_data": "1", "in_data_locs": "(2,)",
                      "in_state_locs": "(0,)", "remain_locs": "(1,)"}}
    graph = {**_graph([_var("xs"), _var("h0"), _var("weight"), node], [3]), "heads": [[3, 0, 0], [3, 1, 0]]}
    xs, h0, w = RNG.normal(size=(4, 2)), RNG.normal(size=2), RNG.normal(size=2)
    feed = {name: np.array(v, dtype=v.dtype) for name, v in (("xs", xs), ("h0", h0), ("weight", w))}
    outs, final = mx.sym.load_json(json.dumps(graph)).eval(**feed)
    h, rows = h0, []
    for x in xs:
        rows.append(h + w * x)
        h = h + x
    close(outs, onp.stack(rows))
    close(final, h)


def test_reads_mxnet_while_loop_and_cond():
    # while_loop: inputs (limit, v); cond reads both (v.sum() < limit), func only v (out = v * 2, v + 1)
    cond_g = _graph([_var("v"), {"op": "sum", "name": "s", "inputs": [[0, 0, 0]]}, _var("limit"),
                     {"op": "broadcast_lesser", "name": "lt", "inputs": [[1, 0, 0], [2, 0, 0]]}], [3])
    func_g = _graph([_var("v"), {"op": "_mul_scalar", "name": "twice", "attrs": {"scalar": "2"}, "inputs": [[0, 0, 0]]},
                     {"op": "_plus_scalar", "name": "next", "attrs": {"scalar": "1"}, "inputs": [[0, 0, 0]]}], [1, 2])
    loop = {"op": "_while_loop", "name": "while0", "inputs": [[0, 0, 0], [1, 0, 0]], "subgraphs": [cond_g, func_g],
            "attrs": {"num_args": "4", "num_outputs": "2", "num_out_data": "1", "max_iterations": "5",
                      "cond_input_locs": "(1, 0)", "func_input_locs": "(1,)", "func_var_locs": "(0,)"}}
    sym = mx.sym.load_json(json.dumps({**_graph([_var("limit"), _var("v0"), loop], [2]),
                                       "heads": [[2, 0, 0], [2, 1, 0]]}))
    outs, v = sym.eval(limit=np.array([7.0]), v0=np.array([0.5, 1.0]))
    close(outs, [[1, 2], [3, 4], [5, 6], [0, 0], [0, 0]])   # 3 steps run, padded to max_iterations rows
    close(v, [3.5, 4.0])
    # cond: pred graph reads input 1 (a flag), the branches input 0
    pred = _graph([_var("flag"), {"op": "_greater_scalar", "name": "gt", "attrs": {"scalar": "0"},
                                  "inputs": [[0, 0, 0]]}], [1])
    then = _graph([_var("a"), {"op": "_plus_scalar", "name": "p", "attrs": {"scalar": "10"},
                               "inputs": [[0, 0, 0]]}], [1])
    other = _graph([_var("a"), {"op": "negative", "name": "n", "inputs": [[0, 0, 0]]}], [1])
    node = {"op": "_cond", "name": "cond0", "inputs": [[0, 0, 0], [1, 0, 0]], "subgraphs": [pred, then, other],
            "attrs": {"num_args": "5", "num_outputs": "1", "cond_input_locs": "(1,)", "then_input_locs": "(0,)",
                      "else_input_locs": "(0,)"}}
    sym = mx.sym.load_json(json.dumps(_graph([_var("a"), _var("flag"), node], [2])))
    close(sym.eval(a=np.array([1.0, 2.0]), flag=np.array([1.0]))[0], [11, 12])
    close(sym.eval(a=np.array([1.0, 2.0]), flag=np.array([-1.0]))[0], [-1, -2])


def test_bad_control_flow_json_names_the_node():
    node = {"op": "_cond", "name": "cond0", "inputs": [[0, 0, 0]], "subgraphs": [],
            "attrs": {"num_args": "4", "num_outputs": "1", "cond_input_locs": "(0,)", "then_input_locs": "(0,)",
                      "else_input_locs": "(0,)"}}
    with pytest.raises(mx.MXNetError, match=r"node 'cond0' \(_cond\) needs 3 subgraphs \(pred, then, else\), got 0"):
        mx.sym.load_json(json.dumps(_graph([_var("a"), node], [1])))
    bad = _graph([_var("c"), {"op": "_npi_copy", "name": "out", "inputs": [[0, 0, 0]]}], [1])
    bad["nodes"][0]["attrs"] = {"__constant__": "not json"}
    node = {"op": "_foreach", "name": "foreach0", "inputs": [[0, 0, 0]], "subgraphs": [bad],
            "attrs": {"num_args": "2", "num_outputs": "1", "num_out_data": "1", "in_data_locs": "(-1,)",
                      "in_state_locs": "()", "remain_locs": "()"}}
    with pytest.raises(mx.MXNetError, match="__constant__ attribute must hold dtype, shape and base64 data"):
        mx.sym.load_json(json.dumps(_graph([_var("a"), node], [1])))
