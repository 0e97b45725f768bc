"""Fused recurrent layers ``RNN``, ``LSTM`` and ``GRU``: one ``rnn_param`` vector run by ``npx.rnn``.

As in MXNet 2.0, each layer owns ONE flat parameter ``rnn_param`` (filled by ``init.RNNFused``), so a
``.params`` file saved by MXNet loads as is.  States travel through the block machinery flattened
(``inputs, h[, c][, sequence_length]``) so that a hybridized layer compiles them as plain inputs;
``__call__`` regroups the outputs into MXNet's ``output`` or ``(output, [states])``.
"""
from __future__ import annotations

from typing import Any, Callable

from ... import initializer
from ... import numpy as np
from ... import numpy_extension as npx
from ..._ndarray import NDArray
from ...base import MXNetValueError
from ...device import current_device
from ...operator.rnn import param_size
from ..block import HybridBlock
from ..parameter import Parameter

__all__ = ["RNN", "LSTM", "GRU"]


def _make_state(func: Callable, info: dict) -> Any:
    """``func(shape=, dtype=[, device=])``; the device only when it is not the current one, so that
    ``np.zeros`` also works under deferred compute (hybridized forward), where its placement fails."""
    device = info.pop("device", None)
    kwargs = {"device": device} if device is not None and device != current_device() else {}
    return func(shape=info.pop("shape", ()), dtype=info.pop("dtype", "float32"), **kwargs)


class _FusedParameter(Parameter):
    """``rnn_param``: as MXNet's Parameter does for ``RNNFused``, every ``initialize`` first hands the
    global initializer to ``set_initializer`` (unset pieces take it), then initializes with RNNFused."""

    def initialize(self, init: Any = None, device: Any = None, default_init: Any = None,
                   force_reinit: bool = False) -> None:
        self.init.set_initializer(init if init else default_init if default_init is not None
                                  else initializer.Uniform())
        super().initialize(self.init, device, self.init, force_reinit)


class _RNNLayer(HybridBlock):
    """The fused recurrent layer; subclasses fix the mode and the states."""

    def __init__(self, hidden_size: int, num_layers: int, layout: str, dropout: float, bidirectional: bool,
                 input_size: int, i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any, mode: str, projection_size: int | None,
                 h2r_weight_initializer: Any, lstm_state_clip_min: float | None,
                 lstm_state_clip_max: float | None, lstm_state_clip_nan: bool, dtype: Any,
                 use_sequence_length: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise MXNetValueError(f"{type(self).__name__}: invalid layout {layout!r}; must be one of ['TNC' or 'NTC']")
        self._hidden_size, self._projection_size = hidden_size, projection_size or None
        self._num_layers, self._mode, self._layout, self._dropout = num_layers, mode, layout, dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._lstm_state_clip_min, self._lstm_state_clip_max = lstm_state_clip_min, lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype, self._use_sequence_length = dtype, use_sequence_length
        self.skip_states = None
        self._gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}[mode]
        init = initializer.RNNFused(mode, num_layers, hidden_size, bidirectional, projection_size,
                                    i2h_weight_initializer=i2h_weight_initializer,
                                    h2h_weight_initializer=h2h_weight_initializer,
                                    i2h_bias_initializer=i2h_bias_initializer,
                                    h2h_bias_initializer=h2h_bias_initializer,
                                    h2r_weight_initializer=h2r_weight_initializer)
        shape = (self._param_size(input_size),) if input_size else (-1,)
        self.rnn_param = _FusedParameter("rnn_param", shape=shape, init=init, allow_deferred_init=True, dtype=dtype)

    def _param_size(self, input_size: int) -> int:
        return param_size(self._mode, self._num_layers, self._dir, input_size, self._hidden_size,
                          self._projection_size)

    def __repr__(self) -> str:
        s = f"{type(self).__name__}({self._input_size or None} -> {self._hidden_size}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def state_info(self, batch_size: int = 0) -> list[dict]:
        raise NotImplementedError

    def cast(self, dtype: Any) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func: Callable = np.zeros, **kwargs: Any) -> list:
        """Initial states made by ``func(shape=, device=, dtype=)`` (zeros by default)."""
        states = []
        for info in self.state_info(batch_size):
            info = dict(info or {}, **kwargs)
            states.append(_make_state(func, info))
        return states

    def __call__(self, inputs: Any, states: Any = None, sequence_length: Any = None, **kwargs: Any) -> Any:
        self.skip_states = states is None
        if states is None:
            if getattr(inputs, "ndim", 3) != 3:
                raise MXNetValueError(f"{type(self).__name__}: input should be a rank-3 tensor "
                                      f"({self._layout}), got shape {tuple(inputs.shape)}")
            batch_size = inputs.shape[self._layout.find("N")]
            states = self.begin_state(batch_size, device=inputs.device, dtype=inputs.dtype)
        if isinstance(states, NDArray):
            states = [states]
        args = [inputs, *states] + ([sequence_length] if self._use_sequence_length else [])
        out = super().__call__(*args, **kwargs)
        return out[0] if self.skip_states else (out[0], list(out[1:]))

    def _split(self, args: tuple) -> tuple[list, Any]:
        """``(states, sequence_length)`` from MXNet's ``(states[, sequence_length])`` or the flat form."""
        if args and isinstance(args[0], (list, tuple)):
            return list(args[0]), (args[1] if len(args) > 1 else None)
        n = len(self.state_info())
        return list(args[:n]), (args[n] if len(args) > n else None)

    def _check_input(self, inputs: Any) -> None:
        if inputs.ndim != 3:
            raise MXNetValueError(f"{type(self).__name__}: input should be a rank-3 tensor ({self._layout}), "
                                  f"got shape {tuple(inputs.shape)}")
        known = self.rnn_param.shape
        if known and known[0] > 0 and self._param_size(inputs.shape[2]) != known[0]:
            base = self._param_size(0)  # the size is linear in the input size
            expected = (known[0] - base) // (self._param_size(1) - base)
            raise MXNetValueError(f"{type(self).__name__}: expected input size {expected} (last axis of "
                                  f"{self._layout}, fixed by rnn_param of shape {known}), got input of shape "
                                  f"{tuple(inputs.shape)}")

    def forward(self, inputs: Any, *args: Any) -> tuple:
        """Returns ``(output, *states)`` flat (``__call__`` regroups it)."""
        self._check_input(inputs)
        states, sequence_length = self._split(args)
        batch_size = inputs.shape[self._layout.find("N")]
        infos = self.state_info(batch_size)
        if len(states) != len(infos):
            raise MXNetValueError(f"{type(self).__name__}: expected {len(infos)} state(s), got {len(states)}")
        for state, info in zip(states, infos):
            if tuple(state.shape) != info["shape"]:
                raise MXNetValueError(f"Invalid recurrent state shape. Expecting {info['shape']}, "
                                      f"got {tuple(state.shape)}.")
        out, new_states = self._forward_kernel(inputs, states, sequence_length)
        return (out, *new_states)

    def infer_shape(self, inputs: Any, *args: Any) -> None:
        self._check_input(inputs)
        self._input_size = inputs.shape[2]
        self.rnn_param.shape = (self._param_size(self._input_size),)

    def _forward_kernel(self, inputs: Any, states: list, sequence_length: Any) -> tuple[Any, list]:
        if self._layout == "NTC":
            inputs = np.swapaxes(inputs, 0, 1)
        rnn_args = states + [sequence_length] if self._use_sequence_length else states
        rnn = npx.rnn(inputs, self.rnn_param.data(), *rnn_args, use_sequence_length=self._use_sequence_length,
                      state_size=self._hidden_size, projection_size=self._projection_size,
                      num_layers=self._num_layers, bidirectional=self._dir == 2, p=self._dropout,
                      state_outputs=True, mode=self._mode, lstm_state_clip_min=self._lstm_state_clip_min,
                      lstm_state_clip_max=self._lstm_state_clip_max, lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs, states = (rnn[0], [rnn[1], rnn[2]]) if self._mode == "lstm" else (rnn[0], [rnn[1]])
        if self._layout == "NTC":
            outputs = np.swapaxes(outputs, 0, 1)
        return outputs, states

    def _state(self, batch_size: int, size: int) -> dict:
        return {"shape": (self._num_layers * self._dir, batch_size, size), "__layout__": "LNC", "dtype": self._dtype}


class RNN(_RNNLayer):
    """Multi-layer Elman RNN with ``tanh`` or ``relu`` non-linearity (one state ``h``)."""

    def __init__(self, hidden_size: int, num_layers: int = 1, activation: str = "relu", layout: str = "TNC",
                 dropout: float = 0, bidirectional: bool = False, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0, dtype: Any = "float32",
                 **kwargs: Any) -> None:
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [self._state(batch_size, self._hidden_size)]


class LSTM(_RNNLayer):
    """Multi-layer LSTM (states ``[h, c]``), optionally projected (LSTMP) and state-clipped."""

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC", dropout: float = 0,
                 bidirectional: bool = False, input_size: int = 0, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", projection_size: int | None = None,
                 h2r_weight_initializer: Any = None, state_clip_min: float | None = None,
                 state_clip_max: float | None = None, state_clip_nan: bool = False, dtype: Any = "float32",
                 **kwargs: Any) -> None:
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [self._state(batch_size, self._projection_size or self._hidden_size),
                self._state(batch_size, self._hidden_size)]


class GRU(_RNNLayer):
    """Multi-layer GRU, cuDNN variant (reset gate applied after the h2h product; one state ``h``)."""

    def __init__(self, hidden_size: int, num_layers: int = 1, layout: str = "TNC", dropout: float = 0,
                 bidirectional: bool = False, input_size: int = 0, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", dtype: Any = "float32", **kwargs: Any) -> None:
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype, **kwargs)

    def state_info(self, batch_size: int = 0) -> list[dict]:
        return [self._state(batch_size, self._hidden_size)]
