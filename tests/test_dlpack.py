"""mx.dlpack: the DLPack factories and ctypes structures (oracle: NumPy's own DLPack support and the C layout)."""
import ctypes

import numpy as onp
import pytest

import mxjax as mx
from mxjax import dlpack

X = onp.arange(12, dtype=onp.float32).reshape(3, 4) / 7


def _capsule_tensor(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return dlpack.DLManagedTensor.from_address(get(capsule, b"dltensor")).dl_tensor


def test_structures_have_dlpack_c_layout():
    assert ctypes.sizeof(dlpack.DLContext) == 8 and ctypes.sizeof(dlpack.DLDataType) == 4
    assert ctypes.sizeof(dlpack.DLTensor) == 48  # data, device, ndim, dtype, shape, strides, byte_offset
    assert dlpack.DLManagedTensor.dl_tensor.offset == 0
    assert dlpack.DLDeviceType.DLCPU == 1 and dlpack.DLDeviceType.DLGPU == 2
    assert dlpack.DLDataType.TYPE_MAP["float32"] == (2, 32, 1) and dlpack.DLDataType.TYPE_MAP["int64"] == (0, 64, 1)


def test_to_dlpack_for_read_capsule_describes_the_array():
    x = mx.nd.array(X)
    capsule = dlpack.ndarray_to_dlpack_for_read()(x)
    t = _capsule_tensor(capsule)
    assert t.ndim == 2 and [t.shape[i] for i in range(2)] == [3, 4]
    assert (t.dtype.type_code, t.dtype.bits, t.dtype.lanes) == dlpack.DLDataType.TYPE_MAP["float32"]
    assert t.ctx.device_type == dlpack.DLDeviceType.DLCPU
    data = (ctypes.c_float * 12).from_address(t.data + t.byte_offset)
    onp.testing.assert_array_equal(onp.frombuffer(data, onp.float32).reshape(3, 4), X)
    back = dlpack.ndarray_from_dlpack(mx.nd.NDArray)(capsule)
    assert type(back) is mx.nd.NDArray
    onp.testing.assert_array_equal(back.asnumpy(), X)
    with pytest.raises(mx.MXNetError, match="already consumed"):
        dlpack.ndarray_from_dlpack(mx.nd.NDArray)(capsule)


def test_from_dlpack_takes_objects_with_dlpack_and_gives_the_class_asked():
    y = dlpack.ndarray_from_dlpack(mx.np.ndarray)(X)  # a NumPy array has __dlpack__
    assert isinstance(y, mx.np.ndarray)
    onp.testing.assert_array_equal(y.asnumpy(), X)
    w = mx.np.array(X)
    capsule = dlpack.ndarray_to_dlpack_for_write()(w)
    onp.testing.assert_array_equal(dlpack.ndarray_from_dlpack(mx.np.ndarray)(capsule).asnumpy(), X)
    with pytest.raises(mx.MXNetError, match="expected a DLPack capsule or an object with __dlpack__, got list"):
        dlpack.ndarray_from_dlpack(mx.nd.NDArray)([1, 2])


def test_from_numpy_zero_copy_rules():
    from_numpy = dlpack.ndarray_from_numpy(mx.np.ndarray, mx.np.array)
    a = X.copy()
    y = from_numpy(a)
    assert isinstance(y, mx.np.ndarray) and not a.flags["WRITEABLE"]  # as MXNet: it now backs the array
    onp.testing.assert_array_equal(y.asnumpy(), X)
    b = onp.arange(6.0).reshape(2, 3)
    z = from_numpy(b, zero_copy=False)
    assert z.dtype == onp.float64 and b.flags["WRITEABLE"]
    onp.testing.assert_array_equal(z.asnumpy(), b)
    with pytest.raises(ValueError, match="Only c-contiguous arrays are supported for zero-copy"):
        from_numpy(onp.asfortranarray(onp.ones((2, 3), onp.float32)))
    with pytest.raises(ValueError, match="int16 is not supported"):
        from_numpy(onp.ones(3, onp.int16))
    with pytest.raises(TypeError, match="expected a numpy.ndarray, got list"):
        from_numpy([1.0, 2.0])


def test_managed_tensor_deleter_releases_its_reference():
    import sys
    obj = onp.ones(2)
    pyobj = ctypes.py_object(obj)
    managed = dlpack.DLManagedTensor()
    managed.manager_ctx = ctypes.c_void_p.from_buffer(pyobj).value  # MXNet's _make_manager_ctx
    before = sys.getrefcount(obj)
    ctypes.pythonapi.Py_IncRef(pyobj)
    assert sys.getrefcount(obj) == before + 1
    dlpack.dl_managed_tensor_deleter(ctypes.pointer(managed))
    assert sys.getrefcount(obj) == before


def test_a_lazy_result_exports_its_computed_buffer():
    # an op's result held back by bulk execution: the DLPack protocol computes it first
    for x in (mx.np.array(X) * 2, mx.nd.array(X) * 2):
        device_type, device_id = x.__dlpack_device__()
        assert (int(device_type), device_id) == (dlpack.DLDeviceType.DLCPU, 0)
        onp.testing.assert_array_equal(onp.from_dlpack(x), X * 2)
