"""Max pooling's gradient (mxjax/operator/_max_pool.py) against JAX's own gradient of
``reduce_window`` and, where a window holds its maximum twice, against MXNet's rule (the first
position in the window takes the whole gradient), imperative and through npx.pooling."""
import jax
import jax.numpy as jnp
import numpy as onp
from hypothesis import given, settings, strategies as st
from jax import lax

import mxjax as mx
from mxjax import autograd
from mxjax.operator._max_pool import max_pool


@settings(max_examples=30, deadline=None)
@given(nd=st.integers(1, 3), k=st.integers(1, 3), s=st.integers(1, 3), p=st.integers(0, 1),
       seed=st.integers(0, 2**16))
def test_gradient_equals_jax_reduce_window_gradient(nd, k, s, p, seed):
    rng = onp.random.default_rng(seed)
    shape = (2, 3) + tuple(int(v) for v in rng.integers(k + 1, 7, size=nd))
    x = jnp.asarray(rng.normal(size=shape).astype(onp.float32))  # distinct values: no ties
    window, strides = (1, 1) + (k,) * nd, (1, 1) + (s,) * nd
    padding = ((0, 0), (0, 0)) + ((p, p + 1),) * nd
    g = jnp.asarray(rng.normal(size=lax.reduce_window(x, -jnp.inf, lax.max, window, strides, padding).shape)
                    .astype(onp.float32))

    def ours(v):
        return (max_pool(v, -onp.inf, window, strides, padding) * g).sum()

    def theirs(v):
        return (lax.reduce_window(v, -jnp.inf, lax.max, window, strides, padding) * g).sum()

    onp.testing.assert_allclose(ours(x), theirs(x), rtol=1e-6)
    onp.testing.assert_allclose(jax.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(jax.jit(jax.grad(ours))(x), jax.grad(theirs)(x), rtol=1e-6, atol=1e-6)


def test_a_tie_gives_the_first_position_of_the_window_the_gradient():
    x = onp.array([[[[1.0, 5.0, 5.0, 0.0],
                     [5.0, 2.0, 3.0, 3.0]]]], dtype=onp.float32)  # windows 2x2 stride 2: max 5 twice, 3 twice
    data = mx.np.array(x)
    data.attach_grad()
    with autograd.record():
        out = mx.npx.pooling(data, kernel=(2, 2), stride=(2, 2), pool_type="max")
    out.backward(mx.np.array([[[[10.0, 20.0]]]]))
    want = onp.zeros_like(x)
    want[0, 0, 0, 1] = 10.0  # first 5 in row-major order of the first window
    want[0, 0, 0, 2] = 20.0  # the second window's max is 5 at (0, 2)
    onp.testing.assert_array_equal(out.asnumpy(), [[[[5.0, 5.0]]]])
    onp.testing.assert_array_equal(data.grad.asnumpy(), want)


def test_pooling_with_padding_gradient_matches_finite_differences():
    rng = onp.random.default_rng(3)
    x = rng.normal(size=(1, 2, 5, 5)).astype(onp.float64)
    data = mx.np.array(x, dtype="float64")
    data.attach_grad()
    with autograd.record():
        loss = (mx.npx.pooling(data, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max") ** 2).sum()
    loss.backward()

    def f(v):
        return float((mx.npx.pooling(mx.np.array(v, dtype="float64"), kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                     pool_type="max") ** 2).sum())
    eps, numeric = 1e-6, onp.zeros_like(x)
    for idx in onp.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (f(up) - f(down)) / (2 * eps)
    onp.testing.assert_allclose(data.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-6)


def test_forward_mode_and_second_derivatives_work():
    rng = onp.random.default_rng(5)
    x = jnp.asarray(rng.normal(size=(1, 1, 4, 4)).astype(onp.float32))
    t = jnp.asarray(rng.normal(size=(1, 1, 4, 4)).astype(onp.float32))
    window, strides, padding = (1, 1, 2, 2), (1, 1, 1, 1), ((0, 0), (0, 0), (0, 0), (0, 0))
    ours = lambda v: max_pool(v, -onp.inf, window, strides, padding)  # noqa: E731
    theirs = lambda v: lax.reduce_window(v, -jnp.inf, lax.max, window, strides, padding)  # noqa: E731
    onp.testing.assert_allclose(jax.jvp(ours, (x,), (t,))[1], jax.jvp(theirs, (x,), (t,))[1], rtol=1e-6)
    hess = jax.hessian(lambda v: (ours(v) ** 3).sum())(x)
    want = jax.hessian(lambda v: (theirs(v) ** 3).sum())(x)
    onp.testing.assert_allclose(hess, want, rtol=1e-5, atol=1e-5)
