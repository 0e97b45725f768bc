"""Devices: ``mx.cpu(i)``, ``mx.gpu(i)``, the current-device scope, mapped onto JAX devices."""
from __future__ import annotations

import contextvars
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from .base import MXNetError

__all__ = ["Device", "Context", "cpu", "gpu", "cpu_pinned", "current_device", "current_context", "num_gpus",
           "gpu_memory_info"]

_DEVICE_TYPES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_TYPE_IDS = {name: i for i, name in _DEVICE_TYPES.items()}
_current = contextvars.ContextVar("mxjax_device", default=None)


_ACCELERATORS = ("gpu", "cuda", "rocm")


def device_id_of(device: Any) -> int:
    """MXNet's id of a ``jax.Device``: its number among the GPUs; 0 for the host CPU."""
    return device.id if device.platform in _ACCELERATORS else 0


@functools.cache
def _several_devices() -> bool:
    """Whether this process has more than one device (asked on first use, once jax is set up)."""
    return len(jax.local_devices()) > 1


def array_device_id(data: Any) -> int:
    """MXNet's device id of a ``jax.Array`` (always 0 while there is one device)."""
    return device_id_of(next(iter(data.devices()))) if _several_devices() else 0


def _jax_devices(platform: str) -> list:
    try:
        return jax.devices(platform)
    except RuntimeError:
        return []


class Device:
    """A device as MXNet names it (``cpu(0)``, ``gpu(1)``); ``with Device:`` makes it the default.

    ``cpu_pinned`` and ``cpu_shared`` are accepted for compatibility and live on the host CPU.
    """

    __slots__ = ("device_type", "device_id", "_tokens")

    def __init__(self, device_type: "str | Device" = "cpu", device_id: int = 0):
        if isinstance(device_type, Device):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in _TYPE_IDS:
            raise MXNetError(f"unknown device type {device_type!r}; expected one of {sorted(_TYPE_IDS)}")
        self.device_type = device_type
        self.device_id = int(device_id)
        self._tokens: list = []

    @property
    def device_typeid(self) -> int:
        return _TYPE_IDS[self.device_type]

    @property
    def jax_device(self) -> Any:
        """The ``jax.Device`` this names; raises ``MXNetError`` if it does not exist."""
        if self.device_type == "gpu":
            gpus = _jax_devices("gpu")
            if self.device_id >= len(gpus):
                raise MXNetError(
                    f"gpu({self.device_id}) is not available: this process sees {len(gpus)} GPU(s); "
                    "use mx.cpu() or check mx.device.num_gpus()")
            return gpus[self.device_id]
        cpus = _jax_devices("cpu")
        return cpus[min(self.device_id, len(cpus) - 1)]

    @classmethod
    def from_jax(cls, device: Any) -> "Device":
        return cls("gpu" if device.platform in _ACCELERATORS else "cpu", device_id_of(device))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Device) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> "Device":
        self.jax_device  # fail early for a missing GPU
        self._tokens.append(_current.set(self))
        return self

    def __exit__(self, *exc: Any) -> None:
        _current.reset(self._tokens.pop())

    def empty_cache(self) -> None:
        """Kept for compatibility: XLA owns its allocator, so there is nothing to release by hand."""


Context = Device  # the 1.x name


def cpu(device_id: int = 0) -> Device:
    return Device("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Device:
    return Device("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Device:
    """A GPU device; using it where no such GPU exists raises ``MXNetError``."""
    return Device("gpu", device_id)


def num_gpus() -> int:
    return len(_jax_devices("gpu"))


def current_device() -> Device:
    """The device set by the innermost ``with device:`` block, else ``cpu(0)``."""
    dev = _current.get()
    return dev if dev is not None else _DEFAULT


current_context = current_device
_DEFAULT = Device("cpu", 0)
_NEEDS_PLACING: dict = {}  # (device, JAX's default-device setting) -> whether new arrays need placing


def needs_placing(device: Device) -> bool:
    """Whether a new array meant for ``device`` must be put there by hand: JAX puts new arrays on
    its own default device, and that is another one -- on a machine with a GPU, JAX's default is
    the GPU while MXNet's (and mxjax's) is ``cpu(0)``."""
    key = (device, jax.config.jax_default_device)
    found = _NEEDS_PLACING.get(key)
    if found is None:
        found = _NEEDS_PLACING[key] = device.jax_device != jax_default_device()
    return found


def jax_default_device() -> Any:
    """The JAX device on which JAX puts a new array (its ``jax_default_device`` setting, in effect
    in this thread, else its first device)."""
    setting = jax.config.jax_default_device
    if setting is None:
        return jax.devices()[0]
    if isinstance(setting, str):
        return jax.devices(setting)[0]
    return setting


def made_on(values: Any, device: Any) -> jax.Array:
    """``values`` (host data or a ``jax.Array``) as an array on JAX device ``device`` (None: JAX's
    default), for inputs mxjax makes once and reuses (a default head gradient, an optimizer's
    hyper-parameters).  On JAX's default device it is left uncommitted, as the arrays JAX makes there
    are: a committed input makes a program's outputs committed, and the next call with those then
    compiles anew.  Elsewhere it is committed there, or each call would copy it over."""
    if device is None or device == jax_default_device():
        # host data is put there as it is: jnp.asarray would compile a program per shape to stage it
        return jax.device_put(values) if isinstance(values, onp.ndarray) else jnp.asarray(values)
    return jax.device_put(values, device)


def gpu_memory_info(device_id: int = 0) -> tuple[int, int]:
    """``(free, total)`` bytes of GPU ``device_id``, from JAX's allocator statistics.

    ``total`` is the memory JAX's allocator may use (its ``bytes_limit``), ``free`` that minus
    what live buffers hold.  Without a GPU this raises ``MXNetError`` as MXNet built without CUDA.
    """
    gpus = _jax_devices("gpu")
    if not gpus:
        raise MXNetError("This call is only supported for MXNet built with CUDA support.")
    if not 0 <= int(device_id) < len(gpus):
        raise MXNetError(f"gpu_memory_info: gpu({device_id}) does not exist; this machine has {len(gpus)} GPU(s)")
    stats = gpus[int(device_id)].memory_stats() or {}
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total
