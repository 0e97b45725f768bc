"""Devices: names, scoping, aliases and the error for a GPU that is not there."""
import jax
import pytest

import mxjax as mx
from mxjax.base import MXNetError


def test_cpu_and_aliases():
    assert mx.cpu() == mx.Device("cpu", 0) == mx.Context("cpu")
    assert repr(mx.cpu(0)) == "cpu(0)"
    assert mx.context.Context is mx.Device
    assert mx.current_device() == mx.cpu()
    assert mx.device.current_device() == mx.cpu()


def test_scope_sets_default_device_and_arrays_follow():
    with mx.cpu(0) as dev:
        assert mx.current_device() is dev
        x = mx.np.array([1.0, 2.0])
        assert x.device == mx.cpu()
    assert mx.current_device() == mx.cpu()


def test_missing_gpu_is_a_clear_error():
    n = mx.device.num_gpus()
    with pytest.raises(mx.MXNetError, match=rf"gpu\({n}\) is not available"):
        with mx.gpu(n):
            pass
    with pytest.raises(mx.MXNetError, match="not available"):
        mx.np.array([1.0], device=mx.gpu(n))


def test_unknown_device_type():
    with pytest.raises(mx.MXNetError, match="unknown device type"):
        mx.Device("tpu-ish")


def test_copy_between_devices():
    x = mx.np.array([1.0, 2.0])
    y = x.copyto(mx.cpu())
    assert y is not x and y.device == mx.cpu()
    assert x.as_in_ctx(mx.cpu()) is x and x.to_device(mx.cpu()) is x


def test_array_device_id_is_the_devices_mxnet_id():
    from mxjax.device import array_device_id
    data = jax.numpy.ones(3)
    assert array_device_id(data) == mx.Device.from_jax(next(iter(data.devices()))).device_id


def test_context_module_has_mxnets_names():
    # MXNet 2.0.0b1's mx.context: Context, Device, cpu, cpu_pinned, current_context, gpu, gpu_memory_info, num_gpus
    for name in ["Context", "Device", "cpu", "cpu_pinned", "current_context", "gpu", "gpu_memory_info", "num_gpus"]:
        assert hasattr(mx.context, name), name
    assert mx.context.gpu_memory_info is mx.device.gpu_memory_info


def test_gpu_memory_info_matches_jax():
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    if not gpus:
        with pytest.raises(MXNetError, match="only supported for MXNet built with CUDA support"):
            mx.context.gpu_memory_info()
        return
    free, total = mx.context.gpu_memory_info(0)
    assert 0 <= free <= total
    with pytest.raises(MXNetError, match="does not exist"):
        mx.context.gpu_memory_info(len(gpus))
