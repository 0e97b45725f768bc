"""The NDArray core: properties, conversions, indexing, in-place writes and operators, vs NumPy."""
import operator
import pickle

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError


def arr(values, dtype="float32"):
    return mx.np.array(onp.asarray(values, dtype=dtype))


def test_properties():
    x = arr(onp.arange(6).reshape(2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and len(x) == 2
    assert x.dtype == onp.float32 and isinstance(x.dtype, onp.dtype)
    assert x.device == mx.cpu() and x.ctx == mx.cpu() and x.context == mx.cpu()
    assert x.T.shape == (3, 2)
    legacy = x.as_nd_ndarray()
    assert type(legacy) is mx.nd.NDArray and legacy.dtype is onp.float32  # 1.x reports the scalar type
    assert type(legacy.as_np_ndarray()) is mx.np.ndarray


def test_lists_default_to_float32_and_numpy_keeps_dtype():
    assert mx.np.array([1, 2, 3]).dtype == onp.float32
    assert mx.np.array(onp.array([1, 2, 3], dtype=onp.int64)).dtype == onp.int64
    assert mx.np.array([1, 2], dtype="int8").dtype == onp.int8


def test_conversions():
    x = arr([[1.5, 2.5]])
    onp.testing.assert_array_equal(x.asnumpy(), [[1.5, 2.5]])
    assert arr([3.0]).item() == 3.0 and float(arr([2.0])) == 2.0 and int(arr([7.0])) == 7
    assert x.tolist() == [[1.5, 2.5]]
    onp.testing.assert_array_equal(onp.asarray(x), x.asnumpy())
    assert x.astype("int32").dtype == onp.int32
    assert x.astype("float32", copy=False) is x
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)


def test_jax_interop():
    x = arr([1.0, 2.0, 3.0])
    assert isinstance(jnp.asarray(x), jax.Array)
    onp.testing.assert_allclose(jax.jit(lambda v: v * 2)(x).asnumpy(), [2, 4, 6])
    g = jax.grad(lambda v: (v * v).sum().to_jax())(x)
    onp.testing.assert_allclose(onp.asarray(g), [2, 4, 6])
    onp.testing.assert_array_equal(onp.from_dlpack(x), x.asnumpy())
    assert type(mx._ndarray.from_jax(jnp.ones(2), mx.np.ndarray)) is mx.np.ndarray


def test_repr():
    assert repr(arr([1.0, 2.0])) == "array([1., 2.])"
    assert repr(arr([1, 2], "int32")) == "array([1, 2], dtype=int32)"
    assert "<NDArray 2 @cpu(0)>" in repr(mx.nd.array([1.0, 2.0]))
    assert repr(mx.nd.array([[1, 2], [3, 4]])) == "\n[[1. 2.]\n [3. 4.]]\n<NDArray 2x2 @cpu(0)>"


def test_pickle_round_trip():
    x = arr([[1.0, 2.0]])
    y = pickle.loads(pickle.dumps(x))
    assert type(y) is type(x)
    onp.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


BASE = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)
# Indexing runs through the registered ops _getitem, _getitem_mask (boolean masks),
# _setitem and _setitem_mask: the tests below are their numeric tests.


@pytest.mark.parametrize("key", [
    0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), (slice(0, 2), slice(None, None, -1)),
    (0, slice(1, 3), slice(None, None, 2)), onp.array([1, 0]), (slice(None), onp.array([2, 0, 2])),
    (onp.array([0, 1]), onp.array([1, 2])), (Ellipsis, None), [0, 1, 1],
])
def test_getitem_matches_numpy(key):
    x = mx.np.array(BASE)
    mx_key = tuple(mx.np.array(k) if isinstance(k, onp.ndarray) else k for k in key) \
        if isinstance(key, tuple) else key
    onp.testing.assert_array_equal(x[mx_key].asnumpy(), BASE[key])


def test_boolean_mask_getitem():
    x = mx.np.array(BASE)
    onp.testing.assert_array_equal(x[x > 10].asnumpy(), BASE[BASE > 10])
    mask = onp.array([True, False])
    onp.testing.assert_array_equal(x[mx.np.array(mask)].asnumpy(), BASE[mask])


@pytest.mark.parametrize("key, value", [
    (0, 5.0), ((1, 2), -1.0), ((slice(None), 0), onp.array([9.0, 8.0, 7.0, 6.0])),
    ((Ellipsis, 1), 3.0), (onp.array([1, 0]), 0.5),
])
def test_setitem_keeps_identity(key, value):
    x = mx.np.array(BASE)
    alias = x
    expected = BASE.copy()
    expected[key] = value
    x[mx.np.array(key) if isinstance(key, onp.ndarray) else key] = \
        mx.np.array(value) if isinstance(value, onp.ndarray) else value
    assert alias is x
    onp.testing.assert_array_equal(alias.asnumpy(), expected)


def test_boolean_mask_setitem():
    x = mx.np.array(BASE)
    x[x > 20] = 0.0
    expected = BASE.copy()
    expected[expected > 20] = 0.0
    onp.testing.assert_array_equal(x.asnumpy(), expected)


def test_index_errors():
    x = mx.np.array(BASE)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 2"):
        x[2]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError):
        x[1.5]
    with pytest.raises(IndexError, match="out of bounds"):
        x[0, 5] = 1.0


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.pow, operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3))])
def test_binary_operators_broadcast_like_numpy(op, shapes):
    rng = onp.random.default_rng(0)
    a = rng.uniform(1, 3, size=shapes[0]).astype(onp.float32)
    b = rng.uniform(1, 3, size=shapes[1]).astype(onp.float32)
    got = op(mx.np.array(a), mx.np.array(b))
    want = op(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_operators_with_scalars_keep_float32(op):
    a = onp.array([1.0, 2.0, 3.0], dtype=onp.float32)
    x = mx.np.array(a)
    for got, want in ((op(x, 2.0), op(a, onp.float32(2.0))), (op(2.0, x), op(onp.float32(2.0), a))):
        assert got.dtype == want.dtype
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_integer_promotion_follows_mxnet():
    i = mx.np.array(onp.array([1, 2, 3], dtype=onp.int32))
    assert (i + 1).dtype == onp.int32
    assert (i * 1.5).dtype == onp.float64          # MXNet 2.0 as NumPy (tests/fixtures/dtypes)
    assert (i / 2).dtype == onp.float32
    assert (i + mx.np.array(onp.ones(3, onp.int64))).dtype == onp.int64
    assert (mx.np.array(onp.ones(3), dtype="float64") + i).dtype == onp.float64   # float64 stays float64


def test_bitwise_and_unary():
    a = onp.array([1, 6, 12], dtype=onp.int32)
    b = onp.array([3, 5, 10], dtype=onp.int32)
    x, y = mx.np.array(a), mx.np.array(b)
    for op in (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift):
        onp.testing.assert_array_equal(op(x, y).asnumpy(), op(a, b))
    onp.testing.assert_array_equal((~x).asnumpy(), ~a)
    onp.testing.assert_array_equal((-x).asnumpy(), -a)
    onp.testing.assert_array_equal(abs(-x).asnumpy(), a)
    m = mx.np.array(onp.eye(2, dtype=onp.float32))
    onp.testing.assert_array_equal((m @ m).asnumpy(), onp.eye(2))


@pytest.mark.parametrize("op", [operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow])
def test_inplace_operators_keep_identity(op):
    a = onp.array([[1.0, 2.0], [3.0, 4.0]], dtype=onp.float32)
    x = mx.np.array(a)
    alias = x
    x = op(x, mx.np.array([2.0, 0.5]))
    assert x is alias
    onp.testing.assert_allclose(alias.asnumpy(), op(a.copy(), onp.array([2.0, 0.5], onp.float32)), rtol=1e-6)


def test_inplace_keeps_dtype_and_shape():
    x = mx.np.array(onp.array([1, 2], dtype=onp.int32))
    x += 2
    assert x.dtype == onp.int32 and x.tolist() == [3, 4]
    with pytest.raises(TypeError, match="cannot be stored"):  # MXNet 2.0: int32 += float64 refused
        x += 1.7
    with pytest.raises(ValueError, match="non-broadcastable output"):
        y = mx.np.array([1.0, 2.0])
        y += mx.np.ones((2, 2))


def test_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match=r"add: operands could not be broadcast together with shapes \(2, 3\) \(4,\)") as info:
        mx.np.ones((2, 3)) + mx.np.ones((4,))
    assert isinstance(info.value, MXNetError)
    assert "Traceback" not in str(info.value)


def test_copy_and_copyto():
    x = arr([1.0, 2.0])
    y = x.copy()
    y[0] = 5.0
    assert x.asnumpy()[0] == 1.0
    z = mx.np.zeros((2,), dtype="float64")
    alias = z
    x.copyto(z)
    assert alias is z and z.dtype == onp.float64
    onp.testing.assert_array_equal(z.asnumpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="shape mismatch"):
        x.copyto(mx.np.zeros((3,)))


def test_out_argument_writes_in_place():
    x, y = arr([1.0, 2.0]), arr([3.0, 4.0])
    out = mx.np.zeros((2,))
    alias = out
    result = mx.np.add(x, y, out=out)
    assert result is alias
    onp.testing.assert_array_equal(alias.asnumpy(), [4.0, 6.0])


def test_handle_is_the_computed_buffer_even_of_a_lazy_result():
    for x in (mx.np.array([1.0, 2.0]) * 3, mx.nd.array([1.0, 2.0]) * 3):  # held back in a bulk segment
        handle = x.handle
        assert isinstance(handle, jax.Array)
        onp.testing.assert_array_equal(onp.asarray(handle), [3.0, 6.0])
        onp.testing.assert_array_equal(mx.nd.NDArray(handle).asnumpy(), [3.0, 6.0])


def test_legacy_reshape_codes():
    x = mx.nd.array(onp.zeros((2, 3, 4)))
    assert x.reshape((0, -1)).shape == (2, 12)
    assert x.reshape((-3, 4)).shape == (6, 4)
    assert x.reshape((-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert x.reshape(-2).shape == (2, 3, 4)
    assert x.reshape((-1, 2), reverse=True).shape == (12, 2)
    np_x = mx.np.zeros((2, 3, 4))
    assert np_x.reshape(6, -1).shape == (6, 4)
    with pytest.raises(ValueError, match="cannot reshape"):
        np_x.reshape(5, -1)


def test_copyto_a_device_copies_even_on_the_same_device():
    # an optimizer update donates its weight buffers: a copy sharing them would be deleted with them
    a = mx.nd.ones((3,))
    b = a.copyto(mx.cpu())
    opt = mx.optimizer.SGD(learning_rate=1.0)
    opt.update([0], [a], [mx.nd.ones((3,))], [opt.create_state(0, a)])
    onp.testing.assert_array_equal(b.asnumpy(), onp.ones(3))
    onp.testing.assert_array_equal(a.asnumpy(), onp.zeros(3))


def test_eager_basic_indexing_runs_through_windows_with_runtime_offsets():
    """Eager ints/unit-step slices go through _getitem_window / _setitem_window (offsets are run-time
    values, one program per window size); values and shapes must equal NumPy's for every key form."""
    a = onp.arange(60, dtype="float32").reshape(6, 10)
    x = mx.np.array(a)
    keys = [0, -1, 5, -6, (2, 3), (slice(1, 4),), (slice(-3, None), slice(None, 2)), (None, 2), (Ellipsis, 7),
            (slice(4, 100),), (slice(5, 2),), (1, None, slice(2, 5)), (), slice(1, 4), slice(-3, None),
            slice(None, 2), slice(4, 100), slice(5, 2), slice(-100, 2), slice(None), slice(1, 5, 2),
            slice(None, None, -1), onp.int64(2), slice(onp.int64(1), 3),
            (slice(None), 0), (slice(None), -1), (1, slice(2, 5)), (-1, -2), (slice(2, 4), slice(None)),
            (slice(None), slice(8, 100)), (0, slice(5, 2)), (slice(None), onp.int64(3)), (2, None)]
    for key in keys:
        got = x[key]
        onp.testing.assert_array_equal(got.asnumpy(), a[key], err_msg=str(key))
        assert got.shape == a[key].shape
    b, y = a.copy(), mx.np.array(a)
    for i in range(6):
        b[i, i:i + 2] = -i
        y[i, i:i + 2] = -i
    b[None, 3] = 7.0
    y[None, 3] = 7.0
    b[1:3] = onp.arange(10)
    y[1:3] = mx.np.arange(10)
    onp.testing.assert_array_equal(y.asnumpy(), b)
    with pytest.raises(mx.MXNetError, match=r"shape \(3,\) to the selection of shape \(2, 10\)"):
        y[1:3] = mx.np.ones(3)
    with pytest.raises(IndexError, match="out of bounds"):
        x[6]
    with pytest.raises(IndexError, match="out of bounds"):
        x[-7]
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 1"):
        x[0, 10]
    with pytest.raises(IndexError, match="out of bounds for axis 0"):
        x[6, 0]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many indices"):
        mx.np.array(3.0)[0]


def test_window_indexing_keeps_gradients_and_static_keys_under_hybridize():
    a = onp.random.RandomState(0).rand(5, 4).astype("float32")
    w = mx.np.array(a)
    w.attach_grad()
    with mx.autograd.record():
        loss = (w[3] * 2).sum() + w[1:3, :2].sum()
    loss.backward()
    expected = onp.zeros_like(a)
    expected[3] = 2
    expected[1:3, :2] += 1
    onp.testing.assert_array_equal(w.grad.asnumpy(), expected)

    class Pick(mx.gluon.HybridBlock):
        def forward(self, x):
            return x[2] + x[-1, 1:3].sum()

    net = Pick()
    net.hybridize()
    onp.testing.assert_allclose(net(mx.np.array(a)).asnumpy(), a[2] + a[-1, 1:3].sum(), rtol=1e-6)


def test_np_array_of_numpy_data_follows_mxnet2_dtype_rule():
    """``mx.np.array`` of float64 NumPy data is float32 (MXNet 2.0's default dtype) unless
    ``set_np(dtype=True)``; integer and boolean NumPy arrays keep their dtype (see the docstring:
    MXNet's float32 would lose large integers and turn masks into floats); ``dtype=`` decides."""
    data = onp.array([0.1, 2.5])
    assert mx.np.array(data).dtype == onp.float32
    assert mx.np.array(data, dtype="float64").dtype == onp.float64
    assert mx.np.array(onp.array([2**25 + 1])).asnumpy()[0] == 2**25 + 1
    assert mx.np.array(onp.array([True, False])).dtype == onp.bool_
    assert mx.nd.array(data).dtype == onp.float32
    mx.npx.set_np(dtype=True)  # (the suite's fixture puts the default back)
    assert mx.np.array(data).dtype == onp.float64
