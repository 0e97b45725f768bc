"""mx.sym.contrib.foreach / cond: symbolic bodies become one _foreach / _cond node; values and gradients
against NumPy, outside symbols cut into node inputs as MXNet 2.0 cuts them, MXNet-JSON round trips."""
import json

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetTypeError, MXNetValueError

RNG = onp.random.default_rng(0)
X = RNG.uniform(-1, 1, (4, 3)).astype("float32")
W = RNG.uniform(-1, 1, (3,)).astype("float32")


def _rnn():
    x, w, s0 = mx.sym.var("x"), mx.sym.var("w"), mx.sym.var("s0")
    scale = w * 2  # computed outside the body: cut into an input of the node

    def body(xt, states):
        h = mx.sym.tanh(xt * scale + states[0])
        return h, [h]

    outs, (h,) = mx.sym.contrib.foreach(body, x, [s0])
    return mx.sym.Group([outs, h])


def _numpy(x, w, s0):
    h, outs = s0, []
    for xt in x:
        h = onp.tanh(xt * w * 2 + h)
        outs.append(h)
    return onp.stack(outs), h


def _values():
    return {"x": mx.nd.array(X), "w": mx.nd.array(W), "s0": mx.nd.zeros((3,))}


def test_foreach_values_match_numpy_and_survive_json():
    sym = _rnn()
    assert sym.list_arguments() == ["x", "s0", "w"]  # as MXNet 2.0 lists them for this graph
    with mx.name.NameManager():
        assert _rnn().list_outputs() == ["_foreach0_output0", "_foreach0_output1"]
    want = _numpy(X, W, onp.zeros(3, "float32"))
    for graph in (sym, mx.sym.fromjson(sym.tojson())):
        got = [o.asnumpy() for o in graph.eval(**_values())]
        for g, w in zip(got, want, strict=True):
            onp.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_foreach_gradient_matches_finite_differences():
    loss = mx.sym.sum(_rnn()[0])
    grads = {"w": mx.nd.zeros((3,)), "x": mx.nd.zeros((4, 3)), "s0": mx.nd.zeros((3,))}
    exe = loss.bind(mx.cpu(), _values(), args_grad=grads)
    exe.forward(is_train=True)
    exe.backward()
    eps, s0 = 1e-3, onp.zeros(3, "float64")
    numeric = onp.zeros(3)
    for i in range(3):
        up, down = W.astype("float64").copy(), W.astype("float64").copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (_numpy(X, up, s0)[0].sum() - _numpy(X, down, s0)[0].sum()) / (2 * eps)
    onp.testing.assert_allclose(grads["w"].asnumpy(), numeric, rtol=1e-2, atol=1e-3)


def test_single_symbols_and_bad_bodies():
    x = mx.sym.var("x")
    out, state = mx.sym.contrib.foreach(lambda xt, s: (xt + s, xt + s), x, mx.sym.var("s"))
    got = [o.asnumpy() for o in mx.sym.Group([out, state]).eval(x=mx.nd.array(X), s=mx.nd.zeros((3,)))]
    onp.testing.assert_allclose(got[0], onp.cumsum(X, axis=0), rtol=1e-5)
    onp.testing.assert_allclose(got[1], X.sum(axis=0), rtol=1e-5)
    with pytest.raises(MXNetValueError, match="2 new states for 1 initial states"):
        mx.sym.contrib.foreach(lambda xt, s: (xt, [s[0], s[0]]), x, [mx.sym.var("s")])
    with pytest.raises(MXNetTypeError, match="data must be a Symbol"):
        mx.sym.contrib.foreach(lambda xt, s: (xt, s), X, [mx.sym.var("s")])


def _cond():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = a * 3  # outside both branches: cut into an input, like the predicate
    return mx.sym.contrib.cond(mx.sym.sum(a) > 0, lambda: c + b, lambda: a - b)


def test_cond_picks_the_branch_at_run_time_and_survives_json():
    with mx.name.NameManager():
        sym = _cond()
    assert sym.list_outputs() == ["_cond0_output"] and sym.list_arguments() == ["a", "b"]
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] == "_cond"][0]
    # MXNet 2.0 writes these for the same graph: inputs (pred, a * 3, b, a) shared by the branches
    assert (node["attrs"]["cond_input_locs"], node["attrs"]["then_input_locs"],
            node["attrs"]["else_input_locs"], node["attrs"]["num_args"]) == ("(0,)", "(1, 2)", "(3, 2)", "7")
    a, b = onp.array([1.0, 2.0], "float32"), onp.array([5.0, 7.0], "float32")
    for graph in (sym, mx.sym.fromjson(sym.tojson())):
        for x in (a, -a):
            (got,) = graph.eval(a=mx.nd.array(x), b=mx.nd.array(b))
            onp.testing.assert_allclose(got.asnumpy(), 3 * x + b if x.sum() > 0 else x - b)


def test_cond_branches_must_agree():
    a = mx.sym.var("a")
    with pytest.raises(MXNetValueError, match="then_func returned 2 outputs and else_func 1"):
        mx.sym.contrib.cond(a > 0, lambda: [a, a], lambda: a)
    with pytest.raises(MXNetTypeError, match="pred must be a single-output Symbol"):
        mx.sym.contrib.cond(True, lambda: a, lambda: a)


def _counting_loop():
    i, s, step = mx.sym.var("i"), mx.sym.var("s"), mx.sym.var("step")
    outs, (i2, s2) = mx.sym.contrib.while_loop(
        cond=lambda i, s: i < 5, func=lambda i, s: ([s * 2], [i + step, s + i]), loop_vars=[i, s], max_iterations=8)
    return mx.sym.Group([outs[0], i2, s2])


def test_while_loop_pads_outputs_and_matches_mxnet_layout():
    with mx.name.NameManager():
        sym = _counting_loop()
    assert sym.list_arguments() == ["i", "s", "step"]
    assert sym.list_outputs() == ["_while_loop0_output0", "_while_loop0_output1", "_while_loop0_output2"]
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] == "_while_loop"][0]["attrs"]
    # MXNet 2.0 writes these for the same graph
    assert (node["cond_input_locs"], node["func_input_locs"], node["func_var_locs"], node["num_args"]) == (
        "(0,)", "(1, 0, 2)", "(1, 0)", "5")
    values = {"i": mx.nd.array([0.0]), "s": mx.nd.array([1.0]), "step": mx.nd.array([1.0])}
    for graph in (sym, mx.sym.fromjson(sym.tojson())):
        rows, i, s = graph.eval(**values)
        onp.testing.assert_array_equal(rows.asnumpy().ravel(), [2, 2, 4, 8, 14, 0, 0, 0])  # MXNet's values
        assert (i.asnumpy().item(), s.asnumpy().item()) == (5.0, 11.0)


def test_while_loop_needs_max_iterations_and_matching_vars():
    i = mx.sym.var("i")
    with pytest.raises(MXNetValueError, match="max_iterations must be a positive int"):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([i], [i + 1]), [i])
    with pytest.raises(MXNetValueError, match="2 new loop variables for 1"):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([i], [i + 1, i]), [i], max_iterations=3)
