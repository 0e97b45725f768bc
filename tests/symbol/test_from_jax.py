"""JAX -> Symbol (mx.sym.from_jax) and Symbol -> jaxpr: values and gradients survive both ways."""
import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax as mx

RNG = onp.random.default_rng(0)
X = RNG.normal(size=(4, 3)).astype(onp.float32)
W = RNG.normal(size=(3, 5)).astype(onp.float32)


def mlp(x, w):
    h = jax.nn.relu(x @ w)
    return jax.nn.log_softmax(h, axis=-1).sum(axis=1) * 0.5


def test_from_jax_matches_jax_values_and_gradients():
    sym, consts = mx.sym.from_jax(mlp, X, W, names=["x", "w"])
    assert sym.list_arguments() == ["x", "w"] and consts == {}
    ex = sym.bind(mx.cpu(), {"x": mx.np.array(X), "w": mx.np.array(W)})
    (out,) = ex.forward(is_train=True)
    onp.testing.assert_allclose(out.asnumpy(), onp.asarray(mlp(X, W)), rtol=1e-5)
    ex.backward()
    gx, gw = jax.grad(lambda x, w: mlp(x, w).sum(), argnums=(0, 1))(X, W)
    onp.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), onp.asarray(gx), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(ex.grad_dict["w"].asnumpy(), onp.asarray(gw), rtol=1e-5, atol=1e-6)
    assert sym.infer_shape(x=(4, 3), w=(3, 5))[1] == [(4,)]


def test_closed_over_arrays_become_constants():
    bias = jnp.arange(5.0, dtype=jnp.float32)
    sym, consts = mx.sym.from_jax(lambda x: jnp.tanh(x @ W + bias), X, names=["x"])
    assert set(consts) <= set(sym.list_arguments()) and "x" in sym.list_arguments()
    values = {k: mx.np.array(onp.asarray(v)) for k, v in consts.items()}
    (out,) = sym.eval(x=mx.np.array(X), **values)
    onp.testing.assert_allclose(out.asnumpy(), onp.tanh(X @ W + onp.arange(5.0)), rtol=1e-5)


def test_round_trip_through_jaxpr():
    sym, _ = mx.sym.from_jax(mlp, X, W, names=["x", "w"])
    closed = sym.to_jaxpr(x=jax.ShapeDtypeStruct(X.shape, X.dtype), w=jax.ShapeDtypeStruct(W.shape, W.dtype))
    leaves = jax.tree_util.tree_leaves({"w": W, "x": X})
    (got,) = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, *leaves)
    onp.testing.assert_allclose(onp.asarray(got), onp.asarray(mlp(X, W)), rtol=1e-5)


def test_graphs_from_jax_have_no_json_form():
    sym, _ = mx.sym.from_jax(mlp, X, W)
    with pytest.raises(mx.MXNetError, match="no MXNet JSON form"):
        sym.tojson()
    with pytest.raises(mx.MXNetError, match="names for 2 flattened inputs"):
        mx.sym.from_jax(mlp, X, W, names=["only_one"])
