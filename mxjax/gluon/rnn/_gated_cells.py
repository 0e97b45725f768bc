"""The dense gated cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and ``LSTMPCell``, with ``_GatedCell``,
their shared i2h/h2h weights, shape checks and deferred shape inference.

They hold the per-step arithmetic of one recurrent layer, apart from the cells that stack or wrap
other cells; ``rnn_cell`` re-exports them at MXNet's path.
"""
from __future__ import annotations

from typing import Any

from ... import numpy_extension as npx
from ...base import MXNetValueError
from ..parameter import Parameter
from ._cell_base import HybridRecurrentCell


class _GatedCell(HybridRecurrentCell):
    """i2h/h2h weights and biases with ``gates * hidden_size`` rows (RNN, LSTM, GRU cells)."""

    _n_gates = 1

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any, h2h_weight_initializer: Any,
                 i2h_bias_initializer: Any, h2h_bias_initializer: Any, input_size: int,
                 recurrent_size: int | None = None) -> None:
        super().__init__()
        rows = self._n_gates * hidden_size
        self._hidden_size, self._input_size = hidden_size, input_size
        self.i2h_weight = Parameter("i2h_weight", shape=(rows, input_size), init=i2h_weight_initializer,
                                    allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight", shape=(rows, recurrent_size or hidden_size),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(rows,), init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(rows,), init=h2h_bias_initializer, allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}] * (2 if self._n_gates == 4 else 1)

    def _out_size(self) -> int:
        return self._hidden_size

    def infer_shape(self, i: int, x: Any, is_bidirect: bool) -> None:
        rows = self._n_gates * self._hidden_size
        if i == 0:
            self.i2h_weight.shape = (rows, x.shape[x.ndim - 1])
        else:
            self.i2h_weight.shape = (rows, self._out_size() * (2 if is_bidirect else 1))

    def _check(self, inputs: Any, states: list) -> None:
        expected = self.i2h_weight.shape[1]  # (-1 or 0 while not known)
        if inputs.ndim != 2 or (expected > 0 and inputs.shape[1] != expected):
            raise MXNetValueError(f"{type(self).__name__}: expected input of shape (batch_size, "
                                  f"{expected if expected > 0 else '?'}), "
                                  f"got {tuple(inputs.shape)}")
        infos = self.state_info(inputs.shape[0])
        if len(states) != len(infos) or any(tuple(s.shape) != i["shape"] for s, i in zip(states, infos)):
            raise MXNetValueError(f"{type(self).__name__}: expected states of shapes {[i['shape'] for i in infos]}, "
                                  f"got {[tuple(s.shape) for s in states]}")

    def _i2h_h2h(self, inputs: Any, h: Any) -> tuple[Any, Any]:
        rows = self._n_gates * self._hidden_size
        i2h = npx.fully_connected(inputs, weight=self.i2h_weight.data(), bias=self.i2h_bias.data(),
                                  num_hidden=rows, no_bias=False)
        h2h = npx.fully_connected(h, weight=self.h2h_weight.data(), bias=self.h2h_bias.data(),
                                  num_hidden=rows, no_bias=False)
        return i2h, h2h

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        return f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]})"


class RNNCell(_GatedCell):
    """Elman RNN cell: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``."""

    def __init__(self, hidden_size: int, activation: Any = "tanh", i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = "zeros",
                 h2h_bias_initializer: Any = "zeros", input_size: int = 0) -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size)
        self._activation = activation

    def _alias(self) -> str:
        return "rnn"

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        return f"RNNCell({shape[1] if shape[1] else None} -> {shape[0]}, {self._activation})"

    def forward(self, inputs: Any, states: list) -> tuple:
        self._check(inputs, states)
        i2h, h2h = self._i2h_h2h(inputs, states[0])
        output = self._get_activation(i2h + h2h, self._activation)
        return output, [output]


class _RecurrentActivationCell(_GatedCell):
    """A gated cell with MXNet's ``activation`` and ``recurrent_activation`` (LSTM, GRU cells)."""

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 activation: Any = "tanh", recurrent_activation: Any = "sigmoid") -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size)
        self._activation, self._recurrent_activation = activation, recurrent_activation


class LSTMCell(_RecurrentActivationCell):
    """LSTM cell (gates in MXNet's order i, f, g, o); states ``[h, c]``."""

    _n_gates = 4

    def _alias(self) -> str:
        return "lstm"

    def forward(self, inputs: Any, states: list) -> tuple:
        self._check(inputs, states)
        i2h, h2h = self._i2h_h2h(inputs, states[0])
        gates = npx.slice_channel(i2h + h2h, num_outputs=4)
        in_gate = self._get_activation(gates[0], self._recurrent_activation)
        forget_gate = self._get_activation(gates[1], self._recurrent_activation)
        in_transform = self._get_activation(gates[2], self._activation)
        out_gate = self._get_activation(gates[3], self._recurrent_activation)
        next_c = forget_gate * states[1] + in_gate * in_transform
        next_h = out_gate * npx.activation(next_c, act_type=self._activation)
        return next_h, [next_h, next_c]


class GRUCell(_RecurrentActivationCell):
    """GRU cell, cuDNN variant (reset gate applied after the h2h product); gates r, z, n."""

    _n_gates = 3

    def _alias(self) -> str:
        return "gru"

    def forward(self, inputs: Any, states: list) -> tuple:
        self._check(inputs, states)
        prev_h = states[0]
        i2h, h2h = self._i2h_h2h(inputs, prev_h)
        i2h_r, i2h_z, i2h = npx.slice_channel(i2h, num_outputs=3)
        h2h_r, h2h_z, h2h = npx.slice_channel(h2h, num_outputs=3)
        reset_gate = self._get_activation(i2h_r + h2h_r, self._recurrent_activation)
        update_gate = self._get_activation(i2h_z + h2h_z, self._recurrent_activation)
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation)
        next_h = (1 - update_gate) * next_h_tmp + update_gate * prev_h
        return next_h, [next_h]


class LSTMPCell(_GatedCell):
    """Projected LSTM cell: ``r_t = W_hr h_t``; states ``[r, c]`` of sizes projection_size, hidden_size."""

    _n_gates = 4

    def __init__(self, hidden_size: int, projection_size: int, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, h2r_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0) -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size, recurrent_size=projection_size)
        self._projection_size = projection_size
        self.h2r_weight = Parameter("h2r_weight", shape=(projection_size, hidden_size), init=h2r_weight_initializer,
                                    allow_deferred_init=True)

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _out_size(self) -> int:
        return self._projection_size

    def _alias(self) -> str:
        return "lstmp"

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        return f"LSTMPCell({shape[1] if shape[1] else None} -> {shape[0]} -> {self.h2r_weight.shape[0]})"

    def forward(self, inputs: Any, states: list) -> tuple:
        self._check(inputs, states)
        i2h, h2h = self._i2h_h2h(inputs, states[0])
        gates = npx.slice_channel(i2h + h2h, num_outputs=4)
        in_gate = npx.activation(gates[0], act_type="sigmoid")
        forget_gate = npx.activation(gates[1], act_type="sigmoid")
        in_transform = npx.activation(gates[2], act_type="tanh")
        out_gate = npx.activation(gates[3], act_type="sigmoid")
        next_c = forget_gate * states[1] + in_gate * in_transform
        hidden = out_gate * npx.activation(next_c, act_type="tanh")
        next_r = npx.fully_connected(hidden, num_hidden=self._projection_size, weight=self.h2r_weight.data(),
                                     no_bias=True)
        return next_r, [next_r, next_c]
