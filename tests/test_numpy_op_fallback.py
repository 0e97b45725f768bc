"""mx.numpy_op_fallback: MXNet's four NumPy-fallback custom ops (oracle: NumPy)."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import numpy_op_fallback as fb


def test_registered_as_custom_ops():
    for name in ("empty_like_fallback", "resize_fallback", "unravel_index_fallback", "mvn_fallback"):
        assert callable(getattr(fb._nd_npi, name)) and callable(getattr(fb._sym_npi, name))


def test_resize_matches_numpy():
    a = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=onp.float32)
    out = mx.nd.Custom(mx.nd.array(a), op_type="resize_fallback", new_shape=(4, 4))
    onp.testing.assert_array_equal(out.asnumpy(), onp.resize(a, (4, 4)))
    out = fb._nd_npi.resize_fallback(mx.np.array(a), new_shape=5)
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_array_equal(out.asnumpy(), onp.resize(a, 5))


def test_unravel_index_matches_numpy():
    idx = onp.array([1, 5, 11], dtype=onp.int64)
    out = mx.nd.Custom(mx.nd.array(idx, dtype="int64"), op_type="unravel_index_fallback", shape=(3, 4))
    onp.testing.assert_array_equal(out.asnumpy(), onp.stack(onp.unravel_index(idx, (3, 4))))


def test_empty_like_shape_and_dtype():
    proto = mx.np.ones((2, 3), dtype="float32")
    out = fb._nd_npi.empty_like_fallback(proto, dtype="float64", order="C", subok="False", shape="None")
    assert out.shape == (2, 3) and out.dtype == onp.float64
    same = fb._nd_npi.empty_like_fallback(proto, dtype="None", order="C", subok="False", shape="None")
    assert same.dtype == onp.float32
    with pytest.raises(mx.MXNetError, match="Custom operator 'empty_like_fallback': backward raised NotImplementedError"):
        proto.attach_grad()
        with mx.autograd.record():
            y = fb._nd_npi.empty_like_fallback(proto, dtype="None", order="C", subok="False", shape="None")
        y.backward()


def test_multivariate_normal_statistics():
    """Sample mean and covariance are the parameters' (MXNet 2.0's fallback gets the covariance wrong)."""
    mx.np.random.seed(3)
    mean = onp.array([1.0, -2.0])
    cov = onp.array([[2.0, 0.6], [0.6, 1.0]])
    out = fb._nd_npi.mvn_fallback(mx.np.array(mean, dtype="float64"), mx.np.array(cov, dtype="float64"),
                                  size=(20000,))
    assert out.shape == (20000, 2)
    samples = out.asnumpy()
    onp.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.05)
    onp.testing.assert_allclose(onp.cov(samples.T), cov, atol=0.08)


def test_multivariate_normal_shape_errors_and_symbol():
    with pytest.raises(ValueError, match="mean and cov must have same length"):
        fb._nd_npi.mvn_fallback(mx.np.zeros(3), mx.np.eye(2))
    sym = fb._sym_npi.mvn_fallback(mx.sym.var("m"), mx.sym.var("c"), size=(4,))
    assert sym.infer_shape(m=(2,), c=(2, 2))[1] == [(4, 2)]


def test_register_refuses_duplicates():
    with pytest.raises(ValueError, match="Duplicate name resize_fallback"):
        fb.register("resize_fallback")(fb.ResizeProp)
