"""npx's names of the 1.x operators, the index-scatter ops and constraint_check, against NumPy."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import np, npx


def _int(values):
    return np.array(values, dtype="int64")


def test_shape_ops_match_numpy():
    x = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)
    a = np.array(x)
    assert type(npx.batch_flatten(a)) is np.ndarray
    onp.testing.assert_array_equal(npx.batch_flatten(a).asnumpy(), x.reshape(2, 12))
    onp.testing.assert_array_equal(npx.slice(a, begin=(0, 1, None), end=(2, 3, 3)).asnumpy(), x[0:2, 1:3, :3])
    onp.testing.assert_array_equal(npx.slice_like(a, np.ones((1, 2, 2))).asnumpy(), x[:1, :2, :2])
    onp.testing.assert_array_equal(npx.reshape_like(a, np.ones((4, 6))).asnumpy(), x.reshape(4, 6))
    parts = npx.slice_channel(a, num_outputs=2, axis=2)
    assert isinstance(parts, list) and len(parts) == 2
    onp.testing.assert_array_equal(parts[1].asnumpy(), x[:, :, 2:])
    padded = npx.pad(np.array(x[None]), mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 2, 2), constant_value=5)
    onp.testing.assert_array_equal(padded.asnumpy(), onp.pad(x[None], ((0, 0), (0, 0), (1, 1), (2, 2)),
                                                             constant_values=5))


def test_arithmetic_and_cast():
    x, y = onp.array([[1.0], [3.0]], onp.float32), onp.array([[0.0, 2.0, 4.0]], onp.float32)
    greater = npx.broadcast_greater(np.array(x), np.array(y))
    onp.testing.assert_array_equal(greater.asnumpy(), (x > y).astype(onp.float32))
    onp.testing.assert_array_equal(npx.add_n(np.array(x), np.array(x), np.array(x)).asnumpy(), 3 * x)
    cast = npx.cast(np.array([1.7, -2.2]), dtype="int32")
    assert cast.dtype == onp.int32
    onp.testing.assert_array_equal(cast.asnumpy(), [1, -2])
    got = npx.norm(np.array([[3.0, 4.0], [6.0, 8.0]]), ord=2, axis=1, keepdims=True)
    onp.testing.assert_allclose(got.asnumpy(), [[5.0], [10.0]])


def test_sequence_ops():
    x = onp.arange(12, dtype=onp.float32).reshape(3, 2, 2)  # (time, batch, feature)
    lengths = np.array([2.0, 3.0])
    last = npx.sequence_last(np.array(x), lengths, use_sequence_length=True)
    onp.testing.assert_array_equal(last.asnumpy(), onp.stack([x[1, 0], x[2, 1]]))
    onp.testing.assert_array_equal(npx.sequence_reverse(np.array(x)).asnumpy(), x[::-1])


def test_nonzero_gives_index_rows():
    x = onp.array([[0, 1, 0], [2, 0, 3]])
    got = npx.nonzero(np.array(x))
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), onp.argwhere(x))


def test_index_add_accumulates_repeated_indices():
    a = onp.arange(6, dtype=onp.float32).reshape(3, 2)
    val = onp.array([[1, 2], [3, 4], [5, 6]], onp.float32)
    got = npx.index_add(np.array(a), _int([[0, 2, 0]]), np.array(val))
    want = a.copy()
    onp.add.at(want, [0, 2, 0], val)
    onp.testing.assert_array_equal(got.asnumpy(), want)
    # element indices with a broadcast value
    got = npx.index_add(np.array(a), _int([[0, 1], [1, 0]]), np.array([10.0]))
    want = a.copy()
    want[0, 1] += 10
    want[1, 0] += 10
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_index_update_and_gradients():
    a = onp.zeros((3, 2), onp.float32)
    got = npx.index_update(np.array(a), _int([[0, 2], [1, 0]]), np.array([5.0, 6.0]))
    onp.testing.assert_array_equal(got.asnumpy(), [[0, 5], [0, 0], [6, 0]])
    base, val = np.array(onp.ones((3, 2))), np.array([[2.0, 3.0]])
    base.attach_grad()
    val.attach_grad()
    with mx.autograd.record():
        out = npx.index_update(base, _int([[1]]), val) * np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out.backward()
    onp.testing.assert_array_equal(base.grad.asnumpy(), [[1, 2], [0, 0], [5, 6]])
    onp.testing.assert_array_equal(val.grad.asnumpy(), [[3, 4]])


def test_index_errors():
    with pytest.raises(mx.base.MXNetError, match="index_add: 'ind' must have an integer dtype"):
        npx.index_add(np.zeros((3, 2)), np.array([[0.0]]), np.ones(2))
    with pytest.raises(IndexError, match="index_update: index 3 is out of bounds for axis 0 with size 3"):
        npx.index_update(np.zeros((3, 2)), _int([[3]]), np.ones(2))
    with pytest.raises(mx.base.MXNetError, match=r"does not broadcast to \(1, 2\)"):
        npx.index_add(np.zeros((3, 2)), _int([[0]]), np.ones(3))


def test_constraint_check():
    ok = npx.constraint_check(np.array([True, True], dtype=bool), "never shown")
    assert ok.shape == () and bool(ok)
    with pytest.raises(ValueError, match="sigma must be positive"):
        npx.constraint_check(np.array([True, False], dtype=bool), "sigma must be positive")
    with pytest.raises(TypeError, match="x must be a boolean array"):
        npx.constraint_check(np.array([1.0]), "msg")


def test_batch_norm_with_relu_is_relu_of_batch_norm():
    rng = onp.random.default_rng(0)
    x = rng.normal(size=(4, 3)).astype(onp.float32)
    args = [np.array(x), np.ones(3), np.zeros(3), np.zeros(3), np.ones(3)]
    got = npx.batch_norm_with_relu(*args, fix_gamma=False)
    want = onp.maximum(x / onp.sqrt(1 + 1e-3), 0)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_poisson_samplers():
    mx.random.seed(3)
    first = npx.scalar_poisson(lam=4.0, shape=(2000,))
    mx.random.seed(3)
    again = npx.scalar_poisson(lam=4.0, shape=(2000,))
    assert first.dtype == onp.float32 and type(first) is np.ndarray
    onp.testing.assert_array_equal(first.asnumpy(), again.asnumpy())
    assert abs(first.asnumpy().mean() - 4.0) < 0.3
    draws = npx.tensor_poisson(np.array([1.0, 50.0]), shape=(3000,))
    assert draws.shape == (2, 3000)
    onp.testing.assert_allclose(draws.asnumpy().mean(axis=1), [1.0, 50.0], rtol=0.05)


def test_device_helpers():
    assert npx.cpu() == mx.cpu() and npx.current_device() == mx.cpu(0)
    assert npx.Device is mx.Device and npx.cpu_pinned(0).device_type == "cpu_pinned"
    assert npx.num_gpus() == mx.device.num_gpus()
    assert npx.gpu(1) == mx.gpu(1)
    with pytest.raises(ValueError, match="Expecting a gpu context"):
        npx.get_cuda_compute_capability(mx.cpu())
    if npx.num_gpus() == 0:
        with pytest.raises(mx.base.MXNetError):
            npx.gpu_memory_info(0)
    else:
        free, total = npx.gpu_memory_info(0)
        assert 0 <= free <= total
