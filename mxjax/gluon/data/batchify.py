"""Batchify functions: turn a list of samples into one batch (``Stack``, ``Pad``, ``Append``, ...).

Results are ``mx.np`` arrays while NumPy semantics are on (the default) and ``mx.nd`` arrays
otherwise. ``default_batchify_fn`` / ``default_mp_batchify_fn`` are the DataLoader's collate
functions of MXNet 2.0 (there they live in ``dataloader.py``, which re-exports them from here).
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Sequence

import numpy as onp

from ... import ndarray as _nd
from ... import numpy as _mxnp
from ...device import Device, cpu
from ...util import is_np_array
from ._errors import require

__all__ = ['Stack', 'Pad', 'Append', 'Group', 'AsList']


def _shared_device(use_shared_mem: bool) -> Device:
    return Device('cpu_shared', 0) if use_shared_mem else cpu()


def _first(data: Sequence[Any], who: str) -> Any:
    if len(data) == 0:
        raise IndexError(f'{who}: got an empty list of samples, expected at least one')
    return data[0]


def _as_frontend(arrays: Sequence[Any]) -> list:
    """Arrays as the current frontend's class (mx.np under NumPy semantics, else mx.nd)."""
    if is_np_array():
        return [a if isinstance(a, _mxnp.ndarray) else a.as_np_ndarray() for a in arrays]
    return list(arrays)


def _stack_arrays(arrays: Sequence[Any]) -> Any:
    arrays = _as_frontend(arrays)
    if is_np_array():
        return _mxnp.stack(arrays)
    return _nd.stack(*arrays)


def _from_host(values: onp.ndarray, use_shared_mem: bool, dtype: Any = None) -> Any:
    dtype = values.dtype if dtype is None else dtype
    device = _shared_device(use_shared_mem)
    if is_np_array():
        return _mxnp.array(values, dtype=dtype, device=device)
    return _nd.array(values, ctx=device, dtype=dtype)


class Stack:
    """Stacks samples of equal shape into one array with a new leading batch axis.

    Samples that are tuples or lists are split into fields and each field is stacked on its
    own (the result is then a list). Python numbers and NumPy arrays keep their NumPy dtype.
    """

    def __init__(self, use_shared_mem: bool = False):
        self._use_shared_mem = use_shared_mem

    def __call__(self, data: Sequence[Any]) -> Any:
        head = _first(data, 'Stack')
        if isinstance(head, _nd.NDArray):
            return _stack_arrays(data)
        if isinstance(head, (tuple, list)):
            return [self(list(field)) for field in zip(*data)]
        return _from_host(onp.asarray(data), self._use_shared_mem)


def _pad_to_common_shape(arrays: Sequence[Any], pad_val: Any, dtype: Any,
                         round_to: int | None) -> onp.ndarray:
    """Pads each array at the end of every axis to the largest size and stacks them (NumPy)."""
    head = arrays[0]
    if isinstance(head, _nd.NDArray):
        out_dtype = head.dtype if dtype is None else dtype
        arrays = [a.asnumpy() for a in arrays]
    else:
        arrays = [onp.asarray(a) for a in arrays]
        out_dtype = arrays[0].dtype if dtype is None else dtype
    ndim = arrays[0].ndim
    for a in arrays:
        if a.ndim != ndim:
            raise ValueError('Pad: every sample must have the same number of dimensions, got shapes '
                             f'{arrays[0].shape} and {a.shape}')
    target = [max(a.shape[axis] for a in arrays) for axis in range(ndim)]
    if round_to is not None:
        target = [round_to * math.ceil(size / round_to) for size in target]
    batch = onp.full((len(arrays),) + tuple(target), pad_val, dtype=out_dtype)
    for row, a in enumerate(arrays):
        # A zero-length sample simply stays all padding (MXNet asserts on it).
        batch[(row,) + tuple(slice(0, n) for n in a.shape)] = a
    return batch


class Pad:
    """Pads samples at the end of every axis to the largest size in the batch, then stacks.

    Samples may be NumPy arrays, MXNet arrays or (nested) lists of numbers. ``val`` is the fill
    value (0 when None), ``dtype`` the output type (the first sample's when None), ``round_to``
    rounds every padded size up to a multiple of it.
    """

    def __init__(self, val: Any = None, dtype: Any = None, round_to: int | None = None,
                 use_shared_mem: bool = False):
        if round_to is not None and (isinstance(round_to, bool) or not isinstance(round_to, int)
                                     or round_to < 1):
            raise ValueError(f'Pad: round_to must be a positive int or None, got {round_to!r}')
        self._pad_val = 0 if val is None else val
        self._dtype = dtype
        self._round_to = round_to
        self._use_shared_mem = use_shared_mem
        self._warned = False

    def __call__(self, data: Sequence[Any]) -> Any:
        head = _first(data, 'Pad')
        if isinstance(head, _nd.NDArray) and not self._warned:
            self._warned = True
            warnings.warn('Pad copies MXNet arrays to NumPy to pad them, which is slow; pad the '
                          'samples while they are lists or NumPy arrays instead.', stacklevel=2)
        if not isinstance(head, (_nd.NDArray, onp.ndarray, list)):
            raise NotImplementedError(
                f'Pad() does not support samples of type {type(head).__name__} (several fields?); '
                'use Group(Pad(), Pad(), ...) instead')
        batch = _pad_to_common_shape(data, self._pad_val, self._dtype, self._round_to)
        return _from_host(batch, self._use_shared_mem, batch.dtype)


class Append:
    """Returns the samples as a list of separate arrays (shapes may differ).

    With ``expand`` each array gets a new axis of size 1 at ``batch_axis``.
    """

    def __init__(self, expand: bool = True, batch_axis: int = 0, use_shared_mem: bool = False):
        self._expand = expand
        self._batch_axis = batch_axis
        self._use_shared_mem = use_shared_mem

    def __call__(self, data: Sequence[Any]) -> list:
        np_mode = is_np_array()
        device = _shared_device(self._use_shared_mem)
        out = []
        for sample in data:
            if isinstance(sample, _nd.NDArray):
                arr = _as_frontend([sample])[0]
                if self._use_shared_mem:
                    arr = arr.as_in_context(device)
            elif np_mode:
                arr = _mxnp.array(sample, device=device)
            else:
                arr = _nd.array(sample, ctx=device)
            if self._expand:
                arr = (_mxnp.expand_dims(arr, axis=self._batch_axis) if np_mode
                       else arr.expand_dims(axis=self._batch_axis))
            out.append(arr)
        return out


class Group:
    """Applies the i-th batchify function to the i-th field of every sample; returns a tuple.

    Build it as ``Group(f, g, ...)`` or ``Group([f, g, ...])``.
    """

    def __init__(self, fn: Any, *args: Callable):
        if isinstance(fn, (list, tuple)):
            require(len(args) == 0,
                    'Group: the input pattern is not understood; use Group(A, B, C), Group([A, B, C]) '
                    f'or Group((A, B, C)). Received fn={fn}, args={args}')
            self._fn = tuple(fn)
        else:
            self._fn = (fn,) + args
        for pos, item in enumerate(self._fn):
            require(callable(item),
                    f'Group: Batchify functions must be callable! type(fn[{pos}]) = {type(item)}')

    def __call__(self, data: Sequence[Any]) -> tuple:
        head = _first(data, 'Group')
        require(len(head) == len(self._fn),
                f'Group: The number of attributes in each data sample should contains '
                f'{len(self._fn)} elements, got {len(head)}')
        return tuple(fn([sample[pos] for sample in data]) for pos, fn in enumerate(self._fn))


Tuple = Group  # GluonNLP's and MXNet 1.x-era scripts' name for Group (MXNet 2.0 keeps only Group)


class AsList:
    """Returns the samples unchanged, as a list (e.g. strings next to ``Group``)."""

    def __call__(self, data: Sequence[Any]) -> list:
        return list(data)


def _collate(data: Sequence[Any], use_shared_mem: bool) -> Any:
    head = _first(data, 'default_batchify_fn')
    if isinstance(head, _nd.NDArray):
        return _stack_arrays(data)
    if isinstance(head, tuple):
        return [_collate(list(field), use_shared_mem) for field in zip(*data)]
    return _from_host(onp.asarray(data), use_shared_mem)


def default_batchify_fn(data: Sequence[Any]) -> Any:
    """The DataLoader's default collate: stack arrays, split tuple samples into fields, and turn
    anything else into one array through ``numpy.asarray`` (keeping its dtype).
    """
    return _collate(data, False)


def default_mp_batchify_fn(data: Sequence[Any]) -> Any:
    """``default_batchify_fn`` for worker processes: results are placed on ``cpu_shared(0)``."""
    return _collate(data, True)
