"""Deformable convolution layers (v1 and the modulated v2): a convolution predicts the sampling offsets
(and, for v2, the masks) from the input, then the deformable convolution samples at them."""
from __future__ import annotations

from typing import Any

from ... import numpy_extension as npx
from ...base import MXNetValueError
from ..block import HybridBlock
from ..parameter import Parameter
from .basic_layers import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(value: Any, n: int) -> tuple:
    return (int(value),) * n if isinstance(value, (int, float)) else tuple(int(v) for v in value)


class _Deformable(HybridBlock):
    _modulated = False

    def __init__(self, channels: int, kernel_size: Any = (1, 1), strides: Any = (1, 1), padding: Any = (0, 0),
                 dilation: Any = (1, 1), groups: int = 1, num_deformable_group: int = 1, layout: str = "NCHW",
                 use_bias: bool = True, in_channels: int = 0, activation: str | None = None,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 offset_weight_initializer: Any = "zeros", offset_bias_initializer: Any = "zeros",
                 offset_use_bias: bool = True, op_name: str | None = None, adj: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if layout not in ("NCHW", "NHWC"):
            raise MXNetValueError(f"{name}: only 'NCHW' and 'NHWC' layouts are supported, got {layout!r}")
        kernel = _pair(kernel_size, 2)
        self._channels, self._in_channels, self._groups, self._layout = channels, in_channels, groups, layout
        self._kernel_size, self._op_name = kernel, op_name or name
        taps = kernel[0] * kernel[1]
        self._offset_channels = (3 if self._modulated else 2) * taps * num_deformable_group
        self.offset_split_index = 2 * taps * num_deformable_group
        common = {"kernel": kernel, "stride": _pair(strides, 2), "dilate": _pair(dilation, 2),
                  "pad": _pair(padding, 2), "num_group": groups, "layout": layout}
        self._kwargs_offset = {**common, "num_filter": self._offset_channels, "no_bias": not offset_use_bias}
        self._kwargs_deformable_conv = {**common, "num_filter": channels,
                                        "num_deformable_group": num_deformable_group, "no_bias": not use_bias}
        if adj:
            self._kwargs_offset["adj"] = self._kwargs_deformable_conv["adj"] = adj
        # MXNet creates the parameters in this order for v1, and the deformable ones first for v2
        offset = [("offset_weight", self._weight_shape(self._offset_channels), offset_weight_initializer),
                  ("offset_bias", (self._offset_channels,) if offset_use_bias else None, offset_bias_initializer)]
        conv = [("deformable_conv_weight", self._weight_shape(channels), weight_initializer),
                ("deformable_conv_bias", (channels,) if use_bias else None, bias_initializer)]
        for attr, shape, init in (conv + offset if self._modulated else offset + conv):
            setattr(self, attr, None if shape is None else
                    Parameter(attr, shape=shape, init=init, allow_deferred_init=True))
        self.act = Activation(activation) if activation else None

    def _weight_shape(self, out_channels: int) -> tuple:
        per_group = self._in_channels // self._groups if self._in_channels else 0
        kh, kw = self._kernel_size
        return (out_channels, per_group, kh, kw) if self._layout == "NCHW" else (out_channels, kh, kw, per_group)

    def infer_shape(self, x: Any, *args: Any) -> None:
        name = type(self).__name__
        if x.ndim != 4:
            raise MXNetValueError(f"{name}: input of shape {tuple(x.shape)} must be 4-D (layout {self._layout})")
        channels = x.shape[self._layout.find("C")]
        if channels % self._groups:
            raise MXNetValueError(f"{name}: groups={self._groups} does not divide the {channels} input channels "
                                  f"of an input of shape {tuple(x.shape)}")
        self._in_channels = channels
        self.deformable_conv_weight.shape = self._weight_shape(self._channels)
        self.offset_weight.shape = self._weight_shape(self._offset_channels)

    def _offset(self, x: Any) -> Any:
        bias = self.offset_bias.data() if self.offset_bias is not None else None
        return npx.convolution(x, self.offset_weight.data(), bias, cudnn_off=True, **self._kwargs_offset)

    def _finish(self, out: Any) -> Any:
        return self.act(out) if self.act is not None else out

    def _alias(self) -> str:
        return "modulated_deformable_conv" if self._modulated else "deformable_conv"

    def __repr__(self) -> str:
        kw = self._kwargs_deformable_conv
        s = f"{type(self).__name__}({self._in_channels or None} -> {self._channels}, kernel_size={kw['kernel']}, " \
            f"stride={kw['stride']}"
        if kw["pad"] != (0, 0):
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1, 1):
            s += f", dilation={kw['dilate']}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act}"
        return s + ")"


class DeformableConvolution(_Deformable):
    """2-D deformable convolution v1 (Dai et al., 2017): an offset convolution (initialised to zeros, so
    training starts from a regular convolution) gives each kernel tap's sampling offset."""

    def forward(self, x: Any) -> Any:
        bias = self.deformable_conv_bias.data() if self.deformable_conv_bias is not None else None
        return self._finish(npx.deformable_convolution(x, self._offset(x), self.deformable_conv_weight.data(), bias,
                                                       **self._kwargs_deformable_conv))


class ModulatedDeformableConvolution(_Deformable):
    """2-D modulated deformable convolution v2 (Zhu et al., 2018): the offset convolution also gives one
    mask per tap, ``2 * sigmoid(.)``, that scales each sample."""

    _modulated = True

    def forward(self, x: Any) -> Any:
        offset = self._offset(x)
        split = self.offset_split_index
        mask = npx.sigmoid(offset[:, split:]) * 2
        bias = self.deformable_conv_bias.data() if self.deformable_conv_bias is not None else None
        return self._finish(npx.modulated_deformable_convolution(
            x, offset[:, :split], mask, self.deformable_conv_weight.data(), bias, **self._kwargs_deformable_conv))
