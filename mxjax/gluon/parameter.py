"""Gluon ``Parameter`` and ``Constant``: a named array with its gradient, initializer and multipliers.

A parameter whose shape is not fully known (``Dense(10)`` before it sees data:
weight ``(10, 0)``) defers its initialization; the block that owns it fills in
the shape from the first input (``infer_shape``) and the initializer runs then.
"""
from __future__ import annotations

import threading
import uuid
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config, initializer, symbol
from ..base import MXNetError, MXNetValueError, normalize_dtype
from ..device import Device, current_device, needs_placing
from .._ndarray import NDArray, device_copy
from .._invoke import default_class as _default_class
from ..optimizer import _donation

__all__ = ["Parameter", "Constant", "DeferredInitializationError"]


class DeferredInitializationError(MXNetError):
    """The parameter's shape is not known yet: it is initialized on the block's first forward."""


def _known(shape: tuple | None) -> bool:
    return shape is not None and all(int(d) > 0 for d in shape)


# Deferred initialization finishes once: threads making a block's first forward together (a served
# model) would each draw new values, and what one computed would not be what the parameter holds.
_DEFERRED_INIT = threading.Lock()


class _ValuesMismatch(MXNetValueError, AssertionError):
    """Values that do not fit a parameter (``set_data`` with another shape, a file's value of another
    shape or dtype, or none for it): MXNet asserts there, so this is an ``AssertionError`` too."""


class Parameter:
    """A block's learnable (or fixed) array.

    ``shape`` may contain 0 or -1 for dimensions inferred from the first input;
    ``grad_req`` is 'write', 'add' or 'null'; ``lr_mult``/``wd_mult`` scale the
    optimizer's learning rate and weight decay for this parameter.
    """

    def __init__(self, name: str = "weight", grad_req: str = "write", shape: Any = None, dtype: Any = onp.float32,
                 lr_mult: float = 1.0, wd_mult: float = 1.0, init: Any = None, allow_deferred_init: bool = False,
                 differentiable: bool = True, stype: str = "default", grad_stype: str = "default") -> None:
        self._name = name
        self._shape = None if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
        self.dtype = normalize_dtype(dtype) or onp.dtype(onp.float32)
        self.lr_mult, self.wd_mult = float(lr_mult), float(wd_mult)
        self.init = init
        self.allow_deferred_init = allow_deferred_init
        self._differentiable = differentiable
        if stype != "default" or grad_stype != "default":
            raise MXNetValueError(f"Parameter {name!r}: only dense ('default') storage is supported")
        self._grad_req = "null" if not differentiable else grad_req
        self._data: NDArray | None = None
        self._deferred: tuple | None = None   # (init, device, default_init) waiting for the shape
        self._uuid = str(uuid.uuid4())  # the identity Block.save records (MXNet 2.0's parameter id)

    # -- identity -----------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={onp.dtype(self.dtype).name})"

    @property
    def shape(self) -> tuple | None:
        """The shape; a dimension not known yet shows as -1 under NumPy shape semantics (MXNet 2.0's
        default), as 0 without them (MXNet 1.x)."""
        if self._shape is None or all(d > 0 for d in self._shape):
            return self._shape
        unknown = -1 if _config.is_np_shape() else 0
        return tuple(d if d > 0 else unknown for d in self._shape)

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        new_shape = tuple(new_shape)
        if self._shape is not None:
            if len(new_shape) != len(self._shape) or any(
                    old > 0 and old != new for old, new in zip(self._shape, new_shape)):
                raise MXNetValueError(f"Parameter {self.name!r}: shape {new_shape} is inconsistent with the "
                                      f"declared shape {self._shape}")
        self._shape = new_shape

    @property
    def grad_req(self) -> str:
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in ("write", "add", "null"):
            raise MXNetValueError(f"Parameter {self.name!r}: grad_req must be 'write', 'add' or 'null', got {req!r}")
        if not self._differentiable:
            req = "null"
        self._grad_req = req
        if self._data is not None:
            self._attach(self._data)

    # -- initialization -------------------------------------------------------------
    def initialize(self, init: Any = None, device: Device | None = None, default_init: Any = None,
                   force_reinit: bool = False) -> None:
        """Allocate and fill the array (deferred until the shape is known when it has unknown dims)."""
        if self._data is not None and not force_reinit:
            return
        default_init = default_init if default_init is not None else initializer.Uniform()
        if not _known(self._shape):
            if not self.allow_deferred_init and self._shape is None:
                raise MXNetError(f"Parameter {self.name!r} has no shape; give it one or allow deferred init")
            self._deferred = (init, device, default_init)
            return
        self._init_now(init, device, default_init)

    @_config.with_x64
    def _init_now(self, init: Any, device: Device | None, default_init: Any) -> None:
        device = device[0] if isinstance(device, (list, tuple)) else device
        array = _default_class()._wrap(jnp.zeros(self._shape, self.dtype))
        target = device if device is not None else current_device()
        if target != current_device() or needs_placing(target):
            array = array.to_device(target)
        # as MXNet 2: the parameter's own initializer, else the given one, else the default, rides in
        # the __init__ attribute, which wins over the default initializer's name-based dispatch
        chosen = self.init if self.init is not None else init if init is not None else default_init
        desc = initializer.InitDesc(self.name, {"__init__": chosen}, global_init=default_init)
        initializer.create(default_init)(desc, array)
        self._deferred = None
        self._attach(array)

    def _finish_deferred_init(self) -> None:
        with _DEFERRED_INIT:
            if self._deferred is None or self._data is not None:
                return
            if not _known(self._shape):
                raise DeferredInitializationError(
                    f"Parameter {self.name!r} has unknown shape {self._shape}; run a forward pass first")
            self._init_now(*self._deferred)

    def _attach(self, array: NDArray) -> None:
        self._data = array
        if self._grad_req != "null":
            array.attach_grad(self._grad_req)
        elif array._ag is not None:
            array._ag = None

    # -- access ---------------------------------------------------------------------
    def _check(self) -> NDArray:
        if self._data is None:
            if self._deferred is not None:
                raise DeferredInitializationError(
                    f"Parameter {self.name!r} has not been initialized yet because its shape {self._shape} is "
                    "not known; it is initialized on the block's first forward pass")
            raise MXNetError(f"Parameter {self.name!r} has not been initialized. Call block.initialize() (or "
                             "param.initialize()) before using it")
        data = self._data
        found = _donation.readers.get(id(data))  # (a thread's first read of this array: see _donation)
        if found is None or threading.current_thread() not in found:
            with _donation.LOCK:  # not during an update's donate-and-swap: then the new buffers are read
                _donation.note_reader(data)
                data = self._data
        return data

    def data(self, device: Device | None = None) -> NDArray:
        """The parameter's array (on ``device`` if given)."""
        data = self._check()
        return data if device is None or device == data.device else data.to_device(device)

    def list_data(self) -> list[NDArray]:
        return [self._check()]

    def row_sparse_data(self, row_id: Any) -> NDArray:
        """Rows of a 'row_sparse' parameter; parameters here are dense, so this raises as MXNet does for
        a dense ('default' storage) parameter."""
        raise MXNetError(f"Cannot return a copy of Parameter {self.name} via row_sparse_data() because its "
                         "storage type is default. Please use data() instead.")

    def list_row_sparse_data(self, row_id: Any) -> list[NDArray]:
        """Per-device rows of a 'row_sparse' parameter; raises for dense parameters, as in MXNet."""
        raise MXNetError(f"Cannot return copies of Parameter '{self.name}' on all devices via "
                         "list_row_sparse_data() because its storage type is default. Please use data() instead.")

    def grad(self, device: Device | None = None) -> NDArray:
        grad = self._check().grad
        if grad is None:
            raise MXNetError(f"Parameter {self.name!r} has no gradient: its grad_req is 'null'")
        return grad

    def list_grad(self) -> list[NDArray]:
        return [self.grad()]

    def list_device(self) -> list[Device]:
        """Where the values live (or will, for a parameter whose initialization waits for a shape)."""
        if self._data is None and self._deferred is not None:
            device = self._deferred[1]
            if device is None:
                return [current_device()]
            return list(device) if isinstance(device, (list, tuple)) else [device]
        return [self._check().device]

    list_ctx = list_device

    @_config.with_x64
    def set_data(self, data: Any) -> None:
        """Replace the values (shape must match; a deferred parameter takes the data's shape).

        The values are copied, as in MXNet: the caller's array stays its own (an optimizer update
        hands the parameter's buffer to XLA to reuse, which would delete a shared one)."""
        values = data.to_jax() if isinstance(data, NDArray) else data
        if not isinstance(values, jax.Array):
            values = onp.asarray(values)
        if self._data is None:
            self.shape = tuple(values.shape)
            self._deferred = None
            self._attach(_default_class()._wrap(device_copy(values, self.dtype)))
            return
        if tuple(values.shape) != self._data.shape:
            raise _ValuesMismatch(f"Parameter {self.name!r}: set_data with shape {tuple(values.shape)}, "
                                  f"expected {self._data.shape}")
        # (onto the parameter's own device)
        self._data._set_data(device_copy(values, self._data.dtype, self._data._where()))

    @_config.with_x64
    def zero_grad(self) -> None:
        if self._data is not None and self._data.grad is not None:
            grad = self._data.grad  # zeros where the weight lives, without computing a pending gradient
            grad._overwrite(jnp.zeros_like(self._data.to_jax(), dtype=grad.dtype))

    @_config.with_x64
    def cast(self, dtype: Any) -> None:
        """Change the dtype of the values (and of the gradient)."""
        self.dtype = normalize_dtype(dtype)
        if self._data is not None:
            self._attach(_default_class()._wrap(self._data.to_jax().astype(self.dtype)))

    def reset_device(self, device: Device) -> None:
        if self._data is not None:
            self._attach(self._data.to_device(device))
        elif self._deferred is not None:
            self._deferred = (self._deferred[0], device, self._deferred[2])

    reset_ctx = reset_device

    def var(self) -> Any:
        """This parameter as a symbol variable (name, shape, dtype, multipliers, initializer)."""
        return symbol.var(self.name, shape=self._shape, dtype=self.dtype, lr_mult=self.lr_mult,
                          wd_mult=self.wd_mult, init=_init_attr(self.init) if self.init is not None else None)


def _init_attr(init: Any) -> str:
    return init if isinstance(init, str) else getattr(init, "dumps", lambda: type(init).__name__.lower())()


class Constant(Parameter):
    """A parameter that never changes (grad_req 'null'), initialized to the given value."""

    def __init__(self, value: Any, name: str = "const") -> None:
        # a Python value becomes float32, as mx.np.array / mx.nd.array make it
        values = value.asnumpy() if isinstance(value, NDArray) else value if isinstance(value, onp.ndarray) \
            else onp.asarray(value, dtype=onp.float32)
        super().__init__(name=name, grad_req="null", shape=values.shape, dtype=values.dtype,
                         differentiable=False)
        self._value = values

    @_config.with_x64
    def _init_now(self, init: Any, device: Device | None, default_init: Any) -> None:
        self._attach(_default_class()._wrap(jnp.asarray(self._value)))

    @Parameter.grad_req.setter  # type: ignore[attr-defined]
    def grad_req(self, req: str) -> None:
        if req != "null":  # as MXNet: ignored with a warning, so net.setattr('grad_req', ...) works
            warnings.warn(f"Constant parameter {self.name!r} does not support grad_req other than 'null', and "
                          f"new value {req!r} is ignored.", stacklevel=2)

