"""``mx.init``'s base class ``Initializer``, the ``InitDesc`` name, and the registry behind ``create``.

``Initializer.__call__`` picks what to fill from the parameter's name (the suffix
tables here) or its ``__init__`` attribute, which ``create`` turns back into an
initializer; the base class and the registry need each other, so they live together,
apart from the concrete initializers built on them.
"""
from __future__ import annotations

import json
import logging
import math
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as onp

from . import _rng
from .base import MXNetTypeError, MXNetValueError
from ._ndarray import NDArray
from ._initializer_fill import _fill, _jsonable, _target


class InitDesc(str):
    """A variable's name, with its attributes (``attrs``) and the global initializer (``global_init``)."""

    def __new__(cls, name: str, attrs: dict | None = None, global_init: "Initializer | None" = None) -> "InitDesc":
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# -- the base class --------------------------------------------------------------------------------
class Initializer:
    """The base class of an initializer: subclasses implement ``_init_weight(name, arr)``."""

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func: Callable | None = None

    def set_verbosity(self, verbose: bool = False, print_func: Callable | None = None) -> "Initializer":
        """Log a statistic of each initialized array (default: its root mean square)."""
        self._verbose = verbose
        if print_func is None:
            def print_func(x: NDArray) -> str:
                values = x.asnumpy().astype(onp.float64)
                return str(onp.linalg.norm(values) / math.sqrt(max(values.size, 1)))
        self._print_func = print_func
        return self

    def _verbose_print(self, desc: str, init: Any, arr: NDArray) -> None:
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """The JSON string ``["name", {kwargs}]`` that ``create`` turns back into this initializer."""
        kwargs = {key: _jsonable(value) for key, value in self._kwargs.items()}
        return json.dumps([type(self).__name__.lower(), kwargs])

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self._kwargs.items())
        return f"{type(self).__name__}({args})"

    def __call__(self, desc: Any, arr: NDArray) -> None:
        """Fill ``arr`` in place, choosing what to fill from ``desc`` (see the module docstring)."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _DESC_PATTERNS:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name: Any, arr: NDArray) -> None:
        """The deprecated ``init(name, arr)`` form: the name alone decides."""
        warnings.warn("Calling an initializer with init(str, NDArray) is deprecated; "
                      "use init(mx.init.InitDesc(...), NDArray) instead.", DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise MXNetTypeError(f"initializer: the parameter name must be a string, got {type(name).__name__}")
        _target(arr, f"initializer for {name!r}")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
        elif name.startswith("stn_loc") and name.endswith("weight"):
            self._init_zero(name, arr)
        elif name.startswith("stn_loc") and name.endswith("bias"):
            self._init_loc_bias(name, arr)
        else:
            for suffix, method in _LEGACY_PATTERNS:
                if name.endswith(suffix):
                    getattr(self, method)(name, arr)
                    return
            self._init_default(name, arr)

    def _init_bilinear(self, name: str, arr: NDArray) -> None:
        shape = arr.shape
        if len(shape) != 4:
            raise MXNetValueError(f"Bilinear initializer for {name!r}: expected a 4-D (upsampling kernel) array, "
                                  f"got shape {shape}")
        f = onp.ceil(shape[3] / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        i = onp.arange(int(onp.prod(shape)))
        x = i % shape[3]
        y = (i // shape[3]) % shape[2]
        weight = ((1 - onp.abs(x / f - c)) * (1 - onp.abs(y / f - c))).astype(onp.float32)
        _fill(arr, weight.reshape(shape), "Bilinear initializer")

    def _init_loc_bias(self, name: str, arr: NDArray) -> None:
        if arr.shape != (6,):
            raise MXNetValueError(f"initializer for {name!r}: a spatial-transformer location bias must have "
                                  f"shape (6,), got {arr.shape}")
        _fill(arr, onp.array([1.0, 0, 0, 0, 1.0, 0]), "initializer")

    def _init_zero(self, _: str, arr: NDArray) -> None:
        _fill(arr, 0.0, "initializer")

    def _init_one(self, _: str, arr: NDArray) -> None:
        _fill(arr, 1.0, "initializer")

    _init_bias = _init_zero
    _init_beta = _init_zero
    _init_gamma = _init_one
    _init_quantized_bias = _init_zero

    def _init_quantized_weight(self, _: str, arr: NDArray) -> None:
        _target(arr, "initializer")
        _fill(arr, jax.random.randint(_rng.next_key(), arr.shape, -127, 127, jnp.int32), "initializer")

    def _init_weight(self, name: str, arr: NDArray) -> None:
        raise MXNetTypeError(f"{type(self).__name__} does not initialize weights: an Initializer subclass must "
                             f"override _init_weight(name, arr) (while initializing {name!r})")

    def _init_default(self, name: str, _: NDArray) -> None:
        raise MXNetValueError(
            f"Unknown initialization pattern for {name}. Default initialization is now limited to "
            '"weight", "bias", "gamma" (1.0), and "beta" (0.0). '
            "Please use mx.sym.Variable(init=mx.init.*) to set initialization pattern")


# Suffix → method, first match wins, in MXNet's order (running_* are Gluon's names for moving_*).
_STAT_PATTERNS = (
    ("moving_mean", "_init_zero"), ("running_mean", "_init_zero"), ("moving_var", "_init_one"),
    ("running_var", "_init_one"), ("moving_inv_var", "_init_zero"), ("moving_avg", "_init_zero"),
    ("min", "_init_zero"), ("max", "_init_one"),
)
_DESC_PATTERNS = (
    ("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"),
    *_STAT_PATTERNS, ("weight_quantize", "_init_quantized_weight"), ("bias_quantize", "_init_quantized_bias"),
)
_LEGACY_PATTERNS = (
    ("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"), ("weight", "_init_weight"),
    *_STAT_PATTERNS,
)


# -- registry --------------------------------------------------------------------------------------
_REGISTRY: dict[str, type] = {}


def _register_as(klass: type, name: str) -> None:
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise MXNetTypeError(f"register: can only register a subclass of mx.init.Initializer, got {klass!r}")
    name = name.lower()
    if _REGISTRY.get(name, klass) is not klass:
        warnings.warn(f"new initializer {klass.__module__}.{klass.__name__} registered with name {name} is "
                      f"overriding existing initializer {_REGISTRY[name].__module__}.{_REGISTRY[name].__name__}",
                      UserWarning, stacklevel=3)
    _REGISTRY[name] = klass


def register(klass: type) -> type:
    """Class decorator: make an Initializer subclass creatable by its lowercase class name."""
    _register_as(klass, klass.__name__)
    return klass


def alias(*aliases: str) -> Callable[[type], type]:
    """Class decorator: make an Initializer subclass creatable by each of ``aliases`` too."""
    def reg(klass: type) -> type:
        for name in aliases:
            _register_as(klass, name)
        return klass
    return reg


def create(*args: Any, **kwargs: Any) -> Initializer:
    """An initializer from an instance (returned as is), a registered name (any case) with constructor
    arguments, a JSON ``["name", {kwargs}]`` / ``{"initializer": name, ...}`` string, or such a dict."""
    if args:
        name, args = args[0], args[1:]
    elif "initializer" in kwargs:
        name = kwargs.pop("initializer")
    else:
        raise MXNetTypeError("create: expected an initializer name, JSON string or instance")
    if isinstance(name, Initializer):
        if args or kwargs:
            raise MXNetValueError(f"create: {name!r} is already an instance; additional arguments are invalid")
        return name
    if isinstance(name, dict):
        return create(**name, **kwargs)
    if not isinstance(name, str):
        raise MXNetTypeError(f"create: an initializer must be given as a name, JSON string or Initializer, "
                             f"got {type(name).__name__}")
    text = name.strip()
    if text.startswith(("[", "{")):
        if args or kwargs:
            raise MXNetValueError("create: no further arguments are allowed with a JSON initializer description")
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as err:
            raise MXNetValueError(f"create: {name!r} is not valid initializer JSON ({err})") from None
        if isinstance(spec, dict):
            return create(**spec)
        if not (isinstance(spec, list) and len(spec) == 2 and isinstance(spec[1], dict)):
            raise MXNetValueError(f'create: expected ["name", {{kwargs}}], got {name!r}')
        return create(spec[0], **spec[1])
    klass = _REGISTRY.get(text.lower())
    if klass is None:
        raise MXNetValueError(f"create: initializer {name!r} is not registered (known: {', '.join(sorted(_REGISTRY))}); "
                              "register it with mx.init.register first")
    return klass(*args, **kwargs)

