"""mx.autograd: grad() with create_graph (second and higher derivatives) and custom Functions.

Oracles: ``jax.hessian``/``jax.grad``/``jax.jacfwd`` of the same math written with jnp,
and closed forms.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

from oracle import close, marked

import mxjax as mx
from mxjax import autograd as ag

pytestmark = pytest.mark.usefixtures("jax_x64")  # the jnp oracles compute in float64

np, npx = mx.np, mx.npx


_var, _close = marked, close  # an array marked for gradients; float64 comparison


_X0 = onp.array([0.3, -0.7, 1.1, 0.5, -1.4])
_M = onp.random.RandomState(5).randn(4, 5) * 0.5

# scalar functions of a vector, twice: with mx ops and with jnp
_SCALAR_FUNCTIONS = {
    "tanh_layer": (lambda x: np.tanh(np.matmul(np.array(_M, dtype="float64"), x)).sum() * (x * x).sum(),
                   lambda x: jnp.tanh(jnp.asarray(_M) @ x).sum() * (x * x).sum()),
    "log_sum_exp": (lambda x: np.log(np.exp(x * 1.5).sum()),
                    lambda x: jnp.log(jnp.exp(x * 1.5).sum())),
    "sin_product": (lambda x: (np.sin(x) * np.cos(x[::-1])).sum() + (x ** 3).sum() / 3,
                    lambda x: (jnp.sin(x) * jnp.cos(x[::-1])).sum() + (x ** 3).sum() / 3),
    "softmax_entropy": (lambda x: -(npx.softmax(x) * npx.log_softmax(x)).sum(),
                        lambda x: -(jax.nn.softmax(x) * jax.nn.log_softmax(x)).sum()),
}


@pytest.mark.parametrize("name", sorted(_SCALAR_FUNCTIONS))
def test_hessian_vector_product_matches_jax_hessian(name):
    mx_fn, jnp_fn = _SCALAR_FUNCTIONS[name]
    v0 = onp.array([1.0, -2.0, 0.5, 0.25, 3.0])
    x = _var(_X0)
    with ag.record():
        y = mx_fn(x)
        g = ag.grad(y, x, create_graph=True)
        hvp_head = (g * np.array(v0, dtype="float64")).sum()
    hvp_head.backward()
    hessian = jax.jit(jax.hessian(jnp_fn))(jnp.asarray(_X0))
    _close(g, jax.grad(jnp_fn)(jnp.asarray(_X0)))
    _close(x.grad, hessian @ v0)


@pytest.mark.parametrize("name", ["tanh_layer", "softmax_entropy"])
def test_full_hessian_row_by_row_with_retained_graph(name):
    mx_fn, jnp_fn = _SCALAR_FUNCTIONS[name]
    x = _var(_X0)
    with ag.record():
        g = ag.grad(mx_fn(x), x, create_graph=True)
    rows = []
    for i in range(len(_X0)):
        ag.backward(g, head_grads=np.array(onp.eye(len(_X0))[i], dtype="float64"), retain_graph=True)
        rows.append(x.grad.asnumpy().copy())
    _close(onp.stack(rows), jax.jit(jax.hessian(jnp_fn))(jnp.asarray(_X0)))


def test_hessian_diagonal_of_separable_function():
    x = _var(_X0)
    with ag.record():
        y = (np.exp(x * 0.5) + np.sin(x) * x).sum()
        g = ag.grad(y, x, create_graph=True)
        s = g.sum()  # the Hessian is diagonal, so grad of sum(g) is its diagonal
    s.backward()
    want = jnp.diag(jax.hessian(lambda v: (jnp.exp(v * 0.5) + jnp.sin(v) * v).sum())(jnp.asarray(_X0)))
    _close(x.grad, want)


def test_second_derivative_via_grad_of_grad():
    x = _var(_X0)
    with ag.record():
        y = (x ** 3 * np.tanh(x)).sum()
        g1 = ag.grad(y, x, create_graph=True)
        g2 = ag.grad(g1.sum(), x)
    want = jnp.diag(jax.hessian(lambda v: (v ** 3 * jnp.tanh(v)).sum())(jnp.asarray(_X0)))
    _close(g2, want)


@pytest.mark.parametrize("fn,jfn", [(lambda v: v ** 4, lambda v: v ** 4), (np.sin, jnp.sin)],
                         ids=["x**4", "sin"])
def test_third_derivative(fn, jfn):
    x = _var(_X0)
    with ag.record():
        g1 = ag.grad(fn(x).sum(), x, create_graph=True)
        g2 = ag.grad(g1.sum(), x, create_graph=True)
        g3 = g2.sum()
    g3.backward()
    d3 = jax.grad(jax.grad(jax.grad(jfn)))
    _close(x.grad, jax.vmap(d3)(jnp.asarray(_X0)))
    _close(g2, jax.vmap(jax.grad(jax.grad(jfn)))(jnp.asarray(_X0)))


def test_fourth_derivative_of_x4_is_constant_24():
    x = _var([0.5, 1.0, 2.0])
    with ag.record():
        g = (x ** 4).sum()
        for _ in range(3):
            g = ag.grad(g, x, create_graph=True).sum()
    g.backward()
    _close(x.grad, [24.0, 24.0, 24.0])


def test_create_graph_through_recorded_head_gradient():
    x0, v0 = onp.array([0.5, 1.0, 2.0]), onp.array([1.0, 2.0, 3.0])
    x, v = _var(x0), _var(v0)
    with ag.record():
        g = ag.grad(np.sin(x), x, head_grads=v, create_graph=True)  # v * cos(x)
        s = g.sum()
    s.backward()
    _close(g, v0 * onp.cos(x0))
    _close(v.grad, onp.cos(x0))
    _close(x.grad, -v0 * onp.sin(x0))


def test_second_derivative_through_multi_output_and_dynamic_shape_ops():
    x0 = onp.array([[1.0, -2.0, 3.0], [-4.0, 5.0, 0.5]])
    x = _var(x0)
    with ag.record():
        first, _, last = np.split(x, 3, axis=1)
        masked = x[x > 0]  # a dynamic-shape op on the path
        y = (first ** 3).sum() + (last * first).sum() + (masked ** 3).sum()
        g = ag.grad(y, x, create_graph=True)
        s = g.sum()
    s.backward()

    def ref(v):
        return (v[:, 0] ** 3).sum() + (v[:, 2] * v[:, 0]).sum() + (jnp.where(x0 > 0, v, 0.0) ** 3).sum()
    _close(g, jax.jit(jax.grad(ref))(jnp.asarray(x0)))
    _close(x.grad, jax.jit(jax.hessian(ref))(jnp.asarray(x0)).sum(axis=(0, 1)))


def test_grad_returns_single_array_or_list_and_leaves_grad_buffers_alone():
    x, w = _var([1.0, 2.0]), _var([3.0, 4.0])
    with ag.record():
        y = (x * w).sum()
    gx, gw = ag.grad(y, [x, w], retain_graph=True)
    single = ag.grad(y, x, retain_graph=True)
    listed = ag.grad(y, [x])
    assert isinstance(listed, list) and len(listed) == 1
    assert isinstance(single, mx.np.ndarray)
    _close(gx, [3.0, 4.0])
    _close(gw, [1.0, 2.0])
    _close(single, [3.0, 4.0])
    _close(listed[0], [3.0, 4.0])
    _close(x.grad, [0.0, 0.0])  # grad() returns gradients, it does not store them
    with pytest.raises(mx.MXNetError, match="already freed"):
        ag.grad(y, x)  # retain_graph defaults to create_graph (False): the last call freed it


def test_grad_create_graph_retains_the_graph_by_default():
    x = _var([1.0, 2.0])
    with ag.record():
        y = (x ** 3).sum()
        first = ag.grad(y, x, create_graph=True)
    second = ag.grad(y, x)
    _close(first, [3.0, 12.0])
    _close(second, [3.0, 12.0])


# ----------------------------------------------------------------------------- custom Functions

class _Sigmoid(ag.Function):
    def forward(self, x):
        y = 1 / (1 + np.exp(-x))
        self.save_for_backward(y)
        return y

    def backward(self, dy):
        y, = self.saved_tensors
        return dy * y * (1 - y)


def test_custom_sigmoid_matches_jax():
    x0 = onp.array([-3.0, -0.5, 0.0, 0.7, 2.5])
    x = _var(x0)
    weights = onp.array([1.0, 2.0, -1.0, 0.5, 3.0])
    with ag.record():
        y = _Sigmoid()(x)
        loss = (y * y * np.array(weights, dtype="float64")).sum()
    loss.backward()
    _close(y, jax.nn.sigmoid(x0))
    _close(x.grad, jax.grad(lambda v: (jax.nn.sigmoid(v) ** 2 * weights).sum())(jnp.asarray(x0)))


def test_custom_function_outside_record_is_just_forward():
    x = _var([0.0, 1.0])
    y = _Sigmoid()(x)
    assert y._ag is None
    _close(y, jax.nn.sigmoid(onp.array([0.0, 1.0])))


class _ProductAndSum(ag.Function):
    """Two inputs, two outputs: (a * b, a + b)."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b, a + b

    def backward(self, d_product, d_sum):
        a, b = self.saved_tensors
        return d_product * b + d_sum, d_product * a + d_sum


def _jnp_product_and_sum(a, b):
    return (a * b) ** 2 + jnp.sin(a + b)


@pytest.mark.parametrize("use_sum", [True, False], ids=["both_outputs", "one_output_unused"])
def test_custom_function_two_inputs_two_outputs(use_sum):
    a0, b0 = onp.array([1.0, -2.0, 0.5]), onp.array([3.0, 0.25, -1.0])
    a, b = _var(a0), _var(b0)
    with ag.record():
        product, total = _ProductAndSum()(a, b)
        loss = (product * product).sum() + (np.sin(total).sum() if use_sum else 0)
    loss.backward()

    def ref(p, q):
        return ((p * q) ** 2).sum() + (jnp.sin(p + q).sum() if use_sum else 0)
    want_a, want_b = jax.grad(ref, argnums=(0, 1))(jnp.asarray(a0), jnp.asarray(b0))
    _close(a.grad, want_a)
    _close(b.grad, want_b)


def test_custom_function_with_a_constant_input():
    a, c = _var([1.0, 2.0]), np.array([5.0, 7.0], dtype="float64")  # c has no gradient
    with ag.record():
        product, _ = _ProductAndSum()(a, c)
    product.backward()
    _close(a.grad, [5.0, 7.0])


def test_custom_function_graph_is_freed_after_backward():
    x = _var([0.0, 1.0])
    with ag.record():
        y = _Sigmoid()(x)
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(mx.MXNetError, match="graph through _Sigmoid was already freed"):
        y.backward()


class _WrongCount(ag.Function):
    def forward(self, a, b):
        return a * b

    def backward(self, dy):
        return dy  # one gradient for two inputs


class _NoForward(ag.Function):
    pass


class _ReturnsNumbers(ag.Function):
    def forward(self, x):
        return 3.0


def test_custom_function_bad_definitions_raise():
    a, b = _var([1.0, 2.0]), _var([3.0, 4.0])
    with ag.record():
        y = _WrongCount()(a, b)
    with pytest.raises(mx.MXNetError, match="_WrongCount.backward returned 1 gradients for 2 inputs"):
        y.backward()
    with ag.record():
        with pytest.raises(mx.MXNetError, match="_NoForward must define forward"):
            _NoForward()(a)
        with pytest.raises(mx.MXNetError, match="_ReturnsNumbers.forward must return NDArrays, got float"):
            _ReturnsNumbers()(a)
