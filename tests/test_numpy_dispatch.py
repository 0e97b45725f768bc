"""mx.numpy_dispatch_protocol: official NumPy calls on mx.np arrays run mx.np (oracle: NumPy on NumPy arrays)."""
import logging

import numpy as onp
import pytest

import mxjax as mx
from mxjax import numpy_dispatch_protocol as ndp

A = onp.array([[1.0, -2.0, 3.5], [0.25, 4.0, -1.5]])
B = onp.array([[2.0, 0.5, -1.0], [1.0, 3.0, 2.0]])


@pytest.mark.parametrize("call", [
    lambda m: m.mean(A_), lambda m: m.sum(A_, axis=0), lambda m: m.max(A_, axis=1), lambda m: m.argsort(A_),
    lambda m: m.concatenate([A_, B_], axis=0), lambda m: m.transpose(A_), lambda m: m.cumsum(A_),
    lambda m: m.dot(A_, B_.T), lambda m: m.clip(A_, -1, 1), lambda m: m.linalg.norm(A_),
    lambda m: m.where(A_ > 0, A_, B_), lambda m: m.std(A_), lambda m: m.tensordot(A_, B_.T, axes=1),
], ids=["mean", "sum", "max", "argsort", "concatenate", "transpose", "cumsum", "dot", "clip", "norm", "where",
        "std", "tensordot"])
def test_array_function_runs_mx_np(call):
    global A_, B_
    A_, B_ = mx.np.array(A, dtype="float64"), mx.np.array(B, dtype="float64")
    out = call(onp)
    assert isinstance(out, mx.np.ndarray)  # mx.np ran (NumPy would give numpy.ndarray)
    A_, B_ = A, B
    onp.testing.assert_allclose(out.asnumpy(), call(onp), rtol=1e-12)


def test_dispatch_table_uses_mx_np_functions():
    assert ndp._NUMPY_ARRAY_FUNCTION_DICT[onp.mean] is mx.np.mean
    assert ndp._NUMPY_ARRAY_FUNCTION_DICT[onp.linalg.norm] is mx.np.linalg.norm
    assert ndp._NUMPY_ARRAY_UFUNC_DICT["add"] is mx.np.add
    assert ndp._NUMPY_ARRAY_UFUNC_DICT[onp.true_divide.__name__] is mx.np.true_divide


def test_mixed_numpy_and_mx_arguments():
    out = onp.concatenate([A, mx.np.array(B, dtype="float64")])
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_array_equal(out.asnumpy(), onp.concatenate([A, B]))


@pytest.mark.parametrize("name", ["add", "multiply", "true_divide", "power", "maximum", "greater", "exp", "sqrt",
                                  "negative", "logical_and", "arctan2"])
def test_ufuncs_run_mx_np(name):
    ufunc = getattr(onp, name)
    a, b = onp.abs(A) + 0.5, onp.abs(B) + 0.25
    args = (a,) if ufunc.nin == 1 else (a, b)
    out = ufunc(*[mx.np.array(x, dtype="float64") for x in args])
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), ufunc(*args), rtol=1e-12)


def test_operators_between_numpy_and_mx_arrays():
    m = mx.np.array(B, dtype="float64")
    out = A + m  # numpy.ndarray.__add__ defers to the ufunc protocol
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_array_equal(out.asnumpy(), A + B)
    target = A.copy()
    target += m  # in place into a NumPy array: stays NumPy
    assert type(target) is onp.ndarray
    onp.testing.assert_array_equal(target, A + B)
    with pytest.raises(TypeError):
        onp.add.reduce(m)  # only __call__ is dispatched, as in MXNet


def test_unlisted_function_falls_back_to_numpy(caplog):
    m = mx.np.array(A, dtype="float64")
    with caplog.at_level(logging.WARNING):
        out = onp.fliplr(onp.rot90(m))
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_array_equal(out.asnumpy(), onp.fliplr(onp.rot90(A)))
    assert "np.rot90 is a fallback operator" in caplog.text
    assert bool(onp.allclose(m, A)) and not bool(onp.allclose(m, A + 1))


def test_fallback_refuses_autograd():
    m = mx.np.array(A)
    m.attach_grad()
    with mx.autograd.record():
        with pytest.raises(mx.MXNetError, match="Falling back to NumPy operator rot90 with autograd active"):
            onp.rot90(m)


def test_autograd_flows_through_dispatched_function():
    m = mx.np.array(A, dtype="float64")
    m.attach_grad()
    with mx.autograd.record():
        y = onp.sum(onp.multiply(m, m))
    y.backward()
    onp.testing.assert_allclose(m.grad.asnumpy(), 2 * A)


def test_protocol_decorators():
    calls = []

    @ndp.with_array_function_protocol
    def ok(x):
        calls.append(x)
        return "ignored"

    assert ok(3) is None and calls == [3]

    @ndp.with_array_ufunc_protocol
    def bad():
        raise KeyError("oops")

    with pytest.raises(RuntimeError, match="Running function bad with NumPy array ufunc protocol failed"):
        bad()


def test_lists_have_no_duplicates_and_every_name_exists_in_mx_np():
    assert ndp._find_duplicate(ndp._NUMPY_ARRAY_FUNCTION_LIST) is None
    assert ndp._find_duplicate(["a", "b", "a"]) == "a"
    for name in ndp._NUMPY_ARRAY_FUNCTION_LIST + ndp._NUMPY_ARRAY_UFUNC_LIST:
        assert ndp._lookup(mx.np, name) is not None, name
