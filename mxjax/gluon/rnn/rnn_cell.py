"""Recurrent cells (one time step per call) and their ``unroll`` over a sequence, as MXNet 2.0's.

A hybrid cell is called ``cell(inputs, states)`` and its ``forward(inputs, states)`` returns
``(output, new_states)``, as in MXNet; underneath, the block machinery sees the states flattened
(``inputs, *states`` in, ``output, *new_states`` out), so a hybridized cell compiles them as plain
arrays.  Children are held directly (MXNet 2.0 holds weak references and calls ``cell()``).
"""
from __future__ import annotations

from typing import Any, Callable

from ... import numpy as np
from ... import numpy_extension as npx
from ..._ndarray import NDArray
from ...base import MXNetError, MXNetValueError, numeric_types
from ...device import current_device
from ..block import Block, HybridBlock
from ..nn import LeakyReLU
from ..parameter import Parameter, _known
from ..utils import _indent

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "VariationalDropoutCell", "LSTMPCell"]


def _make_state(func: Callable, info: dict) -> Any:
    """``func(shape=, dtype=[, device=])``; the device only when it is not the current one, so that
    ``np.zeros`` also works under deferred compute (hybridized forward), where its placement fails."""
    device = info.pop("device", None)
    kwargs = {"device": device} if device is not None and device != current_device() else {}
    return func(shape=info.pop("shape", ()), dtype=info.pop("dtype", "float32"), **kwargs)


def _as_list(x: Any) -> list:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _cells_state_info(cells: Any, batch_size: int) -> list:
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells: Any, **kwargs: Any) -> list:
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _get_begin_state(cell: "RecurrentCell", begin_state: Any, inputs: Any, batch_size: int) -> list:
    if begin_state is None:
        device = inputs.device if isinstance(inputs, NDArray) else inputs[0].device
        begin_state = cell.begin_state(func=np.zeros, batch_size=batch_size, device=device)
    return begin_state


def _format_sequence(length: int | None, inputs: Any, layout: str, merge: bool | None,
                     in_layout: str | None = None) -> tuple[Any, int, int]:
    """``inputs`` as one array (``merge``), a list of per-step arrays (not ``merge``) or as given (None)."""
    if inputs is None:
        raise MXNetValueError("unroll(inputs=None) has been deprecated. Please create input variables outside unroll.")
    if layout not in ("TNC", "NTC") and not (len(layout) > 2 and "T" in layout and "N" in layout):
        raise MXNetValueError(f"unroll: invalid layout {layout!r}; expected 'TNC' or 'NTC'")
    axis, batch_axis = layout.find("T"), layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    if isinstance(inputs, NDArray):
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            if length is not None and length != inputs.shape[in_axis]:
                raise MXNetValueError(f"unroll: length={length} but the inputs have {inputs.shape[in_axis]} "
                                      f"steps on the {layout!r} time axis (shape {tuple(inputs.shape)})")
            inputs = _as_list(npx.slice_channel(inputs, axis=in_axis, num_outputs=inputs.shape[in_axis],
                                                squeeze_axis=1))
    else:
        if not isinstance(inputs, (list, tuple)):
            raise MXNetValueError("unroll: inputs must be an ndarray or a list of ndarrays")
        if length is not None and len(inputs) != length:
            raise MXNetValueError(f"unroll: length={length} but {len(inputs)} inputs were given")
        batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = np.stack(inputs, axis=axis)
            in_axis = axis
    if isinstance(inputs, NDArray) and axis != in_axis:
        inputs = np.swapaxes(inputs, axis, in_axis)
    return inputs, axis, batch_size


def _mask_sequence_variable_length(data: Any, length: int, valid_length: Any, time_axis: int, merge: bool) -> Any:
    if not isinstance(data, NDArray):
        data = np.stack(data, axis=time_axis)
    outputs = npx.sequence_mask(data, sequence_length=valid_length, use_sequence_length=True, axis=time_axis)
    if not merge:
        outputs = _as_list(npx.slice_channel(outputs, num_outputs=length, axis=time_axis, squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences: list, unroll_step: int, valid_length: Any = None) -> list:
    if valid_length is None:
        return list(reversed(sequences))
    rev = npx.sequence_reverse(np.stack(sequences, axis=0), sequence_length=valid_length, use_sequence_length=True)
    return _as_list(npx.slice_channel(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))


class RecurrentCell(Block):
    """Abstract base class for RNN cells: ``state_info``, ``begin_state``, one-step ``forward``, ``unroll``."""

    def __init__(self) -> None:
        super().__init__()
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset before re-using the cell for another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            if isinstance(cell, RecurrentCell):
                cell.reset()

    def state_info(self, batch_size: int = 0) -> list:
        """Shape and layout information of the states."""
        raise NotImplementedError()

    def begin_state(self, batch_size: int = 0, func: Callable = np.zeros, **kwargs: Any) -> list:
        """Initial states made by ``func(shape=, device=, dtype=)`` (zeros by default)."""
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                             "directly. Call the modifier cell instead.")
        states = []
        for info in self.state_info(batch_size):
            info = dict(info or {}, **kwargs)
            info.pop("__layout__", None)
            states.append(_make_state(func, info))
        return states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        """Run the cell over ``length`` steps: ``(outputs, states)``; outputs merged into one array
        (``merge_outputs``) or a list of per-step arrays; ``valid_length`` masks padded steps and
        returns each sequence's last valid state."""
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [npx.sequence_last(np.stack(ele, axis=0), sequence_length=valid_length,
                                        use_sequence_length=True, axis=0) for ele in zip(*all_states)]
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis, True)
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs: Any, activation: Any, **kwargs: Any) -> Any:
        """Apply ``activation`` (a name, a LeakyReLU block or a callable)."""
        func = {"tanh": np.tanh, "relu": npx.relu, "sigmoid": npx.sigmoid, "softsign": npx.softsign}.get(activation)
        if func:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return npx.activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, LeakyReLU):
            return npx.leaky_relu(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        return activation(inputs, **kwargs)

    def forward(self, inputs: Any, states: Any) -> Any:
        """One time step: ``(output, new_states)``."""
        raise NotImplementedError


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A cell that supports hybridize: ``forward(inputs, states)`` uses only ``mx.np``/``mx.npx`` ops."""

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, inputs: Any, states: Any = None, *args: Any) -> Any:
        self._counter += 1
        states = [] if states is None else [states] if isinstance(states, NDArray) else list(states)
        out = Block.__call__(self, inputs, *states, *args)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        return out[0], out[1:]

    def _forward_compat(self, inputs: Any, *states: Any, **kwargs: Any) -> tuple:
        out, new_states = self.forward(inputs, list(states), **kwargs)
        return (out, *_as_list(new_states))

    def _finish_deferred(self, inputs: Any, *states: Any) -> None:
        if any(not _known(p.shape) for p in self._reg_params.values()):
            self.infer_shape(0, inputs, False)
        for param in self._reg_params.values():
            param._finish_deferred_init()

    def forward(self, inputs: Any, states: Any) -> Any:
        raise NotImplementedError


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


class LSTMCell(_GatedCell):
    """LSTM cell (gates in MXNet's order i, f, g, o); states ``[h, c]``."""

    _n_gates = 4

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 activation: Any = "tanh", recurrent_activation: Any = "sigmoid") -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size)
        self._activation, self._recurrent_activation = activation, recurrent_activation

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


class GRUCell(_GatedCell):
    """GRU cell, cuDNN variant (reset gate applied after the h2h product); gates r, z, n."""

    _n_gates = 3

    def __init__(self, hidden_size: int, i2h_weight_initializer: Any = None, h2h_weight_initializer: Any = None,
                 i2h_bias_initializer: Any = "zeros", h2h_bias_initializer: Any = "zeros", input_size: int = 0,
                 activation: Any = "tanh", recurrent_activation: Any = "sigmoid") -> None:
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, input_size)
        self._activation, self._recurrent_activation = activation, recurrent_activation

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


class _SequentialMixin:
    """Stacking for (Hybrid)SequentialRNNCell: each cell takes its slice of the states."""

    def add(self, cell: RecurrentCell) -> None:
        """Append a cell to the stack."""
        self._layers.append(cell)
        self.register_child(cell)

    def __repr__(self) -> str:
        body = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{body}\n)"

    def state_info(self, batch_size: int = 0) -> list:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs: Any) -> list:
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. ZoneoutCell) the base cell cannot be called "
                             "directly. Call the modifier cell instead.")
        return _cells_begin_state(self._children.values(), **kwargs)

    def _step(self, inputs: Any, states: list) -> tuple:
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise MXNetError(f"{type(self).__name__}: a BidirectionalCell cannot be stepped; use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        self.reset()
        inputs, _, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, begin_state, inputs, batch_size)
        p, next_states = 0, []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states, layout=layout,
                                         merge_outputs=None if i < num_cells - 1 else merge_outputs,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i: int) -> RecurrentCell:
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)


class SequentialRNNCell(_SequentialMixin, RecurrentCell):
    """Sequentially stacking multiple RNN cells."""

    def __init__(self) -> None:
        super().__init__()
        self._layers = []
        self._bidirectional = False

    def __call__(self, inputs: Any, states: Any) -> tuple:
        self._counter += 1
        return self._step(inputs, list(states))

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def infer_shape(self, _: int, x: Any, is_bidirect: bool) -> None:
        for i, child in enumerate(self._layers):
            child.infer_shape(i, x, is_bidirect)


class HybridSequentialRNNCell(_SequentialMixin, HybridRecurrentCell):
    """Sequentially stacking multiple hybrid RNN cells (hybridizes as one program)."""

    def __init__(self) -> None:
        super().__init__()
        self._layers = []
        self._bidirectional = False

    def forward(self, inputs: Any, states: list) -> tuple:
        return self._step(inputs, states)

    def _finish_deferred(self, inputs: Any, *states: Any) -> None:
        pass  # the children infer their own shapes on their first call

    def infer_shape(self, _: int, x: Any, is_bidirect: bool) -> None:
        for i, child in enumerate(self._layers):
            child.infer_shape(i, x, False)


class DropoutCell(HybridRecurrentCell):
    """Dropout on the inputs (no states)."""

    def __init__(self, rate: float, axes: tuple = ()) -> None:
        super().__init__()
        if not isinstance(rate, numeric_types):
            raise MXNetValueError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate, self._axes = rate, axes

    def __repr__(self) -> str:
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size: int = 0) -> list:
        return []

    def _alias(self) -> str:
        return "dropout"

    def forward(self, inputs: Any, states: list) -> tuple:
        if self._rate > 0:
            inputs = npx.dropout(inputs, p=self._rate, axes=self._axes)
        return inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        self.reset()
        inputs, _, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, NDArray):
            return self(inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base class for cells that wrap (modify) a ``base_cell``; the base cell then cannot be called directly."""

    def __init__(self, base_cell: RecurrentCell) -> None:
        if base_cell._modified:
            raise MXNetError(f"Cell {type(base_cell).__name__} is already modified. One cell cannot be "
                             "modified twice")
        base_cell._modified = True
        super().__init__()
        self.base_cell = base_cell

    @property
    def params(self) -> Any:
        return self.base_cell.params

    def state_info(self, batch_size: int = 0) -> list:
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func: Callable = np.zeros, **kwargs: Any) -> list:
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                             "directly. Call the modifier cell instead.")
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def _finish_deferred(self, inputs: Any, *states: Any) -> None:
        pass  # the base cell infers its own shapes on its first call

    def infer_shape(self, i: int, x: Any, is_bidirect: bool) -> None:
        self.base_cell.infer_shape(i, x, is_bidirect)

    def forward(self, inputs: Any, states: list) -> tuple:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout: in training, each output/state unit keeps its previous value with probability p."""

    def __init__(self, base_cell: RecurrentCell, zoneout_outputs: float = 0., zoneout_states: float = 0.) -> None:
        if isinstance(base_cell, BidirectionalCell):
            raise MXNetError("BidirectionalCell doesn't support zoneout since it doesn't support step. "
                             "Please add ZoneoutCell to the cells underneath instead.")
        if isinstance(base_cell, SequentialRNNCell) and base_cell._bidirectional:
            raise MXNetError("Bidirectional SequentialRNNCell doesn't support zoneout. "
                             "Please add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs, self.zoneout_states = zoneout_outputs, zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, {self.base_cell!r})"

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def forward(self, inputs: Any, states: list) -> tuple:
        p_outputs, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p: float, like: Any) -> Any:
            return npx.dropout(np.ones(like.shape), p=p)

        prev_output = self._prev_output if self._prev_output is not None else np.zeros(next_output.shape)
        output = np.where(mask(p_outputs, next_output), next_output, prev_output) if p_outputs != 0. else next_output
        if p_states != 0.:
            next_states = [np.where(mask(p_states, new), new, old) for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (``output = base(inputs) + inputs``)."""

    def forward(self, inputs: Any, states: list) -> tuple:
        output, states = self.base_cell(inputs, states)
        return output + inputs, states

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs, valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        merge_outputs = isinstance(outputs, NDArray) if merge_outputs is None else merge_outputs
        inputs, axis, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            outputs = outputs + inputs
        else:
            outputs = [i + j for i, j in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward over the sequence and concatenates their outputs."""

    def __init__(self, l_cell: RecurrentCell, r_cell: RecurrentCell) -> None:
        super().__init__()
        self.l_cell = l_cell
        self.r_cell = r_cell

    def __call__(self, inputs: Any, states: Any = None, *args: Any) -> Any:
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return f"BidirectionalCell(forward={self.l_cell!r}, backward={self.r_cell!r})"

    def state_info(self, batch_size: int = 0) -> list:
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs: Any) -> list:
        if self._modified:
            raise MXNetError("After applying modifier cells (e.g. DropoutCell) the base cell cannot be called "
                             "directly. Call the modifier cell instead.")
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = list(_reverse_sequences(inputs, length, valid_length))
        states = _get_begin_state(self, begin_state, inputs, batch_size)
        l_cell, r_cell = self.l_cell, self.r_cell
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l], layout=layout,
                                            merge_outputs=merge_outputs, valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs, begin_state=states[n_l:],
                                            layout=layout, merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, NDArray)
            l_outputs, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _ = _format_sequence(None, reversed_r_outputs, layout, merge_outputs)
        if merge_outputs:
            if not isinstance(reversed_r_outputs, NDArray):
                reversed_r_outputs = np.stack(reversed_r_outputs, axis=axis)
            outputs = np.concatenate([l_outputs, reversed_r_outputs], axis=2)
        else:
            outputs = [np.concatenate([l_o, r_o], axis=1) for l_o, r_o in zip(l_outputs, reversed_r_outputs)]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states

    def infer_shape(self, i: int, x: Any, is_bidirect: bool) -> None:
        self.l_cell.infer_shape(i, x, True)
        self.r_cell.infer_shape(i, x, True)


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal & Ghahramani): ONE dropout mask per sequence for inputs, states and outputs."""

    def __init__(self, base_cell: RecurrentCell, drop_inputs: float = 0., drop_states: float = 0.,
                 drop_outputs: float = 0.) -> None:
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise MXNetError("BidirectionalCell doesn't support variational state dropout. "
                             "Please add VariationalDropoutCell to the cells underneath instead.")
        if drop_states and isinstance(base_cell, SequentialRNNCell) and base_cell._bidirectional:
            raise MXNetError("Bidirectional SequentialRNNCell doesn't support variational state dropout. "
                             "Please add VariationalDropoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.drop_inputs, self.drop_states, self.drop_outputs = drop_inputs, drop_states, drop_outputs
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _alias(self) -> str:
        return "vardrop"

    def reset(self) -> None:
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _initialize_input_masks(self, inputs: Any, states: list) -> None:
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = npx.dropout(np.ones(states[0].shape), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = npx.dropout(np.ones(inputs.shape), p=self.drop_inputs)

    def _initialize_output_mask(self, output: Any) -> None:
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = npx.dropout(np.ones(output.shape), p=self.drop_outputs)

    def forward(self, inputs: Any, states: list) -> tuple:
        self._initialize_input_masks(inputs, states)
        if self.drop_states:
            states = list(states)
            states[0] = states[0] * self.drop_states_mask  # only h, always the first state
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = self.base_cell(inputs, states)
        self._initialize_output_mask(next_output)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self) -> str:
        return f"VariationalDropoutCell(p_out = {self.drop_outputs}, p_state = {self.drop_states})"

    def unroll(self, length: int, inputs: Any, begin_state: Any = None, layout: str = "NTC",
               merge_outputs: bool | None = None, valid_length: Any = None) -> tuple[Any, list]:
        if self.drop_states:  # state dropout needs the step-by-step path
            return super().unroll(length, inputs, begin_state, layout, merge_outputs, valid_length=valid_length)
        self.reset()
        inputs, axis, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = npx.dropout(inputs, p=self.drop_inputs, axes=(axis,))
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, states, layout, merge_outputs=True,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if self.drop_outputs:
            outputs = npx.dropout(outputs, p=self.drop_outputs, axes=(axis,))
        merge_outputs = isinstance(outputs, NDArray) if merge_outputs is None else merge_outputs
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis, merge_outputs)
        return outputs, states
