"""The NDArray core: a ``jax.Array`` plus an engine variable (or a lazy value), its reads,
copies and views; in-place writes and indexing come from ``_array_writes.Writes``, the
Python operators from ``_array_operators.Operators``, values on the host (``asnumpy``,
scalars, DLPack, printing) from ``_array_host.HostReads``.

Every op an array runs goes through :func:`mxjax._invoke.invoke`; this module registers
the class there.  Autograd's methods are filled in by the autograd layer (``_autograd_link``).
"""
from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from . import _config, _invoke
from . import engine as _engine
from ._array_host import HostReads
from ._array_operators import Operators
from ._array_writes import SWAP_LOCK, Writes
from ._invoke import default_class, invoke, np_class, settled
from .base import MXNetError, MXNetTypeError, MXNetValueError, normalize_dtype
from .device import Device, current_device, needs_placing
from .graph import bulk as _bulk
from .graph.lazy import Lazy
from .operator import OpDef, get_op
from .operator import _checked

__all__ = ["NDArray", "array", "waitall", "from_jax", "device_copy"]

_FLUENT_METHODS: dict[str, Any] = {}

_Struct = jax.ShapeDtypeStruct  # a lazy or pending array's stand-in ``_data``


class _AutogradLink:
    """NDArray's autograd methods call these; ``mxjax.autograd`` (a higher layer) fills them in."""

    attach_grad: Any = None
    drop_grad: Any = None
    grad_of: Any = None
    backward: Any = None


_autograd_link = _AutogradLink()


def register_fluent_methods(methods: dict[str, Any]) -> None:
    """Called by ``mx.nd``: the 1.x methods (name → function of the array) the legacy class offers."""
    _FLUENT_METHODS.update(methods)


def _op(name: str) -> OpDef:
    return get_op(name)


class NDArray(HostReads, Operators, Writes):
    """An n-dimensional array on a device: MXNet's ``mx.nd.NDArray`` (``mx.np.ndarray`` subclasses it).

    Holds a ``jax.Array`` (``to_jax()``) and, once host work touches it, an engine
    variable.  Writes (``x[...] = v``, ``+=``, ``copyto``, ``out=``) replace the
    buffer in place: the object keeps its identity and sees the new values.
    """

    # _data: the jax.Array (a ShapeDtypeStruct while lazy or pending); _var: engine variable (or the
    # LAZY marker of deferred compute); _ag: autograd entry; _dc: deferred-compute graph entry
    __slots__ = ("_data", "_var", "_ag", "_dc", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, data: Any = None, ctx: Device | None = None, dtype: Any = None):
        source = array(data if data is not None else [], dtype=dtype, ctx=ctx, cls=type(self))
        self._data, self._var, self._ag, self._dc = source._data, None, None, None

    @classmethod
    def _wrap(cls, data: Any) -> "NDArray":
        obj = object.__new__(cls)
        obj._data = data
        obj._var = None
        obj._ag = None
        obj._dc = None
        return obj

    # -- properties --------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def dtype(self) -> Any:
        return onp.dtype(self._data.dtype).type  # legacy NDArray reports the scalar type (numpy.float32)

    @property
    def size(self) -> int:
        return int(self._data.size)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def device(self) -> Device:
        found = self._where()
        return current_device() if found is None else Device.from_jax(found)

    def _where(self) -> Any:
        """The JAX device of the value, without computing it: a value not computed yet knows where
        it will be; None for a tracer inside the user's jit, which has no placement."""
        devices = getattr(self._data, "devices", None)
        if devices is not None:
            return next(iter(devices()))
        var = self._var
        return var.device(self) if isinstance(var, Lazy) else None

    ctx = device
    context = device

    @property
    def stype(self) -> str:
        return "default"

    @property
    def handle(self) -> Any:
        """The buffer behind the array (a ``jax.Array``, where MXNet gives its C handle): a lazy
        value is computed first, as any read does."""
        return self.to_jax()

    @property
    def engine_var(self) -> Any:
        """This array's engine variable (created on first use)."""
        if isinstance(self._var, Lazy):
            self.to_jax()
        if self._var is None:
            self._var = _engine.new_variable()
        return self._var

    @property
    def T(self) -> "NDArray":
        return self.transpose()

    # -- synchronisation (``wait_to_read``) and host transfer: ``_array_host.HostReads``

    def to_jax(self) -> jax.Array:
        """The underlying ``jax.Array``: computes a lazy (deferred) array, waits for pending engine
        writes and re-raises their failure (and an out-of-range index a compiled program found)."""
        if _checked.PENDING:
            _checked.raise_pending()
        var = self._var
        if var is not None:
            if isinstance(var, Lazy):
                previous = _config.swap_x64(True)
                try:
                    value = var.compute(self)
                finally:
                    _config.restore_x64(previous)
                with SWAP_LOCK:  # another thread may have settled it and written a new value since
                    settled_here = self._var is var
                    if settled_here:
                        self._data, self._var = value, None
                if not settled_here and self._var is not None:  # (a new lazy value: read that one)
                    return self.to_jax()
            else:
                if var.pending or var.exception is not None:
                    _engine.wait_for_variable(var)
                self._data = settled(self._data)
        data = self._data
        if type(data) is _Struct and self._var is not None:  # made lazy by another thread since `var` was read
            return self.to_jax()
        return data

    # -- conversion and copies ---------------------------------------------------------------
    def astype(self, dtype: Any, copy: bool = True) -> "NDArray":
        dtype = normalize_dtype(dtype)
        if not copy and onp.dtype(self._data.dtype) == dtype:
            return self
        return invoke(_op("astype"), (self,), {"dtype": dtype.name}, type(self))

    def copy(self) -> "NDArray":
        return invoke(_op("copy"), (self,), None, type(self))

    @_config.with_x64
    def copyto(self, other: "NDArray | Device") -> "NDArray":
        """Copy into ``other`` (an NDArray of the same shape: written in place) or onto a device."""
        if isinstance(other, Device):  # a copy even on the same device: updates donate their buffers
            return type(self)._wrap(jax.device_put(self.to_jax(), other.jax_device, may_alias=False))
        if not isinstance(other, NDArray):
            raise MXNetTypeError(f"copyto: expected an NDArray or a Device, got {type(other).__name__}")
        if other is self:
            return other
        if other.shape != self.shape:
            raise MXNetValueError(f"copyto: shape mismatch, source {self.shape} vs destination {other.shape}")
        target = other.to_jax()
        data = jnp.array(self.to_jax(), dtype=target.dtype, copy=True)  # never share the source's buffer
        other._write(jax.device_put(data, next(iter(target.devices()))))
        return other

    def to_device(self, device: Device) -> "NDArray":
        where = self._where()
        if device == self.device and (where is None or where == device.jax_device):
            return self
        return self.copyto(device)

    as_in_ctx = to_device
    as_in_context = to_device

    def as_np_ndarray(self) -> "NDArray":
        """The same array as ``mx.np.ndarray`` (no copy; same autograd and deferred-compute entries)."""
        return self._view_as(np_class())

    def as_nd_ndarray(self) -> "NDArray":
        """The same array as the legacy ``mx.nd.NDArray`` (no copy; same graph entries)."""
        return self._view_as(NDArray)

    def _as_class(self, cls: type) -> "NDArray":
        """This array as ``cls``: itself if it is one, else a view (:meth:`_view_as`)."""
        return self if type(self) is cls else self._view_as(cls)

    def _view_as(self, cls: type) -> "NDArray":
        lazy = isinstance(self._var, Lazy)
        if self._var is not None and not lazy:
            self.to_jax()  # settle pending engine work: the view does not share this array's var
        view = cls._wrap(self._data)
        view._ag, view._dc = self._ag, self._dc
        if lazy:
            view._var = self._var
            self._var.share(view)
        return view

    def detach(self) -> "NDArray":
        """The same values, cut off from the autograd graph.  A value not computed yet stays so (the
        copy shares the lazy value, as a view does): detaching inside ``record`` does not run the
        work recorded so far."""
        if self._dc is not None:  # a value of a traced graph: taken as it is now
            return type(self)._wrap(self.to_jax())
        detached = self._view_as(type(self))
        detached._ag = None
        return detached

    # -- Python protocol ------------------------------------------------------------
    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = object.__hash__

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), self._host()))

    # -- a few methods both array classes share --------------------------------------------
    def reshape(self, *shape: Any, **kwargs: Any) -> "NDArray":
        """Reshape; the legacy class also accepts MXNet's special codes (0, -1, -2, -3, -4)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = kwargs.pop("shape", shape)
        reverse = kwargs.pop("reverse", False)
        if kwargs:
            raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
        return invoke(_op("Reshape"), (self,), {"shape": tuple(shape), "reverse": bool(reverse)}, type(self))

    def transpose(self, *axes: Any) -> "NDArray":
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return invoke(_op("transpose"), (self,), {"axes": tuple(axes) if axes else None}, type(self))

    def __getattr__(self, name: str) -> Any:
        """MXNet 1.x's fluent methods (``x.sum(axis=1)``, ``x.relu()``), registered by ``mx.nd``."""
        method = _FLUENT_METHODS.get(name)
        if method is None or type(self)._fluent is False:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return functools.partial(method, self)

    _fluent = True  # mx.np.ndarray turns the 1.x methods off: it has NumPy's

    # -- autograd (implemented in mxjax.autograd, a higher layer, through _autograd_link) -----------
    def attach_grad(self, grad_req: str = "write", stype: Any = None) -> None:
        """Mark this array as a variable: ``backward`` writes its gradient into ``.grad``."""
        _autograd_link.attach_grad(self, grad_req, stype)

    def drop_grad(self) -> None:
        """Forget the gradient buffer of an array marked by ``attach_grad``: ``grad`` is None again
        and the array is no longer a variable of later ``backward`` calls."""
        _autograd_link.drop_grad(self)

    @property
    def grad(self) -> "NDArray | None":
        """The gradient buffer set up by ``attach_grad`` (``None`` for other arrays)."""
        return _autograd_link.grad_of(self) if self._ag is not None else None

    def backward(self, out_grad: "NDArray | None" = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:
        """Gradients of this (recorded) array w.r.t. the variables it depends on, into their ``.grad``."""
        _autograd_link.backward([self], None if out_grad is None else [out_grad], retain_graph, train_mode)


@_config.with_x64
def _rebuild(cls: type, values: onp.ndarray) -> NDArray:
    return cls._wrap(jnp.asarray(values))


@_config.with_x64
def device_copy(values: Any, dtype: Any = None, where: Any = None) -> jax.Array:
    """A new device buffer holding ``values`` (a ``jax.Array`` or host data) as ``dtype``, never
    the caller's buffer, on JAX device ``where`` -- by default an array's own device, and the
    current device for host data.  Host data goes by a transfer: JAX's ``jnp.asarray`` and
    ``jnp.array`` of a NumPy array compile a program per shape."""
    if isinstance(values, jax.Array):
        if dtype is not None:
            values = values.astype(dtype)
        where = where if where is not None else next(iter(values.devices()))
    else:
        values = onp.asarray(values, dtype=dtype)
        where = where if where is not None else current_device().jax_device
    return jax.device_put(values, where, may_alias=False)


def from_jax(data: jax.Array, cls: type | None = None) -> NDArray:
    """Wrap a ``jax.Array`` without copying."""
    return (cls or default_class())._wrap(data)


@_config.with_x64
def array(source: Any, dtype: Any = None, ctx: Device | None = None, cls: type | None = None,
          device: Device | None = None) -> NDArray:
    """Copy ``source`` (array-like, NumPy, JAX or NDArray) into a new array.

    Python lists and scalars get the default float dtype (float32) as in MXNet, even integers;
    NumPy, JAX and NDArray sources keep their dtype unless ``dtype`` is given.
    """
    cls = cls or default_class()
    device = device or ctx
    dtype = normalize_dtype(dtype)
    if isinstance(source, NDArray):
        data = source.to_jax()
    elif isinstance(source, (jax.Array, onp.ndarray)) or hasattr(source, "__array__"):
        data = source
    else:  # Python lists and scalars: MXNet's default float dtype, whatever the values
        data = onp.asarray(source)
        dtype = dtype or _config.default_float_dtype()
    if dtype is not None and dtype.kind == "V":
        raise MXNetTypeError(f"array: unsupported dtype {dtype}")
    target = device or current_device()
    if not isinstance(data, jax.Array):  # host data: convert with NumPy and transfer (no compile per shape)
        try:
            host = onp.array(data, dtype=dtype, copy=True)
        except (TypeError, ValueError) as err:
            raise MXNetTypeError(f"array: cannot make an array from {type(source).__name__}: {err}") from None
        if host.dtype.kind in "OUSV" and host.dtype != dtype:
            raise MXNetTypeError(f"array: cannot make an array of {host.dtype} values from {type(source).__name__}")
        explicit = device is not None or needs_placing(target)  # else uncommitted, like jnp.array's results
        return cls._wrap(jax.device_put(host, target.jax_device) if explicit else jax.device_put(host))
    try:
        result = jnp.array(data, dtype=dtype, copy=True)
    except (TypeError, ValueError) as err:
        raise MXNetTypeError(f"array: cannot make an array from {type(source).__name__}: {err}") from None
    if device is not None or needs_placing(target):
        result = jax.device_put(result, target.jax_device)
    return cls._wrap(result)




_invoke.configure(NDArray)


def waitall() -> None:
    """Wait for all pending engine work and all dispatched JAX computations; re-raise stored errors."""
    _bulk.flush_all()
    _engine.wait_for_all()
    try:
        (jax.effects_barrier if hasattr(jax, "effects_barrier") else lambda: None)()
        for buf in jax.live_arrays():
            buf.block_until_ready()
    except Exception as err:
        raise MXNetError(f"error in an asynchronous computation: {err}") from None
    _checked.raise_pending()  # an index a compiled program found out of range


def _flatten(x: NDArray) -> Any:
    return (x.to_jax(),), None


def _unflatten_for(cls: type) -> Any:
    return lambda aux, children: cls._wrap(children[0])


def register_pytree(cls: type) -> None:
    """Make ``cls`` a JAX pytree so NDArrays pass through ``jax.jit``/``jax.grad``/``jax.vmap``."""
    jax.tree_util.register_pytree_node(cls, _flatten, _unflatten_for(cls))


register_pytree(NDArray)
