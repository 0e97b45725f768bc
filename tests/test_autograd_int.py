"""Gradients of integer variables: MXNet 2.0 gives them in the variable's dtype.

The expected values were produced by MXNet 2.0.0b1 with the same expressions on x = [1, 2, 3]
(int32 and int64 gave the same).  Cases MXNet 2.0 rejects or gets wrong are marked: there the
expected value is the float gradient truncated toward zero, as MXNet does for the cases it runs.
"""
import numpy as onp
import pytest

from mxjax import autograd, gluon
from mxjax import np as mnp

pytestmark = pytest.mark.usefixtures("tape_recorders")  # the C and the Python recorder

CASES = {  # name: (expression, gradient at x = [1, 2, 3])
    "mul": (lambda x: (x * x).sum(), [2, 4, 6]),
    "add": (lambda x: (x + x).sum(), [2, 2, 2]),
    "add_const": (lambda x: (x + 5).sum(), [1, 1, 1]),
    "mul_const": (lambda x: (x * 3).sum(), [3, 3, 3]),
    "sum": (lambda x: x.sum(), [1, 1, 1]),
    "neg": (lambda x: (-x * x).sum(), [-2, -4, -6]),
    "sub": (lambda x: (x - 2 * x * x).sum(), [-3, -7, -11]),
    "square": (lambda x: mnp.square(x).sum(), [2, 4, 6]),
    "power": (lambda x: (x ** 2).sum(), [2, 4, 6]),
    "outer": (lambda x: (x.reshape(3, 1) * x.reshape(1, 3)).sum(), [12, 12, 12]),
    "slice": (lambda x: x[1:].sum(), [0, 1, 1]),
    "index": (lambda x: x[1] * x[2], [0, 3, 2]),
    "max": (lambda x: mnp.max(x), [0, 0, 1]),
    "no_head_grad": (lambda x: x * x, [2, 4, 6]),
    # float-valued results: the gradient truncates where it enters the integers
    "mean": (lambda x: x.mean(), [0, 0, 0]),
    "astype": (lambda x: (x.astype("float32") * 2.5).sum(), [2, 2, 2]),
    "astype_weights": (lambda x: (x.astype("float32") * mnp.array([0.5, 1.5, 2.7])).sum(), [0, 1, 2]),
    # integer-valued results: zero gradient, as in MXNet
    "argmax": (lambda x: mnp.argmax(x), [0, 0, 0]),
    "compare": (lambda x: (x > 1).sum(), [0, 0, 0]),
    # MXNet 2.0 raises "only support floating point types" (dot, take) or fails in a backward kernel
    # (true_divide, exp, where): the truncated float gradients instead
    "dot": (lambda x: mnp.dot(x, x), [2, 4, 6]),
    "take": (lambda x: mnp.take(x, mnp.array([0, 0, 2], dtype="int32")).sum(), [2, 0, 1]),
    "true_divide": (lambda x: (x / 2).sum(), [0, 0, 0]),
    "exp": (lambda x: mnp.exp(x).sum(), [2, 7, 20]),  # e, e^2, e^3 truncated
    "where": (lambda x: mnp.where(x > 1, x * x, x).sum(), [1, 4, 6]),
    # an op mixing integer and float operands gives the integer side no gradient (MXNet 2.0's
    # mixed add/subtract/multiply/divide), unlike an explicit astype (astype_weights above)
    "mixed_mul": (lambda x: (x * mnp.array([0.5, 1.5, 2.5])).sum(), [0, 0, 0]),
    "mixed_add": (lambda x: (mnp.array([0.5, 1.5, 2.5]) + x).sum(), [0, 0, 0]),
    "mixed_sub": (lambda x: (mnp.array([0.5, 1.5, 2.5]) - x).sum(), [0, 0, 0]),
}


# every case in int32; the other widths on a few (the rules do not depend on the width, the casts do)
_WIDTHS = [(name, "int32") for name in sorted(CASES)] + [
    (name, dtype) for name in ("mul", "mean", "exp", "take") for dtype in ("int64", "int8")]


@pytest.mark.parametrize("name, dtype", _WIDTHS)
def test_backward_integer_variable(name, dtype):
    fn, expected = CASES[name]
    x = mnp.array([1, 2, 3], dtype=dtype)
    x.attach_grad()
    with autograd.record():
        y = fn(x)
    y.backward()
    assert x.grad.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(x.grad.asnumpy(), onp.array(expected, dtype))


def test_forward_values_stay_integer():
    x = mnp.array([2**20 + 1, 3], dtype="int32")  # x*x overflows int32: the values are the integers'
    x.attach_grad()
    with autograd.record():
        y = x * x
    assert y.dtype == onp.int32
    onp.testing.assert_array_equal(y.asnumpy(), onp.array([2**20 + 1, 3], onp.int32) ** 2)
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [2 * (2**20 + 1), 6])


def test_grad_req_add_and_autograd_grad():
    x = mnp.array([1, 2, 3], dtype="int32")
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = (x * x).sum()
        y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [4, 8, 12])
    with autograd.record():
        y = (x * x * x).sum()
    g = autograd.grad(y, [x])
    assert g[0].dtype == onp.int32
    onp.testing.assert_array_equal(g[0].asnumpy(), [3, 12, 27])


def test_second_derivative_of_integer_variable():
    # MXNet 2.0 cannot (its _backward_npi_broadcast_mul has no gradient): d/dx sum(3x^2) = 6x
    x = mnp.array([1, 2, 3], dtype="int32")
    x.attach_grad()
    with autograd.record():
        y = (x * x * x).sum()
        g = autograd.grad(y, x, create_graph=True)
        z = g.sum()
    z.backward()
    onp.testing.assert_array_equal(g.asnumpy(), [3, 12, 27])
    onp.testing.assert_array_equal(x.grad.asnumpy(), [6, 12, 18])


def test_integer_indices_from_float_argmax_stay_untouched():
    w = mnp.array([[0.1, 0.9], [0.8, 0.2]])
    w.attach_grad()
    with autograd.record():
        idx = mnp.argmax(w, axis=1)
        y = (mnp.take(w.reshape(-1), idx) * 2).sum() + (w * 0).sum()
    y.backward()
    onp.testing.assert_allclose(w.grad.asnumpy(), [[2, 2], [0, 0]])  # flat positions 1 and 0


class _Poly(gluon.HybridBlock):
    def forward(self, x):
        return x * x + 3 * x


@pytest.mark.parametrize("hybridize", [False, True])
def test_block_with_integer_input(hybridize):
    # MXNet 2.0: [5, 7, 9] (2x + 3) both ways; through astype(float32) * 0.5 the 0.5 cotangent
    # truncates to 0 where it enters the block's int32 output
    net = _Poly()
    if hybridize:
        net.hybridize()
    x = mnp.array([1, 2, 3], dtype="int32")
    x.attach_grad()
    for _ in range(2):  # the second call runs the cached (fused) program
        with autograd.record():
            y = net(x).sum()
        y.backward()
        assert int(y) == 32
        onp.testing.assert_array_equal(x.grad.asnumpy(), [5, 7, 9])
        assert x.grad.dtype == onp.int32
    with autograd.record():
        y = (net(x).astype("float32") * 0.5).sum()
    y.backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0])
    with autograd.record():
        y = net(x)
    onp.testing.assert_array_equal(autograd.grad(y, x).asnumpy(), [5, 7, 9])


def test_block_mixing_integer_and_float_inputs():
    # MXNet 2.0 (hybridized or not): x.grad [0, 0, 0] (mixed multiply), w.grad [1, 2, 3]
    class Scale(gluon.HybridBlock):
        def forward(self, x, w):
            return (x * w).sum()

    net = Scale()
    net.hybridize()
    x = mnp.array([1, 2, 3], dtype="int32")
    w = mnp.array([0.5, 1.5, 2.5])
    x.attach_grad()
    w.attach_grad()
    for _ in range(2):
        with autograd.record():
            y = net(x, w)
        y.backward()
        onp.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0])
        onp.testing.assert_allclose(w.grad.asnumpy(), [1, 2, 3])
