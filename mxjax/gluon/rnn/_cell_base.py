"""The recurrent cell protocol: ``RecurrentCell`` and ``HybridRecurrentCell``, and the helpers that
shape a sequence for ``unroll`` (time-major/batch-major layouts, per-step lists, masking, reversal).

Every other cell module builds on these, so they sit at the bottom of ``gluon.rnn`` on their own;
``rnn_cell`` re-exports the two classes at MXNet's path.
"""
from __future__ import annotations

from typing import Any, Callable

from ... import numpy as np
from ... import numpy_extension as npx
from ..._ndarray import NDArray
from ...base import MXNetError, MXNetValueError
from ...device import current_device
from .._hybrid_forward import call_imperative, infer_parameter_shapes
from ..block import Block, HybridBlock
from ..nn import LeakyReLU
from ..parameter import _known


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
            cls = type(inputs)  # (the steps keep it: mx.nd for 1.x code)
            steps = npx.slice_channel(inputs, axis=in_axis, num_outputs=inputs.shape[in_axis], squeeze_axis=1)
            inputs = [x._as_class(cls) for x in _as_list(steps)]
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
        step_cls = type(outputs[0]) if outputs else None  # merged, the outputs keep it (mx.nd for a 1.x cell)
        if valid_length is not None:
            states = [npx.sequence_last(np.stack(ele, axis=0), sequence_length=valid_length,
                                        use_sequence_length=True, axis=0) for ele in zip(*all_states)]
            outputs = _mask_sequence_variable_length(outputs, length, valid_length, axis, True)
        outputs, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if step_cls is not None and isinstance(outputs, NDArray):
            outputs = outputs._as_class(step_cls)
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
    """A cell that supports hybridize: ``forward(inputs, states)`` uses only ``mx.np``/``mx.npx`` ops;
    or, as in MXNet 1.x, ``hybrid_forward(F, inputs, states, **params)`` (states: one list)."""

    def __init__(self) -> None:
        super().__init__()

    def __call__(self, inputs: Any, states: Any = None, *args: Any) -> Any:
        self._counter += 1
        states = [] if states is None else [states] if isinstance(states, NDArray) else list(states)
        if self._is_legacy():  # the states as one list, as hybrid_forward takes them (hybridized: flattened)
            out, new_states = Block.__call__(self, inputs, states, *args)
            return out, _as_list(new_states)
        out = Block.__call__(self, inputs, *states, *args)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        return out[0], out[1:]

    def _is_legacy(self) -> bool:
        """Whether this cell computes through MXNet 1.x's ``hybrid_forward`` (it has no ``forward``)."""
        return type(self).forward is HybridRecurrentCell.forward and hasattr(self, "hybrid_forward")

    def _forward_compat(self, inputs: Any, *states: Any, **kwargs: Any) -> tuple:
        if self._is_legacy():
            return call_imperative(self, (inputs, *states), kwargs)
        out, new_states = self.forward(inputs, list(states), **kwargs)
        return (out, *_as_list(new_states))

    def _finish_deferred(self, inputs: Any, *states: Any) -> None:
        if any(not _known(p.shape) for p in self._reg_params.values()):
            if self._is_legacy():  # 1.x: the shapes from its symbolic graph
                infer_parameter_shapes(self, (inputs, *states))
            else:
                self.infer_shape(0, inputs, False)
        for param in self._reg_params.values():
            param._finish_deferred_init()

    def forward(self, inputs: Any, states: Any) -> Any:
        raise NotImplementedError
