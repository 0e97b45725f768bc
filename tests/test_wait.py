"""Reads poll a running program briefly before blocking (``mxjax._wait``): values and errors as
before, for programs shorter and longer than the polling, and no stall for a program whose
host callback needs the Python lock the polling thread holds between polls."""
from __future__ import annotations

import threading

import numpy as onp
import pytest

import mxjax as mx
from mxjax import gluon

pytestmark = pytest.mark.timeout(120)


class _Halve(mx.operator.CustomOp):
    """Runs on the host, inside the compiled program (a callback that needs the Python lock)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 0.5)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 0.5)


@mx.operator.register("test_wait_halve")
class _HalveProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Halve()


class _MatmulCallbackMatmul(gluon.HybridBlock):
    def forward(self, x):
        y = mx.np.matmul(x, x) / x.shape[0]
        return mx.np.matmul(mx.nd.Custom(y, op_type="test_wait_halve"), x) / x.shape[0]


def _chain(x):
    for _ in range(10):
        x = x * 1.0001 + 0.0001
    return x


def test_short_and_long_programs_read_their_values():
    host = onp.linspace(-1, 1, 100, dtype=onp.float32)
    expected = host.astype(onp.float64)
    for _ in range(10):
        expected = expected * 1.0001 + 0.0001
    x = mx.np.array(host)
    for _ in range(5):  # recorded, then compiled: a program of ~2000 flops runs on XLA's worker thread
        onp.testing.assert_allclose(_chain(x).asnumpy(), expected, rtol=1e-6)
    big = onp.random.default_rng(0).standard_normal((700, 700)).astype(onp.float32)
    a = mx.np.array(big)
    for _ in range(3):  # far longer than the polling: blocks after it
        product = mx.np.matmul(mx.np.matmul(a, a), a)
        product.wait_to_read()
        onp.testing.assert_allclose(product.asnumpy()[:2, :2], ((big @ big) @ big)[:2, :2], rtol=2e-3, atol=2e-2)
    for _ in range(20):  # and short reads after long ones still get their values
        onp.testing.assert_allclose(_chain(x).asnumpy(), expected, rtol=1e-6)


def test_a_program_calling_back_into_python_is_read_without_stalling():
    block = _MatmulCallbackMatmul()
    block.hybridize()
    host = onp.random.default_rng(1).standard_normal((300, 300)).astype(onp.float32)
    x = mx.np.array(host)
    expected = ((host @ host) / 300 * 0.5) @ host / 300
    results = []

    def reads():
        for _ in range(5):
            results.append(block(x).asnumpy())

    thread = threading.Thread(target=reads)
    thread.start()
    reads()  # two threads polling and blocking while callbacks wait for the Python lock
    thread.join(60)
    assert not thread.is_alive()
    assert len(results) == 10
    for got in results:
        onp.testing.assert_allclose(got, expected, rtol=2e-3, atol=1e-3)
