"""Convolution, transposed-convolution and pooling layers (1-D, 2-D and 3-D) over ``npx`` ops, and
ReflectionPad2D."""
from __future__ import annotations

import inspect
from typing import Any

from ... import numpy as np
from ... import numpy_extension as npx
from ...base import MXNetValueError
from ...operator import get_op
from ..block import HybridBlock
from ..parameter import Parameter
from .basic_layers import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]


def _tuple(name: str, value: Any, n: int) -> tuple:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise MXNetValueError(f"{name} must be an int or a tuple of {n} ints, got {value}")
    return value


def _check_rank(block: HybridBlock, x: Any, nspatial: int, layout: str) -> None:
    # the op would say the same, but without naming the layer the user wrote
    if x.ndim != nspatial + 2:
        raise MXNetValueError(f"{type(block).__name__}: input of shape {tuple(x.shape)} must be {nspatial + 2}-D "
                              f"(layout {layout}: batch, channel and {nspatial} spatial axes)")


class _Conv(HybridBlock):
    """Shared body of Conv*D and Conv*DTranspose: weight ``(out, in/groups, *k)`` (or ``(in, out/groups, *k)``)."""

    _transpose = False
    _nspatial = 2
    _layouts: tuple = ()

    def __init__(self, channels: int, kernel_size: Any, strides: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, layout: str | None = None, activation: str | None = None, use_bias: bool = True,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros", in_channels: int = 0,
                 output_padding: Any = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        n = self._nspatial
        layout = layout or self._layouts[0]
        if layout not in self._layouts:
            raise MXNetValueError(f"{type(self).__name__}: layout must be one of {self._layouts}, got {layout!r}")
        self._channels, self._in_channels, self._groups, self._layout = channels, in_channels, groups, layout
        self._kernel = _tuple("kernel_size", kernel_size, n)
        self._strides = _tuple("strides", strides, n)
        self._padding = _tuple("padding", padding, n)
        self._dilation = _tuple("dilation", dilation, n)
        self._adj = _tuple("output_padding", output_padding, n)
        self._channel_last = layout.endswith("C")
        self.weight = Parameter("weight", shape=self._weight_shape(in_channels), init=weight_initializer,
                                allow_deferred_init=True)
        self.bias = Parameter("bias", shape=(channels,), init=bias_initializer,
                              allow_deferred_init=True) if use_bias else None
        self.act = Activation(activation) if activation is not None else None

    def _weight_shape(self, in_channels: int) -> tuple:
        """The weight's shape by the op's own rule (0s where ``in_channels`` is not known yet)."""
        spatial = (0,) * self._nspatial
        data = (0, *spatial, in_channels) if self._channel_last else (0, in_channels, *spatial)
        op = get_op("Deconvolution" if self._transpose else "Convolution")
        params = {"kernel": self._kernel, "num_filter": self._channels, "num_group": self._groups,
                  "layout": self._layout}
        return op.param_shapes([data], params)[1]

    def infer_shape(self, x: Any, *args: Any) -> None:
        _check_rank(self, x, self._nspatial, self._layout)
        channels = x.shape[-1] if self._channel_last else x.shape[1]
        if channels % self._groups:
            raise MXNetValueError(f"{type(self).__name__}: groups={self._groups} does not divide the {channels} "
                                  f"input channels of an input of shape {tuple(x.shape)}")
        self.weight.shape = self._weight_shape(channels)

    def forward(self, x: Any) -> Any:
        _check_rank(self, x, self._nspatial, self._layout)
        bias = self.bias.data() if self.bias is not None else None
        common = dict(kernel=self._kernel, stride=self._strides, dilate=self._dilation, pad=self._padding,
                      num_filter=self._channels, num_group=self._groups, no_bias=bias is None,
                      layout=self._layout)
        if self._transpose:
            out = npx.deconvolution(x, self.weight.data(), bias, adj=self._adj, **common)
        else:
            out = npx.convolution(x, self.weight.data(), bias, **common)
        return self.act(out) if self.act is not None else out

    def __repr__(self) -> str:
        shape = self.weight.shape
        cin = shape[0] if self._transpose else shape[-1 if self._channel_last else 1]
        cin = (cin if self._transpose else cin * self._groups) if cin > 0 else (cin or None)  # (-1: not known)
        text = f"{type(self).__name__}({cin} -> {self._channels}, kernel_size={self._kernel}, stride={self._strides}"
        n = len(self._kernel)  # then what differs from the defaults, as MXNet lists it
        for label, value, default in (("padding", self._padding, (0,) * n), ("dilation", self._dilation, (1,) * n),
                                      ("output_padding", self._adj if self._transpose else None, (0,) * n),
                                      ("groups", self._groups, 1)):
            if value is not None and value != default:
                text += f", {label}={value}"
        if self.bias is None:
            text += ", bias=False"
        return text + (f", {self.act})" if self.act is not None else ")")


class Conv1D(_Conv):
    """1-D convolution over ``(N, C, W)`` data (layout 'NCW' or 'NWC')."""
    _nspatial, _layouts = 1, ("NCW", "NWC")


class Conv2D(_Conv):
    """2-D convolution over ``(N, C, H, W)`` data (layout 'NCHW' or 'NHWC')."""
    _nspatial, _layouts = 2, ("NCHW", "NHWC")


class Conv3D(_Conv):
    """3-D convolution over ``(N, C, D, H, W)`` data (layout 'NCDHW' or 'NDHWC')."""
    _nspatial, _layouts = 3, ("NCDHW", "NDHWC")


class Conv1DTranspose(_Conv):
    """1-D transposed convolution; ``output_padding`` adds to one side of the output."""
    _nspatial, _layouts, _transpose = 1, ("NCW", "NWC"), True


class Conv2DTranspose(_Conv):
    """2-D transposed convolution; ``output_padding`` adds to one side of the output."""
    _nspatial, _layouts, _transpose = 2, ("NCHW", "NHWC"), True


class Conv3DTranspose(_Conv):
    """3-D transposed convolution; ``output_padding`` adds to one side of the output."""
    _nspatial, _layouts, _transpose = 3, ("NCDHW", "NDHWC"), True


# -------------------------------------------------------------------- pooling

class _Pooling(HybridBlock):
    _nspatial = 2
    _layouts: tuple = ()
    _pool_type = "max"
    _global = False

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 layout: str | None = None, count_include_pad: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        n = self._nspatial
        layout = layout or self._layouts[0]
        if layout not in self._layouts:
            raise MXNetValueError(f"{type(self).__name__}: layout must be one of {self._layouts}, got {layout!r}")
        self._layout = layout
        self._kernel = _tuple("pool_size", pool_size, n)
        self._strides = self._kernel if strides is None else _tuple("strides", strides, n)
        self._padding = _tuple("padding", padding, n)
        self._ceil_mode, self._count_include_pad = ceil_mode, count_include_pad

    def forward(self, x: Any) -> Any:
        _check_rank(self, x, self._nspatial, self._layout)
        params = dict(kernel=(1,) * self._nspatial if self._global else self._kernel, pool_type=self._pool_type,
                      global_pool=self._global, pooling_convention="full" if self._ceil_mode else "valid",
                      layout=self._layout)
        if not self._global:
            params.update(stride=self._strides, pad=self._padding)
        if self._pool_type == "avg":
            params["count_include_pad"] = self._count_include_pad
        return npx.pooling(x, **params)

    def __repr__(self) -> str:
        n = len(self._layout) - 2
        size, stride, pad, ceil = ((1,) * n, (1,) * n, (0,) * n, True) if self._global else (
            self._kernel, self._strides, self._padding, self._ceil_mode)
        return (f"{type(self).__name__}(size={size}, stride={stride}, padding={pad}, ceil_mode={ceil}, "
                f"global_pool={self._global}, pool_type={self._pool_type}, layout={self._layout})")


def _pool_class(name: str, n: int, layouts: tuple, pool_type: str, is_global: bool, doc: str,
                order: tuple = ()) -> type:
    """A pooling layer class whose constructor takes MXNet's arguments in MXNet's order, which differs
    between layers (``MaxPool2D(pool_size, strides, padding, layout, ceil_mode)``, ``AvgPool2D(pool_size,
    strides, padding, ceil_mode, layout, count_include_pad)``; global pooling takes ``layout``)."""
    defaults = {"pool_size": 2 if n == 1 else (2,) * n, "strides": None, "padding": 0, "ceil_mode": False,
                "layout": layouts[0], "count_include_pad": True}
    order = ("layout",) if is_global else order
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature([inspect.Parameter("self", kind)]
                                  + [inspect.Parameter(p, kind, default=defaults[p]) for p in order]
                                  + [inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        values = signature.bind(self, *args, **kwargs)
        values.apply_defaults()
        arguments = dict(values.arguments)
        arguments.pop("self")
        _Pooling.__init__(self, **arguments.pop("kwargs"), **arguments)
    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                                    "_nspatial": n, "_layouts": layouts, "_pool_type": pool_type,
                                    "_global": is_global})


_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
_MAX_ORDER = ("pool_size", "strides", "padding", "layout", "ceil_mode")  # (MaxPool3D: ceil_mode first)
_AVG_ORDER = ("pool_size", "strides", "padding", "ceil_mode", "layout", "count_include_pad")  # (AvgPool1D: layout)
MaxPool1D = _pool_class("MaxPool1D", 1, _LAYOUTS[1], "max", False, "1-D max pooling (pool_size, strides, ...).",
                        _MAX_ORDER)
MaxPool2D = _pool_class("MaxPool2D", 2, _LAYOUTS[2], "max", False, "2-D max pooling (pool_size, strides, ...).",
                        _MAX_ORDER)
MaxPool3D = _pool_class("MaxPool3D", 3, _LAYOUTS[3], "max", False, "3-D max pooling (pool_size, strides, ...).",
                        ("pool_size", "strides", "padding", "ceil_mode", "layout"))
AvgPool1D = _pool_class("AvgPool1D", 1, _LAYOUTS[1], "avg", False, "1-D average pooling (count_include_pad=True).",
                        ("pool_size", "strides", "padding", "layout", "ceil_mode", "count_include_pad"))
AvgPool2D = _pool_class("AvgPool2D", 2, _LAYOUTS[2], "avg", False, "2-D average pooling (count_include_pad=True).",
                        _AVG_ORDER)
AvgPool3D = _pool_class("AvgPool3D", 3, _LAYOUTS[3], "avg", False, "3-D average pooling (count_include_pad=True).",
                        _AVG_ORDER)
GlobalMaxPool1D = _pool_class("GlobalMaxPool1D", 1, _LAYOUTS[1], "max", True, "Global max pooling.")
GlobalMaxPool2D = _pool_class("GlobalMaxPool2D", 2, _LAYOUTS[2], "max", True, "Global max pooling.")
GlobalMaxPool3D = _pool_class("GlobalMaxPool3D", 3, _LAYOUTS[3], "max", True, "Global max pooling.")
GlobalAvgPool1D = _pool_class("GlobalAvgPool1D", 1, _LAYOUTS[1], "avg", True, "Global average pooling.")
GlobalAvgPool2D = _pool_class("GlobalAvgPool2D", 2, _LAYOUTS[2], "avg", True, "Global average pooling.")
GlobalAvgPool3D = _pool_class("GlobalAvgPool3D", 3, _LAYOUTS[3], "avg", True, "Global average pooling.")


class ReflectionPad2D(HybridBlock):
    """Pad the last two axes of ``(N, C, H, W)`` data by reflection (the edge is not repeated).

    ``padding``: an int (that much on each side of H and W), or MXNet's 8-tuple of
    ``(before, after)`` pairs per axis, whose N and C pairs must be 0.
    """

    def __init__(self, padding: Any = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(padding, int):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        padding = tuple(int(p) for p in padding)
        if len(padding) != 8 or any(padding[:4]):
            raise MXNetValueError(f"ReflectionPad2D: padding must be an int or 8 ints with the first four 0 "
                                  f"(only H and W are padded), got {padding}")
        self._padding = padding

    def forward(self, x: Any) -> Any:
        if x.ndim != 4:
            raise MXNetValueError(f"ReflectionPad2D: input of shape {tuple(x.shape)} must be 4-D (N, C, H, W)")
        pairs = tuple(self._padding[i:i + 2] for i in range(0, 8, 2))
        return np.pad(x, pairs, mode="reflect")

