"""npx.utils: NumPy and DLPack exchange (round trips, classes, consumed capsules) and file I/O names."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import np, npx


def test_from_numpy_keeps_values_and_dtype():
    values = onp.arange(6, dtype=onp.int32).reshape(2, 3)
    got = npx.from_numpy(values)
    assert type(got) is np.ndarray and got.dtype == onp.int32
    onp.testing.assert_array_equal(got.asnumpy(), values)
    assert type(mx.nd.from_numpy(values)) is mx.nd.NDArray
    with pytest.raises(TypeError, match="from_numpy: expected a numpy.ndarray"):
        npx.from_numpy([1, 2])


def test_dlpack_round_trip_through_a_capsule():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    for export in (npx.to_dlpack_for_read, npx.to_dlpack_for_write):
        capsule = export(x)
        assert type(capsule).__name__ == "PyCapsule"
        back = npx.from_dlpack(capsule)
        assert type(back) is np.ndarray
        onp.testing.assert_array_equal(back.asnumpy(), x.asnumpy())
        with pytest.raises(TypeError, match="already consumed"):
            npx.from_dlpack(capsule)


def test_from_dlpack_takes_dlpack_objects():
    values = onp.linspace(0, 1, 5)
    onp.testing.assert_array_equal(npx.from_dlpack(values).asnumpy(), values)
    legacy = mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(mx.nd.ones((2, 2))))
    assert type(legacy) is mx.nd.NDArray and legacy.shape == (2, 2)
    with pytest.raises(TypeError, match="expected a DLPack capsule"):
        npx.from_dlpack(3)


def test_utils_module_names():
    assert npx.utils.save is npx.save and npx.utils.load is npx.load
    assert npx.utils.from_dlpack is npx.from_dlpack
    assert npx.utils.is_np_array() == mx.util.is_np_array()
