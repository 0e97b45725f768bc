"""Cells made of other cells: ``SequentialRNNCell``/``HybridSequentialRNNCell`` (a stack, each cell
taking its slice of the states) and ``BidirectionalCell`` (one cell forward, one backward).

They only route inputs and states between child cells; the modifier cells in ``rnn_cell`` check
for them, so they sit below it.  ``rnn_cell`` re-exports them at MXNet's path.
"""
from __future__ import annotations

from typing import Any

from ... import numpy as np
from ..._ndarray import NDArray
from ...base import MXNetError
from ..utils import _indent
from ._cell_base import (HybridRecurrentCell, RecurrentCell, _cells_begin_state, _cells_state_info,
                         _format_sequence, _get_begin_state, _mask_sequence_variable_length,
                         _reverse_sequences)


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
