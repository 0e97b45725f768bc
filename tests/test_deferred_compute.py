"""Deferred compute: the same code run eagerly, lazily, and through the exported Symbol agrees."""
import numpy as onp
import pytest
from oracle import compilations

import mxjax as mx
from mxjax import _deferred_compute as dc
from mxjax import np, npx

RNG = onp.random.default_rng(0)
A = RNG.normal(size=(3, 4)).astype(onp.float32)
B = RNG.normal(size=(4,)).astype(onp.float32)


def _check_modes(fn, *values):
    """fn(*arrays) eagerly == under deferred compute (lazy, then computed) == the exported symbol's eval."""
    values = values[:fn.__code__.co_argcount]
    eager = fn(*[np.array(v) for v in values])
    eager = eager if isinstance(eager, (list, tuple)) else [eager]
    arrays = [np.array(v) for v in values]
    names = [f"in{i}" for i in range(len(values))]
    with dc.context():
        dc.set_variable(arrays, [mx.sym.var(n) for n in names])
        lazy = fn(*arrays)
        lazy = lazy if isinstance(lazy, (list, tuple)) else [lazy]
        for e, x in zip(eager, lazy):
            assert x.shape == e.shape and x.dtype == e.dtype   # known from inference, nothing computed
        sym = dc.get_symbol(lazy)
    for e, x in zip(eager, lazy):
        onp.testing.assert_allclose(x.asnumpy(), e.asnumpy(), rtol=1e-5, atol=1e-6)
    outs = sym.eval(**dict(zip(names, arrays)))
    for e, o in zip(eager, outs):
        onp.testing.assert_allclose(o.asnumpy(), e.asnumpy(), rtol=1e-5, atol=1e-6)
    # and through JSON
    outs = mx.sym.fromjson(sym.tojson()).eval(**dict(zip(names, arrays)))
    for e, o in zip(eager, outs):
        onp.testing.assert_allclose(o.asnumpy(), e.asnumpy(), rtol=1e-5, atol=1e-6)
    return sym


@pytest.mark.parametrize("fn", [
    lambda a, b: a + b,
    lambda a, b: np.sin(a) * b - 2.0,
    lambda a, b: (a @ b).sum(),
    lambda a: np.concatenate([a, a], axis=0).mean(axis=1),
    lambda a, b: npx.softmax(a * b, axis=-1),
    lambda a: np.maximum(a, 0).reshape(2, 6).T,
    lambda a, b: [a.max(axis=0), np.exp(b) / 3],
    lambda a, b: a[1:, ::2] + b[1::2],
    lambda a: np.split(a, 2, axis=1)[1] * 2,
    lambda a: npx.relu(npx.fully_connected(a, np.ones((5, 4)), np.zeros(5), num_hidden=5, no_bias=False)),
], ids=lambda f: "fn")
def test_modes_agree_np(fn):
    _check_modes(fn, A, B)


def test_modes_agree_legacy_nd():
    def fn(a):
        a = a.as_nd_ndarray()
        return mx.nd.broadcast_add(mx.nd.FullyConnected(a, mx.nd.ones((2, 4)), num_hidden=2, no_bias=True),
                                   mx.nd.ones((1, 2)))
    _check_modes(fn, A, B)


def test_graph_without_inputs():
    with dc.context():
        r = np.arange(6).reshape(2, 3) * 2
        sym = dc.get_symbol(r)
    assert sym.list_arguments() == []
    onp.testing.assert_array_equal(sym.eval()[0].asnumpy(), onp.arange(6).reshape(2, 3) * 2)
    onp.testing.assert_array_equal(r.asnumpy(), onp.arange(6).reshape(2, 3) * 2)


def test_lazy_until_needed_and_computed_on_use_outside():
    a = np.array(A)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        y = np.tanh(a) * 3
        assert dc.is_deferred_compute()
        assert y._var is not None and y.shape == (3, 4)   # still lazy
    assert not dc.is_deferred_compute()
    z = y + 1   # an op outside deferred compute computes y first
    onp.testing.assert_allclose(z.asnumpy(), onp.tanh(A) * 3 + 1, rtol=1e-6)
    assert repr(y).startswith("array(")


def test_dynamic_shape_op_is_computed_at_once_and_recorded():
    a = np.array(A)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        picked = a[a > 0]
        assert picked.shape == (int((A > 0).sum()),)
        total = picked.sum()
        sym = dc.get_symbol(total)
    onp.testing.assert_allclose(sym.eval(a=a)[0].asnumpy(), A[A > 0].sum(), rtol=1e-5)


def test_inplace_on_lazy_arrays_is_an_error():
    a = np.array(A)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        y = a * 2
        with pytest.raises(mx.MXNetError, match="in-place operations"):
            y += 1
        with pytest.raises(mx.MXNetError, match="in-place operations"):
            y[0] = 1.0


def test_get_symbol_errors():
    a, b = np.array(A), np.array(B)
    with dc.context():
        y = a * 2   # a has no variable
        with pytest.raises(mx.MXNetError, match="not given a variable"):
            dc.get_symbol(y)
    with dc.context():
        dc.set_variable([a, b], [mx.sym.var("a"), mx.sym.var("b")])
        y = a * 2
        with pytest.raises(mx.MXNetError, match=r"\['b'\] are not connected"):
            dc.get_symbol(y)
    with pytest.raises(mx.MXNetError, match="not computed under deferred compute"):
        dc.get_symbol(np.ones(2))


def test_shape_errors_are_raised_while_recording():
    a = np.array(A)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        with pytest.raises(ValueError, match="add: operands could not be broadcast"):
            a + np.ones((5,))


def test_clear_and_context_off():
    a = np.array(A)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        y = a + 1
        dc.clear([y, a])
        assert y._dc is None and a._dc is None
        with dc.context(False):
            z = a * 2   # runs eagerly
            assert z._dc is None
    onp.testing.assert_allclose(y.asnumpy(), A + 1)


def test_random_ops_take_the_callers_key_and_the_graph_has_no_key_input():
    x = np.ones((2, 3))
    with dc.context():
        dc.set_variable(x, mx.sym.var("x"))
        z = x + np.random.uniform(size=(2, 3))
        sym = dc.get_symbol(z)
    values = z.asnumpy()
    assert sym.list_inputs() == ["x"] and ((values >= 1) & (values < 2)).all()


def test_hybridized_dropout_in_training_masks_values_and_gradients():
    from mxjax.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(5, in_units=3, weight_initializer=mx.init.One(), bias_initializer=mx.init.One()),
            nn.Dropout(0.5))
    net.initialize()
    net.hybridize()
    x = np.ones((64, 3))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    kept = y.asnumpy() != 0
    onp.testing.assert_allclose(y.asnumpy()[kept], 8.0)  # (3 + 1) / (1 - p)
    assert 0.3 < kept.mean() < 0.7
    onp.testing.assert_allclose(net[0].weight.grad().asnumpy(), 2.0 * kept.sum(axis=0)[:, None] * onp.ones((1, 3)))


def test_reading_values_under_deferred_compute_compiles_once_per_structure():
    """A read under deferred compute replays the pending graph as imperative ops (bulk execution):
    once its structure has been seen, later reads of the same structure compile nothing."""
    def read(i: int) -> None:
        x = mx.np.array(onp.arange(4, dtype="float32") + i)
        with dc.context():
            y = mx.np.exp(x) * x + mx.np.sin(x)
            got = y.asnumpy()
        want = onp.exp(x.asnumpy()) * x.asnumpy() + onp.sin(x.asnumpy())
        onp.testing.assert_allclose(got, want, rtol=1e-6)

    with compilations() as compiles:
        for i in range(3):  # first sightings: op by op, then the segment's program
            read(i)
        seen = len(compiles)
        for i in range(3, 6):
            read(i)
        assert len(compiles) == seen, compiles[seen:]
