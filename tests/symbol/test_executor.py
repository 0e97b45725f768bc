"""Executors: bind / simple_bind / eval, forward and backward, grad_req, aux states, MXNet fixtures, to_jaxpr.

Oracles: NumPy, ``jax.vjp`` of a jnp version of the same computation, mxjax's
imperative ops under autograd, and the outputs MXNet 1.9.1 computed for the fixtures.
"""
from __future__ import annotations

import jax
import jax.extend
import jax.numpy as jnp
import numpy as onp
import pytest
from oracle import fixture

import mxjax as mx
from mxjax.base import MXNetError, MXNetValueError

_fixture = fixture  # shared/formats/fixtures/<parts>, skipped when missing


RNG = onp.random.default_rng(0)
X = RNG.standard_normal((4, 5)).astype("float32")
W = RNG.standard_normal((3, 5)).astype("float32")
BIAS = RNG.standard_normal(3).astype("float32")
G = RNG.standard_normal((4, 3)).astype("float32")


def _dense_tanh():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    return mx.sym.Activation(fc, act_type="tanh", name="t")


def _jnp_dense_tanh(x, w, b):
    return jnp.tanh(x @ w.T + b)


def _ref_grads(g=G):
    _, vjp = jax.vjp(_jnp_dense_tanh, X, W, BIAS)
    return dict(zip(("data", "fc_weight", "fc_bias"), (onp.asarray(v) for v in vjp(g))))


def _close(got, want, tol=1e-5):
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    assert got.shape == onp.shape(want)
    onp.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------- forward and backward

def test_simple_bind_forward_backward_matches_jax():
    sym = _dense_tanh()
    ex = sym.simple_bind(mx.cpu(), data=(4, 5))
    assert list(ex.arg_dict) == ["data", "fc_weight", "fc_bias"]
    assert [a.shape for a in ex.arg_arrays] == [(4, 5), (3, 5), (3,)]
    assert all(float(abs(a.asnumpy()).sum()) == 0 for a in ex.arg_arrays)  # zero-allocated
    assert sorted(ex.grad_dict) == ["data", "fc_bias", "fc_weight"] and ex.aux_dict == {}
    ex.arg_dict["fc_weight"][:] = W
    ex.arg_dict["fc_bias"][:] = BIAS
    outs = ex.forward(is_train=True, data=X)
    assert outs is ex.outputs and len(outs) == 1
    _close(outs[0], onp.tanh(X @ W.T + BIAS))
    _close(ex.arg_dict["data"], X)  # forward's keyword arrays are copied into the arguments
    assert list(ex.output_dict) == ["t_output"]
    ex.backward(mx.nd.array(G))
    for name, want in _ref_grads().items():
        _close(ex.grad_dict[name], want)
    assert [g is ex.grad_dict[n] for g, n in zip(ex.grad_arrays, ex.arg_names)] == [True] * 3


def test_backward_matches_mxjax_autograd():
    ex = _dense_tanh().bind(mx.cpu(), {"data": mx.nd.array(X), "fc_weight": mx.nd.array(W),
                                        "fc_bias": mx.nd.array(BIAS)})
    ex.forward(is_train=True)
    ex.backward([G])
    x, w, b = mx.nd.array(X), mx.nd.array(W), mx.nd.array(BIAS)
    for a in (x, w, b):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.npx.activation(mx.npx.fully_connected(x, w, b, num_hidden=3, no_bias=False), act_type="tanh")
    y.backward(mx.nd.array(G))
    _close(ex.outputs[0], y.asnumpy())
    for name, arr in (("data", x), ("fc_weight", w), ("fc_bias", b)):
        _close(ex.grad_dict[name], arr.grad.asnumpy())


def test_backward_default_head_gradient_is_ones():
    ex = _dense_tanh().bind(mx.cpu(), [X, W, BIAS])  # positional args follow list_arguments()
    ex.forward(is_train=True)
    ex.backward()
    _close(ex.grad_dict["fc_bias"], _ref_grads(onp.ones_like(G))["fc_bias"])


def test_grad_req_write_add_null():
    grads = {"data": mx.nd.zeros((4, 5)), "fc_weight": mx.nd.ones((3, 5)), "fc_bias": mx.nd.ones(3)}
    ex = _dense_tanh().bind(mx.cpu(), {"data": X, "fc_weight": W, "fc_bias": BIAS}, args_grad=grads,
                            grad_req={"data": "null", "fc_weight": "add", "fc_bias": "write"})
    assert "data" not in ex.grad_dict and ex.grad_arrays[0] is None
    want = _ref_grads()
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(G)
    _close(ex.grad_dict["fc_weight"], 1 + 2 * want["fc_weight"])  # 'add' accumulates into the buffer
    _close(ex.grad_dict["fc_bias"], want["fc_bias"])  # 'write' overwrites
    assert ex.grad_dict["fc_weight"] is grads["fc_weight"]  # the caller's buffers are written in place
    _close(grads["fc_weight"], 1 + 2 * want["fc_weight"])
    _close(grads["data"], onp.zeros((4, 5)))


def test_grad_req_forms():
    sym = _dense_tanh()
    args = {"data": X, "fc_weight": W, "fc_bias": BIAS}
    assert sym.simple_bind(mx.cpu(), grad_req="null", data=(4, 5)).grad_dict == {}
    assert list(sym.bind(mx.cpu(), args, grad_req=["null", "write", "null"]).grad_dict) == ["fc_weight"]
    assert list(sym.bind(mx.cpu(), args, grad_req={"fc_bias": "add"}).grad_dict) == ["fc_bias"]
    # args_grad given for some arguments only: the others get no gradient
    ex = sym.bind(mx.cpu(), args, args_grad={"fc_bias": mx.nd.zeros(3)})
    assert list(ex.grad_dict) == ["fc_bias"]
    with pytest.raises(MXNetValueError, match="grad_req must be one of"):
        sym.bind(mx.cpu(), args, grad_req="sometimes")


def test_eval():
    sym = _dense_tanh()
    outs = sym.eval(mx.cpu(), data=mx.nd.array(X), fc_weight=mx.nd.array(W), fc_bias=mx.nd.array(BIAS))
    assert isinstance(outs, list) and len(outs) == 1
    _close(outs[0], onp.tanh(X @ W.T + BIAS))


def _group():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    sp = mx.sym.split(fc, num_outputs=3, axis=1, name="sp")
    return mx.sym.Group([sp[2], fc * 2.0, sp[0], mx.sym.var("data")])


def _jnp_group(x, w, b):
    h = x @ w.T + b
    return h[:, 2:3], 2 * h, h[:, 0:1], x


def test_multi_output_group_forward_backward_and_internals():
    group = _group()
    ex = group.bind(mx.cpu(), {"data": X, "fc_weight": W, "fc_bias": BIAS})
    outs = ex.forward(is_train=True)
    want, vjp = jax.vjp(_jnp_group, X, W, BIAS)
    assert len(outs) == 4
    for got, ref in zip(outs, want):
        _close(got, onp.asarray(ref))
    assert list(ex.output_dict) == ["sp_output2", group.list_outputs()[1], "sp_output0", "data"]
    heads = [RNG.standard_normal(o.shape).astype("float32") for o in outs]
    ex.backward([mx.nd.array(h) for h in heads])
    for name, ref in zip(("data", "fc_weight", "fc_bias"), vjp(tuple(jnp.asarray(h) for h in heads))):
        _close(ex.grad_dict[name], onp.asarray(ref))
    inner = _dense_tanh().get_internals()["fc_output"]
    _close(inner.eval(data=X, fc_weight=W, fc_bias=BIAS)[0], X @ W.T + BIAS)


def test_float16_arguments():
    sym = mx.sym.Activation(mx.sym.var("a"), act_type="relu", name="r")
    ex = sym.simple_bind(mx.cpu(), type_dict={"a": "float16"}, a=(2, 3))
    assert ex.arg_dict["a"].dtype == onp.float16
    out = ex.forward(a=onp.array([[-1, 2, -3], [4, -5, 6]], "float16"))[0]
    assert out.dtype == onp.float16
    _close(out, onp.array([[0, 2, 0], [4, 0, 6]], "float16"))


def test_simple_bind_infers_parameter_dtypes():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    ex = fc.simple_bind(mx.cpu(), type_dict={"data": "float16"}, data=(2, 4))
    assert {n: a.dtype for n, a in ex.arg_dict.items()} == {n: onp.float16 for n in fc.list_arguments()}
    assert ex.forward()[0].dtype == onp.float16


def test_integer_argument_gets_no_gradient():
    emb = mx.sym.Embedding(mx.sym.var("data"), input_dim=5, output_dim=2, name="emb")
    assert emb.list_arguments() == ["data", "emb_weight"]
    table = onp.arange(10, dtype="float32").reshape(5, 2)
    idx = onp.array([0, 2, 2], "int32")
    ex = emb.bind(mx.cpu(), {"data": idx, "emb_weight": table})
    _close(ex.forward(is_train=True)[0], table[idx])
    ex.backward()
    want = onp.zeros_like(table)
    onp.add.at(want, idx, 1.0)
    _close(ex.grad_dict["emb_weight"], want)
    assert not ex.grad_dict["data"].asnumpy().any()


# ----------------------------------------------------------------------------- BatchNorm and aux states

def _bn_data():
    rng = onp.random.default_rng(1)
    x = (rng.standard_normal((4, 3, 2, 2)) * 2 + 1).astype("float32")
    gamma, beta = (rng.random(3) + 0.5).astype("float32"), rng.standard_normal(3).astype("float32")
    mean, var = rng.standard_normal(3).astype("float32"), (rng.random(3) + 0.5).astype("float32")
    return x, gamma, beta, mean, var


def _bn_ref(x, gamma, beta, mean, var, eps=1e-5):
    c = (None, slice(None), None, None)
    return (x - mean[c]) / onp.sqrt(var[c] + eps) * gamma[c] + beta[c]


def test_batchnorm_aux_states_inference_and_training():
    x, gamma, beta, mean, var = _bn_data()
    bn = mx.sym.BatchNorm(mx.sym.var("data"), fix_gamma=False, momentum=0.9, eps=1e-5, name="bn")
    ex = bn.bind(mx.cpu(), {"data": x, "bn_gamma": gamma, "bn_beta": beta},
                 aux_states={"bn_moving_mean": mean, "bn_moving_var": var})
    assert list(ex.aux_dict) == ["bn_moving_mean", "bn_moving_var"] and len(ex.aux_arrays) == 2
    _close(ex.forward(is_train=False)[0], _bn_ref(x, gamma, beta, mean, var))
    _close(ex.aux_dict["bn_moving_mean"], mean, 0)  # unchanged by inference
    _close(ex.aux_dict["bn_moving_var"], var, 0)
    out = ex.forward(is_train=True)[0]
    batch_mean, batch_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))  # biased variance
    _close(out, _bn_ref(x, gamma, beta, batch_mean, batch_var))
    _close(ex.aux_dict["bn_moving_mean"], 0.9 * mean + 0.1 * batch_mean)
    _close(ex.aux_dict["bn_moving_var"], 0.9 * var + 0.1 * batch_var)
    ex.backward()
    assert sorted(ex.grad_dict) == ["bn_beta", "bn_gamma", "data"]  # aux states get no gradient
    _close(ex.grad_dict["bn_beta"], onp.full(3, 16.0))  # d(sum out)/d beta = elements per channel


def test_conv_bn_relu_dense_matches_imperative_autograd():
    rng = onp.random.default_rng(2)
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn")
    net = mx.sym.Activation(net, act_type="relu", name="relu")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc")
    arg_shapes, out_shapes, _ = net.infer_shape(data=(2, 3, 4, 4))
    args = {n: rng.standard_normal(s).astype("float32") for n, s in zip(net.list_arguments(), arg_shapes)}
    aux = {"bn_moving_mean": onp.zeros(4, "float32"), "bn_moving_var": onp.ones(4, "float32")}
    ex = net.bind(mx.cpu(), args, aux_states=aux)
    head = rng.standard_normal(out_shapes[0]).astype("float32")
    out = ex.forward(is_train=True)[0]
    ex.backward(head)

    nd = {k: mx.nd.array(v) for k, v in args.items()}
    for v in nd.values():
        v.attach_grad()
    mean, var = mx.nd.array(aux["bn_moving_mean"]), mx.nd.array(aux["bn_moving_var"])
    with mx.autograd.record():
        h = mx.nd.Convolution(nd["data"], nd["conv_weight"], nd["conv_bias"], kernel=(3, 3), num_filter=4,
                              pad=(1, 1))
        h = mx.nd.BatchNorm(h, nd["bn_gamma"], nd["bn_beta"], mean, var, fix_gamma=False)
        y = mx.nd.FullyConnected(mx.nd.Activation(h, act_type="relu"), nd["fc_weight"], nd["fc_bias"],
                                 num_hidden=3)
    y.backward(mx.nd.array(head))
    _close(out, y.asnumpy(), 1e-4)
    for name, arr in nd.items():
        _close(ex.grad_dict[name], arr.grad.asnumpy(), 1e-4)
    _close(ex.aux_dict["bn_moving_mean"], mean.asnumpy())
    _close(ex.aux_dict["bn_moving_var"], var.asnumpy())


@pytest.mark.parametrize("pool_type", ["max", "avg"])
def test_backward_through_pooling(pool_type):
    x = onp.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    pool = mx.sym.Pooling(mx.sym.var("data"), kernel=(2, 2), stride=(2, 2), pool_type=pool_type, name="p")
    ex = pool.bind(mx.cpu(), {"data": x})
    ex.forward(is_train=True)
    ex.backward()
    want = onp.zeros_like(x)
    if pool_type == "max":
        want[0, 0, 1::2, 1::2] = 1
    else:
        want[:] = 0.25
    _close(ex.grad_dict["data"], want)


def test_dropout_in_training_and_inference():
    drop = mx.sym.Dropout(mx.sym.var("data"), p=0.5, name="drop")
    ex = drop.bind(mx.cpu(), {"data": onp.ones((4, 50), "float32")})
    onp.testing.assert_array_equal(ex.forward(is_train=False)[0].asnumpy(), 1)
    out = ex.forward(is_train=True)[0].asnumpy()
    assert set(onp.unique(out)) <= {0.0, 2.0} and 0.2 < (out == 0).mean() < 0.8
    ex.backward()
    onp.testing.assert_array_equal(ex.grad_dict["data"].asnumpy(), out)


# ----------------------------------------------------------------------------- MXNet fixtures

def test_multi_output_fixture_outputs():
    sym = mx.sym.load(str(_fixture("symbol", "multi_output-symbol.json")))
    io = onp.load(_fixture("symbol", "multi_output.io.npz"))
    args = {k[4:]: mx.nd.array(io[k]) for k in io.files if k.startswith("arg:")}
    aux = {k[4:]: mx.nd.array(io[k]) for k in io.files if k.startswith("aux:")}
    ex = sym.bind(mx.cpu(), args, aux_states=aux)
    outs = ex.forward(is_train=False)
    assert len(outs) == 4
    for i, out in enumerate(outs):
        _close(out, io[f"out{i}"])
    assert list(ex.output_dict) == ["r_output", "s_output", "sp_output1", "p_output"]


@pytest.mark.parametrize("name, params", [("tiny", "tiny-0000.params"), ("tiny_np", "tiny_np-0003.params")])
def test_gluon_export_fixture_outputs(name, params):
    sym = mx.sym.load(str(_fixture("gluon", f"{name}-symbol.json")))
    saved = mx.nd.load(str(_fixture("gluon", params)))
    args = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
    io = onp.load(_fixture("gluon", f"{name}.io.npz"))
    args["data"] = mx.nd.array(io["data"])
    ex = sym.bind(mx.cpu(), args, aux_states=aux, grad_req="null")
    _close(ex.forward(is_train=False)[0], io["output"])
    # the same through copy_params_from into a simple_bind executor
    ex2 = sym.simple_bind(mx.cpu(), grad_req="null", data=io["data"].shape)
    ex2.copy_params_from({k: v for k, v in args.items() if k != "data"}, aux)
    _close(ex2.forward(data=io["data"])[0], io["output"])
    with pytest.raises(MXNetValueError, match="unknown argument 'nope'"):
        ex2.copy_params_from({"nope": mx.nd.zeros(1)})
    ex2.copy_params_from({"nope": mx.nd.zeros(1)}, allow_extra_params=True)


# ----------------------------------------------------------------------------- errors

def test_bind_errors():
    sym = _dense_tanh()
    with pytest.raises(MXNetValueError, match=r"no array given for arguments \['fc_weight', 'fc_bias'\]"):
        sym.bind(mx.cpu(), {"data": X})
    with pytest.raises(MXNetValueError, match="unknown arguments"):
        sym.bind(mx.cpu(), {"data": X, "fc_weight": W, "fc_bias": BIAS, "extra": X})
    with pytest.raises(MXNetValueError, match="2 arguments given for 3"):
        sym.bind(mx.cpu(), [X, W])
    with pytest.raises(MXNetValueError, match=r"gradient for 'fc_weight' has shape \(5, 3\)"):
        sym.bind(mx.cpu(), {"data": X, "fc_weight": W, "fc_bias": BIAS}, args_grad={"fc_weight": mx.nd.zeros((5, 3))})
    bn = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    with pytest.raises(MXNetValueError, match="no array given for auxiliary states"):
        bn.bind(mx.cpu(), {"data": onp.ones((2, 3)), "bn_gamma": onp.ones(3), "bn_beta": onp.ones(3)})
    with pytest.raises(MXNetValueError, match="cannot infer all argument shapes"):
        sym.simple_bind(mx.cpu())


def test_forward_backward_errors():
    ex = _dense_tanh().bind(mx.cpu(), {"data": X, "fc_weight": W, "fc_bias": BIAS})
    with pytest.raises(MXNetError, match=r"forward\(is_train=True\) first"):
        ex.backward()
    ex.forward(is_train=False)
    with pytest.raises(MXNetError, match=r"forward\(is_train=True\) first"):
        ex.backward()
    with pytest.raises(MXNetValueError, match=r"'data' has shape \(2, 5\), the executor was bound with \(4, 5\)"):
        ex.forward(data=onp.zeros((2, 5), "float32"))
    with pytest.raises(MXNetValueError, match="'foo' is not an argument"):
        ex.forward(foo=X)
    ex.forward(is_train=True)
    with pytest.raises(MXNetValueError, match=r"output gradient 0 has shape \(2, 2\), output has \(4, 3\)"):
        ex.backward(mx.nd.zeros((2, 2)))
    with pytest.raises(MXNetValueError, match="2 output gradients for 1 outputs"):
        ex.backward([G, G])
    ex.backward(G)  # the failed calls left the executor usable
    _close(ex.grad_dict["fc_bias"], _ref_grads()["fc_bias"])


# ----------------------------------------------------------------------------- to_jaxpr

def test_to_jaxpr_evaluates_to_executor_output():
    x, gamma, beta, mean, var = _bn_data()
    net = mx.sym.Activation(mx.sym.BatchNorm(mx.sym.var("data"), fix_gamma=False, name="bn"),
                            act_type="relu", name="r") * 2.0
    values = {"data": x, "bn_gamma": gamma, "bn_beta": beta, "bn_moving_mean": mean, "bn_moving_var": var}
    specs = {k: jax.ShapeDtypeStruct(v.shape, jnp.float32) for k, v in values.items()}
    closed = net.to_jaxpr(**specs)
    assert isinstance(closed, jax.extend.core.ClosedJaxpr)
    # the jaxpr takes the flattened dict of inputs (pytree order: sorted names)
    leaves = jax.tree_util.tree_leaves(values)
    assert [tuple(a.shape) for a in closed.in_avals] == [v.shape for v in leaves]
    result = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
    ex = net.bind(mx.cpu(), {k: values[k] for k in net.list_arguments()},
                  aux_states={k: values[k] for k in net.list_auxiliary_states()})
    want = ex.forward(is_train=False)[0]
    assert len(result) == 1
    _close(onp.asarray(result[0]), want.asnumpy(), 1e-6)
    _close(want, 2 * onp.maximum(_bn_ref(x, gamma, beta, mean, var, eps=1e-3), 0))  # MXNet's default eps


def test_to_jaxpr_of_a_group_from_concrete_arrays():
    values = {"data": X, "fc_weight": W, "fc_bias": BIAS}
    closed = _group().to_jaxpr(**values)
    result = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *jax.tree_util.tree_leaves(values))
    assert len(result) == 4
    for got, want in zip(result, _jnp_group(X, W, BIAS)):
        _close(onp.asarray(got), onp.asarray(want))


def test_mxnet2_underscore_bind_names():
    """MXNet 2.0 names them ``_bind`` and ``_simple_bind``; both work beside the 1.x names."""
    a = mx.sym.var("a")
    out = (a * 2 + 1)._simple_bind(mx.cpu(), a=(3,))
    out.arg_dict["a"][:] = mx.np.array([1.0, 2.0, 3.0])
    onp.testing.assert_allclose(out.forward()[0].asnumpy(), [3.0, 5.0, 7.0])
    bound = (a * 2)._bind(mx.cpu(), {"a": mx.nd.array([1.0, 4.0])})
    onp.testing.assert_allclose(bound.forward()[0].asnumpy(), [2.0, 8.0])


# ----------------------------------------------------------------------------- array classes

def _kinds(symbol, np_inputs):
    """The classes an executor of ``symbol`` (on ``a``) gives: bind's outputs, eval's, and
    simple_bind's argument and outputs, each as 'np' or 'nd'."""
    def kind(x):
        return "np" if isinstance(x, mx.np.ndarray) else "nd" if isinstance(x, mx.nd.NDArray) else type(x)
    value = (mx.np if np_inputs else mx.nd).array([1.0, 2.0])
    bound = symbol.bind(mx.cpu(), {"a": value}).forward()
    evaluated = symbol.eval(mx.cpu(), a=value)
    allocated = symbol.simple_bind(mx.cpu(), a=(2,))
    return [kind(bound[0]), kind(evaluated[0]), kind(allocated.arg_dict["a"]), kind(allocated.forward()[0])]


@pytest.mark.parametrize("np_mode", [False, True])
def test_executors_give_arrays_of_the_symbols_semantics(np_mode):
    """As MXNet 2.0.0b1 gives them, with NumPy semantics on or off (checked there): a legacy symbol's
    executor gives mx.nd arrays (as 1.9.1's, whose symbols are all legacy), a NumPy symbol's
    (mx.sym.np, as_np_ndarray, the operators and methods of one) mx.np arrays; simple_bind allocates
    mx.nd arrays either way.  1.x code after an executor keeps its meaning (``out.reshape((0, -1))``)."""
    a = mx.sym.var("a")
    with mx.util.np_array(np_mode):
        assert _kinds(a * 2, np_mode) == ["nd", "nd", "nd", "nd"]
        assert _kinds(mx.sym.FullyConnected(a.reshape((1, 2)), num_hidden=1, no_bias=True,
                                            weight=mx.sym.ones((1, 2))), np_mode) == ["nd", "nd", "nd", "nd"]
        na = a.as_np_ndarray()
        numpy_symbols = (mx.sym.np.multiply(na, 2), na * 2, -na, (na + na).sum(), na.as_nd_ndarray().as_np_ndarray())
        for numpy_symbol in numpy_symbols:
            assert type(numpy_symbol).__name__ == "_Symbol"
            assert _kinds(numpy_symbol, np_mode) == ["np", "np", "nd", "np"]
        assert _kinds((na * 2).as_nd_ndarray(), np_mode) == ["nd", "nd", "nd", "nd"]
    out = (a * 2).bind(mx.cpu(), {"a": mx.nd.array([[1.0, 2.0], [3.0, 4.0]])}).forward()[0]
    assert out.reshape((0, -1)).shape == (2, 2)  # the legacy reshape code: 0 copies the dimension
    onp.testing.assert_allclose(out.argmax(axis=1).asnumpy(), [1.0, 1.0])
    assert out.argmax(axis=1).dtype == onp.float32  # legacy argmax gives floats; np's gives int64
    masked = mx.sym.contrib.boolean_mask(a, mx.sym.var("m"))  # a dynamic-shape graph, run in segments
    for symbol, want in ((masked, mx.nd.NDArray), (masked.as_np_ndarray(), mx.np.ndarray)):
        out = symbol.bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0, 3.0]), "m": mx.nd.array([1, 0, 1])}).forward()[0]
        assert type(out) is want
        onp.testing.assert_allclose(out.asnumpy(), [1.0, 3.0])

