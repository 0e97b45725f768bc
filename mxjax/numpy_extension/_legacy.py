"""``mx.npx`` names of MXNet's 1.x operators (``npx.slice``, ``npx.pad``, ``npx.norm``...), the
index-scatter ops and the Poisson samplers, plus the device helpers MXNet 2 re-exports in npx.

Each operator is one line binding the op ``mx.nd`` uses (same semantics, same argument
names); results are ``mx.np.ndarray``.
"""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from ..base import check_call
from ..device import Device, cpu, cpu_pinned, current_device, gpu, num_gpus
from ..numpy.multiarray import ndarray
from ._nn import batch_norm, relu
from .utils import (from_dlpack, from_numpy, get_cuda_compute_capability, gpu_memory_info, to_dlpack_for_read,
                    to_dlpack_for_write)

_MODULE = "mxjax.numpy_extension"


def _npx(op: str, name: str, **options: Any) -> Callable[..., Any]:
    return make_function(op, name=name, out_cls=ndarray, module=_MODULE, legacy=True, **options)


add_n = _npx("add_n", "add_n", sequence_input=False)
batch_flatten = _npx("Flatten", "batch_flatten")
broadcast_greater = _npx("broadcast_greater", "broadcast_greater")
cast = _npx("astype", "cast")
norm = _npx("_legacy_norm", "norm")
pad = _npx("Pad", "pad")
reshape_like = _npx("reshape_like", "reshape_like")
slice = _npx("slice", "slice")  # noqa: A001  (MXNet's name)
slice_like = _npx("slice_like", "slice_like")
sequence_last = _npx("SequenceLast", "sequence_last")
sequence_reverse = _npx("SequenceReverse", "sequence_reverse")
nonzero = _npx("argwhere", "nonzero")  # MXNet 2's npx.nonzero: an (N, a.ndim) int64 array of indices
index_add = _npx("_npx_index_add", "index_add")
index_update = _npx("_npx_index_update", "index_update")
constraint_check = _npx("_npx_constraint_check", "constraint_check")
roi_pooling = _npx("ROIPooling", "roi_pooling")
deformable_convolution = _npx("_npx_deformable_convolution", "deformable_convolution")
modulated_deformable_convolution = _npx("_npx_modulated_deformable_convolution",
                                        "modulated_deformable_convolution")
scalar_poisson = _npx("_random_poisson", "scalar_poisson")
tensor_poisson = _npx("_sample_poisson", "tensor_poisson")
_slice_channel = _npx("SliceChannel", "slice_channel")


def slice_channel(data: Any, num_outputs: int, axis: int = 1, squeeze_axis: bool = False, **kwargs: Any) -> Any:
    """Split ``data`` into ``num_outputs`` equal parts along ``axis``: a list (one array if num_outputs is 1)."""
    result = _slice_channel(data, num_outputs=num_outputs, axis=axis, squeeze_axis=squeeze_axis, **kwargs)
    return list(result) if isinstance(result, tuple) else result


def batch_norm_with_relu(data: Any, gamma: Any, beta: Any, moving_mean: Any, moving_var: Any, eps: float = 1e-3,
                         momentum: float = 0.9, fix_gamma: bool = True, use_global_stats: bool = False,
                         output_mean_var: bool = False, axis: int = 1, cudnn_off: bool = False,
                         min_calib_range: Any = None, max_calib_range: Any = None, out: Any = None,
                         **kwargs: Any) -> Any:
    """``relu(batch_norm(...))``: MXNet's fused op for oneDNN; XLA fuses the two itself.  Moving statistics
    update in training exactly as ``npx.batch_norm``'s."""
    kwargs.pop("name", None)
    normed = batch_norm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                        fix_gamma=fix_gamma, use_global_stats=use_global_stats, output_mean_var=output_mean_var,
                        axis=axis, cudnn_off=cudnn_off, min_calib_range=min_calib_range,
                        max_calib_range=max_calib_range)
    if output_mean_var:
        return (relu(normed[0], out=out), *normed[1:])
    return relu(normed, out=out)


slice_channel.op = _slice_channel.op  # type: ignore[attr-defined]
batch_norm_with_relu.op = batch_norm.op  # type: ignore[attr-defined]
for _fn in (slice_channel, batch_norm_with_relu):
    _fn.__module__ = _MODULE

__all__ = [
    "add_n", "batch_flatten", "broadcast_greater", "cast", "norm", "pad", "reshape_like", "slice", "slice_like",
    "slice_channel", "sequence_last", "sequence_reverse", "nonzero", "index_add", "index_update",
    "constraint_check", "roi_pooling", "deformable_convolution", "modulated_deformable_convolution",
    "scalar_poisson", "tensor_poisson", "batch_norm_with_relu",
    "Device", "cpu", "cpu_pinned", "gpu", "current_device", "num_gpus", "gpu_memory_info",
    "get_cuda_compute_capability", "from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write",
    "check_call",
]
