"""``mx.util``: the NumPy-semantics switches, their scopes and decorators, env vars, GPU queries.

MXNet 2.0 has three switches: NumPy *shape* semantics (``()`` is a scalar shape, ``0`` a
zero size), NumPy *array* semantics (Gluon creates ``mx.np.ndarray``) and NumPy *default
dtype* (float64 instead of float32).  ``import mxnet`` turns the first two on, and so does
``import mxjax``.  The state lives in ``mxjax._config``, which the op layer reads (the
default dtype of ``mx.np.ones``/``zeros``/``arange``/``array`` follows it); this module is
MXNet's public front over it, with MXNet's checks and error messages.

Scoping: ``with np_shape(...)``/``with np_array(...)`` (and the ``use_np*`` decorators)
override the flag for the current thread only (context variables); ``set_np``/``reset_np``/
``set_np_shape`` change the value every thread starts from.  MXNet keeps the array flag
per thread even for ``set_np``, so a new MXNet thread starts with it off; mxjax starts every
thread with the semantics its main thread had at import, which is what Gluon code running
in worker threads expects.  The default-dtype flag is process-wide in both.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import os
from typing import Any, Callable, Iterator

import jax

from . import _config
from .device import gpu, gpu_memory_info
from .base import MXNetError, c_str, check_call, integer_types, numeric_types, py_str
from ._util_wrappers import (dtype_from_number, np_ufunc_legal_option, numpy_fallback,
                             default_array, wrap_ctx_to_device_func,
                             wrap_data_api_linalg_func, wrap_data_api_statical_func,
                             wrap_np_binary_func, wrap_np_unary_func, wrap_sort_functions)

__all__ = [
    "is_np_array", "is_np_shape", "is_np_default_dtype", "set_np", "reset_np", "set_np_shape",
    "set_np_default_dtype", "np_array", "np_shape", "np_default_dtype", "use_np", "use_np_array",
    "use_np_shape", "use_np_default_dtype", "set_module", "getenv", "setenv", "get_gpu_count",
    "get_gpu_memory", "get_cuda_compute_capability", "get_max_supported_compute_capability",
    "get_rtc_compile_opts", "set_flush_denorms", "dtype_from_number", "np_ufunc_legal_option",
    "numpy_fallback", "default_array", "wrap_ctx_to_device_func", "wrap_data_api_linalg_func",
    "wrap_data_api_statical_func", "wrap_np_binary_func", "wrap_np_unary_func",
    "wrap_sort_functions", "c_str", "check_call", "py_str", "integer_types", "numeric_types",
]

_MSG_SHAPE_OFF = ("Deactivating NumPy shape semantics while NumPy array semantics is still active "
                  "is not allowed. Please consider calling `npx.reset_np()` to deactivate both of them.")
_MSG_ARRAY_NEEDS_SHAPE = "NumPy Shape semantics is required in using NumPy array semantics."

is_np_array = _config.is_np_array
is_np_shape = _config.is_np_shape
is_np_default_dtype = _config.is_np_default_dtype


# ----------------------------------------------------------------------------- setters

def set_np(shape: bool = True, array: bool = True, dtype: bool = False) -> None:
    """Turn NumPy shape and array semantics on (``dtype=True``: float64 default dtype too).

    ``set_np(shape=False, array=True)`` raises ``ValueError``: array semantics need shape semantics.
    """
    if array and not shape:
        raise ValueError(_MSG_ARRAY_NEEDS_SHAPE)
    _config.set_np(shape=bool(shape), array=bool(array), dtype=bool(dtype))


def reset_np() -> None:
    """Turn shape, array and default-dtype semantics off: ``set_np(False, False, False)``."""
    set_np(shape=False, array=False, dtype=False)


def set_np_shape(active: bool) -> bool:
    """Turn NumPy shape semantics on or off; returns the previous state.

    Turning it off while array semantics are on raises ``ValueError`` (call ``reset_np()``).
    """
    if not active and is_np_array():
        raise ValueError(_MSG_SHAPE_OFF)
    previous = is_np_shape()
    _config.set_np(shape=bool(active), array=is_np_array(), dtype=is_np_default_dtype())
    return previous


def set_np_default_dtype(is_np_default_dtype: bool = True) -> bool:  # noqa: A002  (MXNet's name)
    """float64 (True) or float32 (False) as the default dtype of ``mx.np`` creation; returns the previous."""
    return _config.set_np_default_dtype(bool(is_np_default_dtype))


# ----------------------------------------------------------------------------- scopes

@contextlib.contextmanager
def np_shape(active: bool = True) -> Iterator[None]:
    """Scope (this thread) with NumPy shape semantics on or off."""
    if not active and is_np_array():
        raise ValueError(_MSG_SHAPE_OFF)
    with _config.np_shape(active):
        yield


@contextlib.contextmanager
def np_array(active: bool = True) -> Iterator[None]:
    """Scope (this thread) with NumPy array semantics on or off (Gluon creates ``mx.np.ndarray``)."""
    with _config.np_array(active):
        yield


@contextlib.contextmanager
def np_default_dtype(active: bool = True) -> Iterator[None]:
    """Scope with float64 (``active=True``) or float32 as the default dtype; restored on exit."""
    previous = set_np_default_dtype(active)
    try:
        yield
    finally:
        if previous != bool(active):
            set_np_default_dtype(previous)


# ----------------------------------------------------------------------------- decorators

def _scoped(scope: Callable[[], Any], decorator_name: str) -> Callable[[Any], Any]:
    """A decorator running a function, or every method and property of a class, inside ``scope()``."""

    def wrap_function(func: Callable) -> Callable:
        @functools.wraps(func)
        def scoped(*args: Any, **kwargs: Any) -> Any:
            with scope():
                return func(*args, **kwargs)
        return scoped

    def wrap_member(member: Any) -> Any:
        if isinstance(member, staticmethod):
            return staticmethod(wrap_function(member.__func__))
        if isinstance(member, classmethod):
            return classmethod(wrap_function(member.__func__))
        if isinstance(member, property):
            wrapped = [wrap_function(f) if f is not None else None
                       for f in (member.fget, member.fset, member.fdel)]
            return property(*wrapped, member.__doc__)
        if inspect.isfunction(member):
            return wrap_function(member)
        return None

    def decorator(func: Any) -> Any:
        if inspect.isclass(func):
            # MXNet wraps every Python method the class has, inherited ones included.
            seen: set[str] = set()
            for klass in func.__mro__:
                if klass is object:
                    continue
                for name, member in vars(klass).items():
                    if name in seen:
                        continue
                    seen.add(name)
                    wrapped = wrap_member(member)
                    if wrapped is not None:
                        setattr(func, name, wrapped)
            return func
        if callable(func):
            return wrap_function(func)
        raise TypeError(f"{decorator_name} can only decorate classes and callable objects, "
                        f"while received a {type(func)}")

    return decorator


use_np_shape = _scoped(lambda: np_shape(True), "use_np_shape")
use_np_shape.__doc__ = "Run a function, or all methods and properties of a class, with NumPy shape semantics."
use_np_array = _scoped(lambda: np_array(True), "use_np_array")
use_np_array.__doc__ = "Run a function, or all methods and properties of a class, with NumPy array semantics."
use_np_default_dtype = _scoped(lambda: np_default_dtype(True), "use_np_default_dtype")
use_np_default_dtype.__doc__ = "Run a function, or all methods of a class, with float64 as the default dtype."


def use_np(func: Any) -> Any:
    """Run a function, or every method/property of a class (a HybridBlock), with NumPy shape and array semantics.

    >>> @use_np
    ... class Net(gluon.HybridBlock): ...
    """
    return use_np_shape(use_np_array(func))


def set_module(module: str | None) -> Callable[[Any], Any]:
    """Decorator setting ``__module__`` of a function or class (``@set_module('mxnet.numpy')``)."""
    def decorator(func: Any) -> Any:
        if module is not None:
            func.__module__ = module
        return func
    return decorator


# ----------------------------------------------------------------------------- environment

def getenv(name: str) -> str | None:
    """The value of environment variable ``name``, or None when unset."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set environment variable ``name`` (``value=None`` unsets it), visible to ``os.environ`` and C code."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


# ----------------------------------------------------------------------------- GPUs

def _gpus() -> list:
    """JAX's GPU devices (empty when JAX has no GPU backend)."""
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def get_gpu_count() -> int:
    """How many GPUs JAX sees."""
    return len(_gpus())


def get_gpu_memory(gpu_dev_id: int) -> tuple[int, int]:
    """``(free, total)`` bytes of GPU ``gpu_dev_id`` (see ``mx.context.gpu_memory_info``)."""
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(device: Any) -> int:
    """Compute capability of a GPU device as an int (``70`` for sm_70), from JAX's device record."""
    if getattr(device, "device_type", None) != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         f"while received device {device}")
    gpus = _gpus()
    if not 0 <= device.device_id < len(gpus):
        raise MXNetError(f"get_cuda_compute_capability: {device} does not exist; this machine has "
                         f"{len(gpus)} GPU(s)")
    capability = getattr(gpus[device.device_id], "compute_capability", None)
    if capability is None:
        raise MXNetError(f"get_cuda_compute_capability: {device} is not a CUDA device")
    major, _, minor = str(capability).partition(".")
    return int(major) * 10 + int(minor or 0)


def get_max_supported_compute_capability() -> int:
    """The newest SM architecture the runtime compiler targets: that of the newest local GPU.

    mxjax compiles through XLA, which targets whatever GPU it runs on; without a GPU there is
    no CUDA compiler, and this raises like MXNet built without CUDA.
    """
    gpus = _gpus()
    if not gpus:
        raise MXNetError("Compile with USE_CUDA=1 to have CUDA runtime compilation.")
    return max(get_cuda_compute_capability(gpu(i)) for i in range(len(gpus)))


def get_rtc_compile_opts(device: Any) -> list[str]:
    """NVRTC options for ``device``: ``['--gpu-architecture=sm_XY']`` (or ``compute_XY``), as MXNet picks them."""
    device_cc = get_cuda_compute_capability(device)
    max_cc = get_max_supported_compute_capability()
    to_sass = max_cc >= 86 and device_cc <= max_cc
    return [f"--gpu-architecture={'sm' if to_sass else 'compute'}_{min(device_cc, max_cc)}"]


def set_flush_denorms(value: bool) -> bool:
    """Flush denormal floats to zero on CPU; returns the previous state (always True).

    MXNet sets the CPU's MXCSR flags, on by default.  XLA's CPU runtime sets them itself
    around every computation it runs and offers no switch, so flushing is always on:
    ``set_flush_denorms(True)`` is accepted, ``set_flush_denorms(False)`` raises ``MXNetError``.
    """
    if not value:
        raise MXNetError("set_flush_denorms(False): XLA's CPU runtime always flushes denormal floats "
                         "to zero, and mxjax cannot turn this off")
    return True
