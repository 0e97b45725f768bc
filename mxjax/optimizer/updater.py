"""Updater: an optimizer plus the states of the weights it updates (MXNet's KVStore updater)."""
from __future__ import annotations

import pickle
from typing import Any

import jax

from ..base import MXNetError
from ..device import array_device_id
from ..serialization import file_label
from .._ndarray import NDArray
from .optimizer import Optimizer

__all__ = ["Updater", "get_updater"]


class Updater:
    """Calls ``optimizer.update`` with per-index states created on first use.

    ``updater(index, grad, weight)`` takes one index or lists; all given weights are
    updated in one fused call.
    """

    def __init__(self, optimizer: Optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 1

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        if isinstance(index, (list, tuple)):
            indices, grads, weights = index, grad, weight
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_device(array_device_id(weights[0].to_jax()))
        states, synced = self.states, self.states_synced
        if bytes in map(type, indices):  # KVStore's string keys may come as bytes
            indices = [idx.decode() if isinstance(idx, bytes) else idx for idx in indices]
        for i, idx in enumerate(indices):
            if idx not in states:
                states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                synced[idx] = True
            elif not synced[idx]:
                states[idx] = self.sync_state_context(states[idx], weights[i].device)
                synced[idx] = True
        self.optimizer.update_multi_precision(indices, weights, grads, [states[i] for i in indices])

    def sync_state_context(self, state: Any, device: Any) -> Any:
        """Move a (loaded) state onto ``device``."""
        return jax.tree.map(lambda x: x.copyto(device) if x.device != device else x, state,
                            is_leaf=lambda x: isinstance(x, NDArray))

    def set_states(self, states: bytes) -> None:
        """Set the states (and maybe the optimizer) from ``get_states``' bytes."""
        states = pickle.loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def load_states_file(self, fname: str, where: str) -> None:
        """``set_states`` from a file: corrupt bytes give an MXNetError naming the file and
        ``where`` (the caller), and leave the states and optimizer as they were."""
        with open(fname, "rb") as f:
            blob = f.read()
        keep = (self.states, self.optimizer, self.states_synced)
        try:
            self.set_states(blob)
            if not isinstance(self.states, dict) or not isinstance(self.optimizer, Optimizer):
                raise TypeError(f"it holds {type(self.states).__name__} states and a "
                                f"{type(self.optimizer).__name__} optimizer")
        except Exception as err:  # unpickling garbage raises nearly any exception type
            self.states, self.optimizer, self.states_synced = keep
            raise MXNetError(f"{where}: {file_label(fname)} is not an optimizer states file "
                             f"({type(err).__name__}: {err})") from None

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """Pickle the states (with the optimizer when ``dump_optimizer``)."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def get_updater(optimizer: Optimizer) -> Updater:
    """The updater closure of ``optimizer`` (for KVStore)."""
    return Updater(optimizer)
