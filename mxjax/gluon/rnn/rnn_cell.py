"""Recurrent cells (one time step per call) and their ``unroll`` over a sequence, as MXNet 2.0's.

A hybrid cell is called ``cell(inputs, states)`` and its ``forward(inputs, states)`` returns
``(output, new_states)``, as in MXNet; underneath, the block machinery sees the states flattened
(``inputs, *states`` in, ``output, *new_states`` out), so a hybridized cell compiles them as plain
arrays.  Children are held directly (MXNet 2.0 holds weak references and calls ``cell()``).

This module holds the modifier cells (dropout, zoneout, residual, variational dropout) and
re-exports the rest at MXNet's path: the base classes and sequence helpers (``_cell_base``), the
gated cells (``_gated_cells``) and the stacking/bidirectional cells (``_stacked_cells``).
"""
from __future__ import annotations

from typing import Any, Callable

from ... import numpy as np
from ... import numpy_extension as npx
from ..._ndarray import NDArray
from ...base import MXNetError, MXNetValueError, numeric_types
from ...device import current_device  # noqa: F401  (kept importable from here, as before the split)
from ..block import Block, HybridBlock  # noqa: F401  (MXNet's rnn_cell has these in its namespace too)
from ..nn import LeakyReLU  # noqa: F401
from ..parameter import Parameter  # noqa: F401
from ._cell_base import (HybridRecurrentCell, RecurrentCell, _format_sequence, _get_begin_state,
                         _mask_sequence_variable_length)
from ._gated_cells import GRUCell, LSTMCell, LSTMPCell, RNNCell
from ._stacked_cells import BidirectionalCell, HybridSequentialRNNCell, SequentialRNNCell

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "HybridSequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell",
           "BidirectionalCell", "VariationalDropoutCell", "LSTMPCell"]
for _public in (RecurrentCell, HybridRecurrentCell, RNNCell, LSTMCell, GRUCell, SequentialRNNCell,
                HybridSequentialRNNCell, BidirectionalCell, LSTMPCell):  # named by their public home, as in MXNet
    _public.__module__ = __name__


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
