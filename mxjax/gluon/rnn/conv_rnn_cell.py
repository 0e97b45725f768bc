"""Convolutional recurrent cells (ConvRNN, ConvLSTM, ConvGRU over 1, 2 or 3 spatial axes), as MXNet 2.0's.

They are the dense cells of ``rnn_cell`` with both transforms replaced by convolutions, so every
state is a feature map (Shi et al., 2015, "Convolutional LSTM Network").  The input transform may
shrink the map; the recurrent one is "same"-padded so the state keeps its size, which is why its
kernel has to be odd.  Stepping, ``begin_state`` and ``unroll`` come from ``HybridRecurrentCell``.

Where MXNet 2.0.0b1 fails, these cells work: the 'NWC' layout, kernels given as lists, and an
input channel count left as 0 to be inferred on the first call.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

from ... import numpy_extension as npx
from ...base import MXNetTypeError, MXNetValueError
from ..parameter import Parameter
from .rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]

# (channel-first, channel-last) layout for each number of spatial axes
_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


class _ConvCellArgError(MXNetValueError, AssertionError):
    """A bad constructor argument.  MXNet checks these with ``assert``, so this is an AssertionError too."""


def _int_tuple(cell: str, name: str, value: Any, length: int, allow_scalar: bool = True) -> tuple[int, ...]:
    """``value`` as a tuple of ``length`` ints (a single int is repeated when ``allow_scalar``)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if allow_scalar:
            return (int(value),) * length
        raise MXNetTypeError(f"{cell}: {name} must be a tuple of {length} ints, got {value!r}")
    if not isinstance(value, Sequence) or isinstance(value, str):
        kind = "an int or " if allow_scalar else ""
        raise MXNetTypeError(f"{cell}: {name} must be {kind}a tuple of {length} ints, got {value!r}")
    if len(value) != length or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                       for v in value):
        kind = "an int or " if allow_scalar else ""
        raise _ConvCellArgError(f"{cell}: {name} must be {kind}a tuple of {length} ints, got {value!r}")
    return tuple(int(v) for v in value)


class _ConvRecurrentCell(HybridRecurrentCell):
    """Shared machinery: argument checks, the four parameters, shapes of states, the two convolutions.

    Subclasses set ``_dims`` (spatial axes), ``_n_gates`` (blocks of ``hidden_channels`` output
    channels in each convolution) and ``_n_states``, and define ``_step``.
    """

    _dims = 0
    _n_gates = 1
    _n_states = 1

    def __init__(self, input_shape: Sequence[int], hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any,
                 i2h_pad: Any, i2h_dilate: Any, h2h_dilate: Any, i2h_weight_initializer: Any,
                 h2h_weight_initializer: Any, i2h_bias_initializer: Any, h2h_bias_initializer: Any,
                 conv_layout: str, activation: Any) -> None:
        super().__init__()
        cell, dims = type(self).__name__, self._dims
        if conv_layout not in _LAYOUTS[dims]:
            raise _ConvCellArgError(f"{cell}: conv_layout={conv_layout!r} is not supported; expected one "
                                        f"of {_LAYOUTS[dims]}")
        if not isinstance(hidden_channels, numbers.Integral) or hidden_channels < 1:
            raise _ConvCellArgError(f"{cell}: hidden_channels must be a positive int, got {hidden_channels!r}")
        shape = _int_tuple(cell, "input_shape", input_shape, dims + 1, allow_scalar=False)
        self._i2h_kernel = _int_tuple(cell, "i2h_kernel", i2h_kernel, dims)
        self._h2h_kernel = _int_tuple(cell, "h2h_kernel", h2h_kernel, dims)
        self._i2h_pad = _int_tuple(cell, "i2h_pad", i2h_pad, dims)
        self._i2h_dilate = _int_tuple(cell, "i2h_dilate", i2h_dilate, dims)
        self._h2h_dilate = _int_tuple(cell, "h2h_dilate", h2h_dilate, dims)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise _ConvCellArgError(f"{cell}: h2h_kernel={h2h_kernel!r} must be odd on every axis (the "
                                        "recurrent convolution is padded to keep the state's size)")
        if min(self._i2h_kernel + self._h2h_kernel + self._i2h_dilate + self._h2h_dilate) < 1 or \
                min(self._i2h_pad) < 0 or min(shape) < 0:
            raise _ConvCellArgError(f"{cell}: kernels and dilations must be positive and pads and "
                                        f"input_shape non-negative, got i2h_kernel={self._i2h_kernel}, "
                                        f"h2h_kernel={self._h2h_kernel}, i2h_dilate={self._i2h_dilate}, "
                                        f"h2h_dilate={self._h2h_dilate}, i2h_pad={self._i2h_pad}, "
                                        f"input_shape={shape}")

        self._hidden_channels = int(hidden_channels)
        self._input_shape = shape
        self._conv_layout = conv_layout
        self._channel_last = conv_layout == _LAYOUTS[dims][1]
        self._channel_axis = dims + 1 if self._channel_last else 1
        self._activation = activation
        self._h2h_pad = tuple(d * (k - 1) // 2 for k, d in zip(self._h2h_kernel, self._h2h_dilate))

        in_channels = shape[-1] if self._channel_last else shape[0]
        self._state_spatial = self._i2h_out_size(shape[:-1] if self._channel_last else shape[1:])
        rows = self._n_gates * self._hidden_channels
        self.i2h_weight = Parameter("i2h_weight", shape=self._weight_shape(rows, in_channels, self._i2h_kernel),
                                    init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight",
                                    shape=self._weight_shape(rows, self._hidden_channels, self._h2h_kernel),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(rows,), init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(rows,), init=h2h_bias_initializer, allow_deferred_init=True)

    # ------------------------------------------------------------------ shapes

    def _i2h_out_size(self, spatial: Sequence[int]) -> tuple[int, ...]:
        """Spatial size after the input convolution (stride 1); 0 stays 0 (unknown)."""
        out = []
        for size, k, p, d in zip(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate):
            n = size + 2 * p - d * (k - 1) if size else 0
            if size and n < 1:
                raise _ConvCellArgError(
                    f"{type(self).__name__}: i2h_kernel={self._i2h_kernel} with i2h_dilate={self._i2h_dilate} "
                    f"does not fit the input spatial size {tuple(spatial)} padded by {self._i2h_pad}")
            out.append(n)
        return tuple(out)

    def _weight_shape(self, rows: int, channels: int, kernel: tuple[int, ...]) -> tuple[int, ...]:
        return (rows, *kernel, channels) if self._channel_last else (rows, channels, *kernel)

    def _state_shape(self, batch_size: int, spatial: tuple[int, ...]) -> tuple[int, ...]:
        c = (self._hidden_channels,)
        return (batch_size, *spatial, *c) if self._channel_last else (batch_size, *c, *spatial)

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": self._state_shape(batch_size, self._state_spatial), "__layout__": self._conv_layout}
                for _ in range(self._n_states)]

    def infer_shape(self, i: int, x: Any, is_bidirect: bool) -> None:
        """Take the input channel count from the first input (when ``input_shape`` left it as 0)."""
        self._check_input(x)
        shape = list(self.i2h_weight.shape)
        shape[-1 if self._channel_last else 1] = x.shape[self._channel_axis]
        self.i2h_weight.shape = tuple(shape)

    # ------------------------------------------------------------------ checks

    def _check_input(self, x: Any) -> tuple[int, ...]:
        """Raise unless ``x`` is one step of input; returns the state shape it needs."""
        cell, dims = type(self).__name__, self._dims
        if x.ndim != dims + 2:
            raise MXNetValueError(f"{cell}: expected a {dims + 2}-D input {self._conv_layout} of shape "
                                  f"(batch_size, {', '.join(map(str, self._input_shape))}), got shape "
                                  f"{tuple(x.shape)}")
        got = tuple(x.shape[1:])
        channel_pos = dims if self._channel_last else 0
        weight_channels = self.i2h_weight.shape[-1 if self._channel_last else 1]
        wanted = list(self._input_shape)
        if weight_channels > 0:  # (-1 or 0 while not known)
            wanted[channel_pos] = weight_channels
        if any(w and w != g for w, g in zip(wanted, got)):
            raise MXNetValueError(f"{cell}: expected input of shape (batch_size, {', '.join(map(str, wanted))}) "
                                  f"({self._conv_layout}, 0 = any size) from input_shape={self._input_shape}, "
                                  f"got {tuple(x.shape)}")
        spatial = got[:-1] if self._channel_last else got[1:]
        return self._state_shape(x.shape[0], self._i2h_out_size(spatial))

    def _check_states(self, x: Any, states: list) -> None:
        want = self._check_input(x)
        got = [tuple(s.shape) for s in states]
        if got != [want] * self._n_states:
            raise MXNetValueError(f"{type(self).__name__}: expected {self._n_states} state(s) of shape {want} "
                                  f"for input of shape {tuple(x.shape)}, got {got}")

    # ------------------------------------------------------------------ compute

    def _conv(self, x: Any, weight: Parameter, bias: Parameter, kernel: tuple, pad: tuple, dilate: tuple) -> Any:
        return npx.convolution(data=x, weight=weight.data(), bias=bias.data(), kernel=kernel,
                               stride=(1,) * self._dims, pad=pad, dilate=dilate,
                               num_filter=self._n_gates * self._hidden_channels, layout=self._conv_layout)

    def _gates(self, x: Any, h: Any) -> tuple[list, list]:
        """Both convolutions, each split into its ``_n_gates`` channel blocks."""
        i2h = self._conv(x, self.i2h_weight, self.i2h_bias, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        h2h = self._conv(h, self.h2h_weight, self.h2h_bias, self._h2h_kernel, self._h2h_pad, self._h2h_dilate)
        if self._n_gates == 1:
            return [i2h], [h2h]
        split = dict(num_outputs=self._n_gates, axis=self._channel_axis)
        return list(npx.slice_channel(i2h, **split)), list(npx.slice_channel(h2h, **split))

    def forward(self, inputs: Any, states: list) -> tuple:
        self._check_states(inputs, states)
        i2h, h2h = self._gates(inputs, states[0])
        return self._step(i2h, h2h, states)

    def _step(self, i2h: list, h2h: list, states: list) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} is abstract")

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        channels = shape[-1 if self._channel_last else 1]
        return f"{type(self).__name__}({channels or None} -> {shape[0]}, {self._activation}, {self._conv_layout})"


class _ConvRNN(_ConvRecurrentCell):
    """``h' = act(W * x + b_i + R * h + b_h)``."""

    def _alias(self) -> str:
        return "conv_rnn"

    def _step(self, i2h: list, h2h: list, states: list) -> tuple:
        h = self._get_activation(i2h[0] + h2h[0], self._activation)
        return h, [h]


class _ConvLSTM(_ConvRecurrentCell):
    """Gates in MXNet's order (input, forget, candidate, output); states ``[h, c]``."""

    _n_gates = 4
    _n_states = 2

    def _alias(self) -> str:
        return "conv_lstm"

    def _step(self, i2h: list, h2h: list, states: list) -> tuple:
        i, f, g, o = (a + b for a, b in zip(i2h, h2h))
        c = npx.sigmoid(f) * states[1] + npx.sigmoid(i) * self._get_activation(g, self._activation)
        h = npx.sigmoid(o) * self._get_activation(c, self._activation)
        return h, [h, c]


class _ConvGRU(_ConvRecurrentCell):
    """Gates (reset, update, new); the reset gate scales the recurrent term including its bias."""

    _n_gates = 3

    def _alias(self) -> str:
        return "conv_gru"

    def _step(self, i2h: list, h2h: list, states: list) -> tuple:
        reset = npx.sigmoid(i2h[0] + h2h[0])
        update = npx.sigmoid(i2h[1] + h2h[1])
        new = self._get_activation(i2h[2] + reset * h2h[2], self._activation)
        h = (1. - update) * new + update * states[0]
        return h, [h]


# The three mixins below give the public classes MXNet's constructor signature for each rank.

class _Spatial1D:
    _dims = 1

    def __init__(self, input_shape: Sequence[int], hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any,
                 i2h_pad: Any = (0,), i2h_dilate: Any = (1,), h2h_dilate: Any = (1,),
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 conv_layout: str = "NCW", activation: Any = "tanh") -> None:
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, conv_layout, activation)


class _Spatial2D:
    _dims = 2

    def __init__(self, input_shape: Sequence[int], hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any,
                 i2h_pad: Any = (0, 0), i2h_dilate: Any = (1, 1), h2h_dilate: Any = (1, 1),
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 conv_layout: str = "NCHW", activation: Any = "tanh") -> None:
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, conv_layout, activation)


class _Spatial3D:
    _dims = 3

    def __init__(self, input_shape: Sequence[int], hidden_channels: int, i2h_kernel: Any, h2h_kernel: Any,
                 i2h_pad: Any = (0, 0, 0), i2h_dilate: Any = (1, 1, 1), h2h_dilate: Any = (1, 1, 1),
                 i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros",
                 conv_layout: str = "NCDHW", activation: Any = "tanh") -> None:
        super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad, i2h_dilate, h2h_dilate,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, conv_layout, activation)


class Conv1DRNNCell(_Spatial1D, _ConvRNN):
    """Convolutional Elman RNN cell on (batch, channels, width) maps ('NCW', or 'NWC')."""


class Conv2DRNNCell(_Spatial2D, _ConvRNN):
    """Convolutional Elman RNN cell on (batch, channels, height, width) maps ('NCHW', or 'NHWC')."""


class Conv3DRNNCell(_Spatial3D, _ConvRNN):
    """Convolutional Elman RNN cell on (batch, channels, depth, height, width) maps ('NCDHW', or 'NDHWC')."""


class Conv1DLSTMCell(_Spatial1D, _ConvLSTM):
    """Convolutional LSTM cell on 1-D maps ('NCW' or 'NWC'); states ``[h, c]``."""


class Conv2DLSTMCell(_Spatial2D, _ConvLSTM):
    """Convolutional LSTM cell on 2-D maps ('NCHW' or 'NHWC'); states ``[h, c]``."""


class Conv3DLSTMCell(_Spatial3D, _ConvLSTM):
    """Convolutional LSTM cell on 3-D maps ('NCDHW' or 'NDHWC'); states ``[h, c]``."""


class Conv1DGRUCell(_Spatial1D, _ConvGRU):
    """Convolutional GRU cell on 1-D maps ('NCW' or 'NWC')."""


class Conv2DGRUCell(_Spatial2D, _ConvGRU):
    """Convolutional GRU cell on 2-D maps ('NCHW' or 'NHWC')."""


class Conv3DGRUCell(_Spatial3D, _ConvGRU):
    """Convolutional GRU cell on 3-D maps ('NCDHW' or 'NDHWC')."""
