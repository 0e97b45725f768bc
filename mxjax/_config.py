"""Process-wide modes that change what ops mean: NumPy array/shape semantics and the default dtype.

MXNet keeps these as process flags switched by ``npx.set_np()``; mxjax keeps them
here, with scoped overrides (``np_shape``/``np_array`` context managers) held in
context variables so a ``with`` block in one thread does not leak into another.
``set_np``/``reset_np`` change the process default that every thread starts from.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
from typing import Any, Callable, Iterator

import jax
import numpy as onp

_np_shape_default = True
_np_array_default = True
_np_dtype_default = False  # False: float32 default (MXNet); True: float64 (NumPy)
_np_shape = contextvars.ContextVar("mxjax_np_shape", default=None)
_np_array = contextvars.ContextVar("mxjax_np_array", default=None)

_training = contextvars.ContextVar("mxjax_training", default=False)

# float64/int64 are first-class MXNet dtypes (saved parameters, index outputs), so mxjax
# runs JAX with 64-bit types on -- but only inside its own calls, through JAX's thread-local
# override, so the user's own jax.numpy code keeps JAX's defaults (float32, int32) after
# ``import mxjax``.  Ops cast to MXNet's float32 default themselves.  jit caches key on the
# state, so a program traced in the scope stays a 64-bit program; arrays made in the scope
# keep their 64-bit dtypes outside it.
_x64_state = jax.enable_x64
# the hot path's raw pair (~0.2 us; a context manager costs ~2 us):
#     previous = swap_x64(True); try: ... finally: restore_x64(previous)
swap_x64 = _x64_state.swap_local
restore_x64 = _x64_state.set_local


@contextlib.contextmanager
def x64() -> Iterator[None]:
    """Run JAX with 64-bit types on for this thread's scope (mxjax's own calls), whatever the process says."""
    previous = swap_x64(True)
    try:
        yield
    finally:
        restore_x64(previous)


def with_x64(fn: Callable) -> Callable:
    """Decorator: ``fn`` runs with JAX's 64-bit types on (an mxjax entry point that calls JAX)."""

    @functools.wraps(fn)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        previous = swap_x64(True)
        try:
            return fn(*args, **kwargs)
        finally:
            restore_x64(previous)
    return scoped

_drop_callbacks: list[Callable[[], None]] = []


def on_drop_compiled(callback: Callable[[], None]) -> None:
    """Register a callback that drops a cache of compiled programs; it runs when what ops compute
    changes (the default float dtype, AMP's casts): see ``drop_compiled``."""
    _drop_callbacks.append(callback)


def drop_compiled() -> None:
    """What ops compute has changed (the default dtype, AMP's casts installed or removed): every
    cache registered with ``on_drop_compiled`` drops its programs."""
    for callback in _drop_callbacks:
        callback()


def is_np_shape() -> bool:
    v = _np_shape.get()
    return _np_shape_default if v is None else v


def is_np_array() -> bool:
    v = _np_array.get()
    return _np_array_default if v is None else v


def is_np_default_dtype() -> bool:
    return _np_dtype_default


def default_float_dtype() -> onp.dtype:
    """float32 as in MXNet, or float64 after ``npx.set_np(dtype=True)``."""
    return onp.dtype(onp.float64) if _np_dtype_default else onp.dtype(onp.float32)


def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Turn NumPy semantics on for the process (MXNet's ``npx.set_np``)."""
    global _np_shape_default, _np_array_default
    if array and not shape:
        raise ValueError("NumPy array semantics require NumPy shape semantics: use set_np(shape=True, array=True)")
    _np_shape_default, _np_array_default = bool(shape), bool(array)
    set_np_default_dtype(dtype)


def reset_np() -> None:
    """Back to legacy (1.x) semantics: ``set_np(shape=False, array=False, dtype=False)``."""
    set_np(shape=False, array=False, dtype=False)


def set_np_default_dtype(is_np_default_dtype: bool = True) -> bool:
    """Choose float64 (True) or float32 (False) as the default dtype; returns the previous choice."""
    global _np_dtype_default
    previous = _np_dtype_default
    _np_dtype_default = bool(is_np_default_dtype)
    if previous != _np_dtype_default:
        drop_compiled()
    return previous


@contextlib.contextmanager
def np_shape(active: bool = True) -> Iterator[None]:
    token = _np_shape.set(bool(active))
    try:
        yield
    finally:
        _np_shape.reset(token)


@contextlib.contextmanager
def np_array(active: bool = True) -> Iterator[None]:
    token = _np_array.set(bool(active))
    try:
        yield
    finally:
        _np_array.reset(token)


def is_training() -> bool:
    """Whether ops run in training mode (dropout active, batch statistics); set by ``autograd``."""
    return _training.get()


def set_training(train_mode: bool) -> bool:
    """Set the training flag for this thread/context; returns the previous value."""
    previous = _training.get()
    _training.set(bool(train_mode))
    return previous


def set_training_token(train_mode: bool) -> contextvars.Token:
    """Set the training flag, returning the token that restores it (for hand-written scopes)."""
    return _training.set(bool(train_mode))


def reset_training_token(token: contextvars.Token) -> None:
    _training.reset(token)


@contextlib.contextmanager
def training(train_mode: bool = True) -> Iterator[None]:
    """Scope with the training flag set (what ``autograd.record``/``train_mode`` use)."""
    token = set_training_token(train_mode)
    try:
        yield
    finally:
        reset_training_token(token)
