"""Normalization layers (BatchNorm, BatchNormReLU, SyncBatchNorm, LayerNorm, GroupNorm, InstanceNorm)
and Embedding."""
from __future__ import annotations

from typing import Any

import numpy as onp

from ... import numpy as np
from ... import numpy_extension as npx
from ...base import MXNetValueError, normalize_dtype
from ..block import HybridBlock
from ..parameter import Parameter

__all__ = ["BatchNorm", "BatchNormReLU", "SyncBatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "Embedding"]



def _channel_axis(block: HybridBlock, x: Any, axis: int) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise MXNetValueError(f"{type(block).__name__}: axis={axis} is out of range for an input of shape "
                              f"{tuple(x.shape)}")
    return axis % x.ndim


class _ScaleShift(HybridBlock):
    """gamma/beta of length in_channels (0: inferred from the input's ``axis``)."""

    def __init__(self, axis: int, center: bool, scale: bool, beta_initializer: Any, gamma_initializer: Any,
                 in_channels: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._axis, self._center, self._scale = axis, center, scale
        self.gamma = Parameter("gamma", grad_req="write" if scale else "null", shape=(in_channels,),
                               init=gamma_initializer, allow_deferred_init=True, differentiable=scale)
        self.beta = Parameter("beta", grad_req="write" if center else "null", shape=(in_channels,),
                              init=beta_initializer, allow_deferred_init=True, differentiable=center)

    def infer_shape(self, x: Any, *args: Any) -> None:
        channels = x.shape[_channel_axis(self, x, self._axis)]
        for param in self._reg_params.values():
            param.shape = (channels,)

    def _described(self) -> dict:
        """What ``repr`` lists before ``in_channels``, in MXNet's order (its ``_kwargs``)."""
        return {"eps": self._epsilon, "axis": self._axis, "center": self._center, "scale": self._scale}

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._described().items())
        return f"{type(self).__name__}({fields}, in_channels={self.gamma.shape[0] or None})"


class BatchNorm(_ScaleShift):
    """Batch normalization over every axis but ``axis``.

    In training (``autograd.record()``) the batch statistics normalize and the
    running ones move: ``running = momentum * running + (1 - momentum) * batch``;
    otherwise (or with ``use_global_stats``) the running statistics normalize.
    """

    def __init__(self, axis: int = 1, momentum: float = 0.9, epsilon: float = 1e-5, center: bool = True,
                 scale: bool = True, use_global_stats: bool = False, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", running_mean_initializer: Any = "zeros",
                 running_variance_initializer: Any = "ones", in_channels: int = 0, **kwargs: Any) -> None:
        super().__init__(axis, center, scale, beta_initializer, gamma_initializer, in_channels, **kwargs)
        self._momentum, self._epsilon, self._use_global_stats = momentum, epsilon, use_global_stats
        self.running_mean = Parameter("running_mean", grad_req="null", shape=(in_channels,),
                                      init=running_mean_initializer, allow_deferred_init=True,
                                      differentiable=False)
        self.running_var = Parameter("running_var", grad_req="null", shape=(in_channels,),
                                     init=running_variance_initializer, allow_deferred_init=True,
                                     differentiable=False)

    def cast(self, dtype: Any) -> None:
        # as MXNet: float16 data keeps float32 statistics and scale
        if onp.dtype(normalize_dtype(dtype)) == onp.float16:
            dtype = "float32"
        super().cast(dtype)

    def forward(self, x: Any) -> Any:
        inputs = [x, self.gamma.data(), self.beta.data(), self.running_mean.data(), self.running_var.data()]
        params = dict(eps=self._epsilon, momentum=self._momentum, fix_gamma=not self._scale,
                      use_global_stats=self._use_global_stats, axis=self._axis)
        return npx.batch_norm(*inputs, **params)

    def _described(self) -> dict:
        return {"axis": self._axis, "eps": self._epsilon, "momentum": self._momentum, "fix_gamma": not self._scale,
                "use_global_stats": self._use_global_stats}


class BatchNormReLU(BatchNorm):
    """``relu(BatchNorm(x))``: batch normalization followed by a ReLU (MXNet fuses the two into one
    oneDNN op; here XLA fuses them, and an export writes a BatchNorm and a relu node)."""

    def forward(self, x: Any) -> Any:
        return npx.relu(super().forward(x))


class SyncBatchNorm(BatchNorm):
    """Batch normalization whose statistics span the whole batch across ``num_devices`` devices.

    mxjax runs a block's batch in one process on one device, so the batch statistics are
    already those of the whole batch: this is BatchNorm over axis 1 (``num_devices`` is
    accepted and checked, not needed).
    """

    def __init__(self, in_channels: int = 0, num_devices: int | None = None, momentum: float = 0.9,
                 epsilon: float = 1e-5, center: bool = True, scale: bool = True, use_global_stats: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 running_mean_initializer: Any = "zeros", running_variance_initializer: Any = "ones",
                 **kwargs: Any) -> None:
        if num_devices is not None and (not isinstance(num_devices, int) or num_devices < 1):
            raise MXNetValueError(f"SyncBatchNorm: num_devices must be a positive int, got {num_devices!r}")
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats, beta_initializer,
                         gamma_initializer, running_mean_initializer, running_variance_initializer,
                         in_channels, **kwargs)
        self._num_devices = num_devices or 1

    def _described(self) -> dict:  # (MXNet also lists the random key it names the devices' exchange by)
        described = super()._described()
        del described["axis"]
        return {**described, "ndev": self._num_devices}


class LayerNorm(_ScaleShift):
    """Normalize along ``axis`` (default the last), then scale by gamma and shift by beta."""

    def __init__(self, axis: int = -1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(axis, center, scale, beta_initializer, gamma_initializer, in_channels, **kwargs)
        self._epsilon = epsilon

    def forward(self, x: Any) -> Any:
        return npx.layer_norm(x, self.gamma.data(), self.beta.data(), axis=self._axis, eps=self._epsilon)


class GroupNorm(_ScaleShift):
    """Normalize each of ``num_groups`` groups of the channels (axis 1) of ``(N, C, ...)`` data."""

    def __init__(self, num_groups: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = True,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(1, center, scale, beta_initializer, gamma_initializer, in_channels, **kwargs)
        self._num_groups, self._epsilon = num_groups, epsilon

    def forward(self, x: Any) -> Any:
        return npx.group_norm(x, self.gamma.data(), self.beta.data(), num_groups=self._num_groups,
                              eps=self._epsilon)

    def _described(self) -> dict:
        return {"eps": self._epsilon, "num_groups": self._num_groups, "center": self._center, "scale": self._scale}


class InstanceNorm(_ScaleShift):
    """Normalize each (instance, channel) over the other axes; the channel axis is ``axis``."""

    def __init__(self, axis: int = 1, epsilon: float = 1e-5, center: bool = True, scale: bool = False,
                 beta_initializer: Any = "zeros", gamma_initializer: Any = "ones", in_channels: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(axis, center, scale, beta_initializer, gamma_initializer, in_channels, **kwargs)
        self._epsilon = epsilon

    def forward(self, x: Any) -> Any:
        axis = _channel_axis(self, x, self._axis)
        if axis == 1:
            return npx.instance_norm(x, self.gamma.data(), self.beta.data(), eps=self._epsilon)
        # the op normalizes with channels on axis 1, as MXNet's layer does by swapping axes
        out = npx.instance_norm(np.swapaxes(x, 1, axis), self.gamma.data(), self.beta.data(), eps=self._epsilon)
        return np.swapaxes(out, 1, axis)


class Embedding(HybridBlock):
    """Rows of a learned ``(input_dim, output_dim)`` table picked by integer indices."""

    def __init__(self, input_dim: int, output_dim: int, dtype: Any = "float32", weight_initializer: Any = None,
                 sparse_grad: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if sparse_grad:
            raise MXNetValueError("Embedding: sparse_grad=True is not supported (gradients are dense)")
        self._input_dim, self._output_dim, self._dtype = input_dim, output_dim, dtype
        self.weight = Parameter("weight", shape=(input_dim, output_dim), init=weight_initializer, dtype=dtype)

    def forward(self, x: Any) -> Any:
        return npx.embedding(x, self.weight.data(), input_dim=self._input_dim, output_dim=self._output_dim,
                             dtype=self._dtype)

    def __repr__(self) -> str:
        return f"Embedding({self._input_dim} -> {self._output_dim}, {self._dtype})"
