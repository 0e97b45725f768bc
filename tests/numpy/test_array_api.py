"""MXNet 2.0's Array-API-era additions to mx.np: the utils/type_functions/set_functions/io/arrayprint/
function_base/stride_tricks modules, from_dlpack, the mx.np.linalg Array API names and the new
mx.np.ndarray methods -- against NumPy and MXNet 2.0's documented behaviour."""
import io
import math

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, np

RNG = onp.random.default_rng(11)
M = RNG.normal(size=(3, 4)).astype(onp.float32)
S = RNG.normal(size=(2, 3, 3)).astype(onp.float32)


def _same(got, want, rtol=1e-5):
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=1e-6)


def test_constants_and_dtype_groups():
    assert math.isnan(np.NAN) and math.isnan(np.NaN)
    assert np.PINF == math.inf and np.NINF == -math.inf
    assert np.PZERO == 0.0 and math.copysign(1.0, np.NZERO) == -1.0
    assert np.integer_dtypes == [onp.dtype(t) for t in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                                         "uint32", "uint64")]
    assert np.floating_dtypes == [onp.dtype("float16"), onp.dtype("float32"), onp.dtype("float64")]
    assert np.numeric_dtypes == np.integer_dtypes + np.floating_dtypes
    assert np.boolean_dtypes == [onp.dtype("bool")]
    assert np.utils.pi == onp.pi and np.utils.bool is onp.bool_ and np.utils.py_bool is bool


TF = np.type_functions  # MXNet 2.0 binds these as mx.np.finfo/iinfo/can_cast/result_type too


def test_type_functions():
    info = TF.finfo(np.float32)
    assert info == (32, float(onp.finfo(onp.float32).eps), float(onp.finfo(onp.float32).max),
                    float(onp.finfo(onp.float32).min), float(onp.finfo(onp.float32).tiny))
    assert info.smallest_normal == float(onp.finfo(onp.float32).tiny)
    assert TF.finfo(np.ones(2, dtype="float16")).bits == 16
    assert TF.iinfo("int8") == (8, 127, -128) and TF.iinfo(np.int64).max == 2 ** 63 - 1
    assert TF.can_cast(np.ones(2), "float64") and not TF.can_cast("float64", np.int32)


@pytest.mark.parametrize("a,b,want", [
    ("int8", "uint8", "int16"), ("int16", "uint32", "int64"), ("int64", "float16", "float16"),
    ("bool", "uint16", "uint16"), ("float32", "float64", "float64"), ("uint8", "uint64", "uint64"),
    ("int32", "int32", "int32"), ("int64", "uint16", "int64"),
])
def test_result_type_array_api_table(a, b, want):
    assert TF.result_type(onp.dtype(a), onp.dtype(b)) == onp.dtype(want)
    assert TF.result_type(np.zeros(1, dtype=b), onp.dtype(a)) == onp.dtype(want)


def test_result_type_errors():
    with pytest.raises(TypeError, match="unknown type promotion between int8 and uint64"):
        TF.result_type(onp.dtype("int8"), onp.dtype("uint64"))
    with pytest.raises(ValueError, match="at least one array or dtype"):
        TF.result_type()
    with pytest.raises(ValueError, match="inputs must be ndarrays or dtypes, got 3"):
        TF.result_type(np.ones(1), 3)


def test_set_functions():
    x = onp.array([[3, 1, 3], [2, 1, 0]], onp.int32)
    values, indices, inverse, counts = onp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    got = np.unique_all(np.array(x))
    assert type(got).__name__ == "UniqueAll" and got._fields == ("values", "indices", "inverse_indices", "counts")
    _same(got.values, values)
    _same(got.indices, indices.astype(onp.int64))
    _same(got.counts, counts.astype(onp.int64))
    onp.testing.assert_array_equal(got.values.asnumpy()[got.inverse_indices.asnumpy()].reshape(x.shape), x)
    inv = np.unique_inverse(np.array(x))
    assert inv._fields == ("values", "inverse_indices")
    onp.testing.assert_array_equal(inv.inverse_indices.asnumpy(), got.inverse_indices.asnumpy())
    _same(np.unique_values(np.array(x)), values)
    assert np.set_functions.unique_all is np.unique_all


def test_genfromtxt():
    _same(np.genfromtxt(io.StringIO("1 2\n3 4")), onp.array([[1.0, 2.0], [3.0, 4.0]]))
    _same(np.io.genfromtxt(io.StringIO("1,2\n3,4"), delimiter=",", dtype=int), onp.array([[1, 2], [3, 4]]))
    got = np.genfromtxt(io.StringIO("5 6"), device=mx.cpu())
    assert got.device == mx.cpu()
    with pytest.raises(TypeError, match="genfromtxt: mx.np arrays cannot hold"):
        np.genfromtxt(io.StringIO("a b"), dtype=str)


def test_set_printoptions():
    before = onp.get_printoptions()
    try:
        np.set_printoptions(precision=2)
        assert "1.23" in repr(np.array([1.23456])) and "1.234" not in repr(np.array([1.23456]))
        np.arrayprint.set_printoptions(threshold=5)
        assert "..." in repr(np.arange(100))
        with pytest.raises(NotImplementedError, match="only supports parameters precision and threshold"):
            np.set_printoptions(linewidth=10)
    finally:
        onp.set_printoptions(**before)


def test_function_base_and_stride_tricks():
    assert np.function_base.meshgrid is np.meshgrid
    assert np.function_base.broadcast_arrays is np.broadcast_arrays
    assert np.stride_tricks.broadcast_arrays is np.broadcast_arrays
    a, b = np.stride_tricks.broadcast_arrays(np.ones((2, 1)), np.ones(3))
    assert a.shape == b.shape == (2, 3)


def test_from_dlpack():
    x = np.array(M)
    _same(np.from_dlpack(x), M)
    _same(np.from_dlpack(onp.arange(4, dtype=onp.int32)), onp.arange(4, dtype=onp.int32))
    with pytest.raises(TypeError, match="from_dlpack: expected an object with __dlpack__"):
        np.from_dlpack([1, 2])


# -- mx.np.linalg: the Array API names -----------------------------------------------------------------

def test_linalg_array_api():
    L = np.linalg
    x, v, w = np.array(M), np.array(M[0, :3]), np.array(M[1, :3])
    _same(L.matrix_norm(x), onp.linalg.norm(M))
    _same(L.matrix_norm(np.array(S), ord="nuc"), onp.linalg.norm(S, ord="nuc", axis=(-2, -1)), rtol=1e-4)
    _same(L.matrix_norm(np.array(S), ord=1, keepdims=True), onp.linalg.norm(S, 1, axis=(-2, -1), keepdims=True))
    _same(L.vector_norm(x), onp.linalg.norm(M.ravel()))
    _same(L.vector_norm(x, ord=1, axis=1), onp.linalg.norm(M, 1, axis=1))
    _same(L.vector_norm(np.array(S), axis=(0, 2)), onp.sqrt((S ** 2).sum(axis=(0, 2))))
    _same(L.vector_norm(x, axis=(0, 1), keepdims=True), onp.linalg.norm(M.ravel())[None])  # MXNet: shape (1,)
    _same(L.trace(np.array(S)), onp.trace(S, axis1=0, axis2=1))        # MXNet: the first two axes
    _same(L.trace(np.array(S), offset=1), onp.trace(S, 1, axis1=0, axis2=1))
    _same(L.diagonal(x, 1), onp.diag(M, 1))
    _same(L.diagonal(v), onp.diag(M[0, :3]))                            # np.diag: a 1-D input gives a matrix
    _same(L.outer(v, np.array(M[:2, :2])), onp.outer(M[0, :3], M[:2, :2]))
    _same(L.cross(v, w), onp.cross(M[0, :3], M[1, :3]))
    _same(L.cross(np.array(S), np.array(S[::-1]), axis=1), onp.cross(S, S[::-1], axis=1))
    _same(L.tensordot(x, np.array(M.T), axes=1), M @ M.T, rtol=1e-4)
    _same(L.matrix_transpose(np.array(S)), S.swapaxes(-1, -2))
    _same(L.vecdot(x, x), onp.dot(M.ravel(), M.ravel()), rtol=1e-4)
    _same(L.vecdot(v, w, axis=0), onp.outer(M[0, :3], M[1, :3]))     # MXNet: tensordot of the flat arrays


def test_linalg_errors():
    with pytest.raises(ValueError, match="matrix_norm: the axis must be a 2-tuple of ints, got 1"):
        np.linalg.matrix_norm(np.array(M), axis=1)
    with pytest.raises(ValueError, match=r"matrix_transpose: expected ndim >= 2, got shape \(3,\)"):
        np.linalg.matrix_transpose(np.ones(3))


def test_wrap_data_api_linalg_func():
    seen = {}

    @np.linalg.wrap_data_api_linalg_func
    def probe(a, upper=False, rtol=None):
        seen.update(upper=upper, rtol=rtol)
        return a

    probe(1, UPLO="U", rcond=0.5)
    assert seen == {"upper": True, "rtol": 0.5}
    probe(1, UPLO="L", tol=0.25)
    assert seen == {"upper": False, "rtol": 0.25}
    assert probe.__name__ == "probe"


# -- mx.np.ndarray methods ----------------------------------------------------------------------------

def test_ndarray_views_and_shapes():
    x = np.array(S)
    _same(x.mT, S.swapaxes(-1, -2))
    _same(x.tile((1, 2, 1)), onp.tile(S, (1, 2, 1)))
    _same(np.array(M[0]).broadcast_to((2, 4)), onp.broadcast_to(M[0], (2, 4)))
    _same(x.reshape_view(3, -1), S.reshape(3, -1))
    _same(x.reshape_view((0, -1)), S.reshape(2, 9))                    # MXNet 1.x code 0: keep the dimension
    assert x.writable is True
    with pytest.raises(ValueError, match=r"mT: expected an array with ndim >= 2, got shape \(3,\)"):
        np.ones(3).mT


def test_slice_assign():
    x = np.zeros((3, 4))
    out = x.slice_assign(np.ones((2, 2)), (0, 1), (2, 3), (None, None))
    want = onp.zeros((3, 4), onp.float32)
    want[0:2, 1:3] = 1
    assert out is x
    _same(x, want)
    x.slice_assign_scalar(5, (1,), (3,), ())
    want[1:3] = 5
    _same(x, want)
    y = np.zeros((4, 4), dtype="int32")
    y.slice_assign_scalar(2.7, (0, 0), (4, 4), (2, 3))
    want = onp.zeros((4, 4), onp.int32)
    want[0:4:2, 0:4:3] = 2
    _same(y, want)
    with pytest.raises(ValueError, match="slice_assign: begin .* must have equal lengths"):
        x.slice_assign(np.ones(1), (0, 0), (1,), ())


def test_drop_grad_and_dlpack_for_write():
    x = np.array(M)
    x.attach_grad()
    with autograd.record():
        (x * 2).sum().backward()
    _same(x.grad, onp.full_like(M, 2.0))
    x.drop_grad()
    assert x.grad is None
    y = np.from_dlpack(np.array(M))
    assert y.shape == M.shape
    capsule = x.to_dlpack_for_write()
    assert type(capsule).__name__ == "PyCapsule"
