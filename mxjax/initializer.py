"""``mx.init`` / ``mx.initializer``: MXNet's parameter initializers.

An initializer is called as ``init(desc, arr)``: ``desc`` names the parameter (an
``InitDesc``, or a plain string on the deprecated legacy path) and ``arr`` is an
NDArray filled in place.  The name picks what is filled (``*weight`` → the
initializer's own ``_init_weight``, ``*bias`` → 0, ``*gamma`` → 1, ...) unless the
descriptor's attributes carry an ``__init__`` (as symbol JSON variables do), which
then initializes the array whatever its name.  ``dumps()`` gives the
``["name", {kwargs}]`` JSON MXNet writes into ``__init__`` attributes, and
``create`` reads it back, as well as plain names and instances.

Random initializers draw from the stream ``mx.random.seed`` restarts, so a seed
and a sequence of initializations always give the same values; values take the
target array's dtype.
"""
from __future__ import annotations

import functools
import json
import logging
import math
import re
import warnings
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as onp

from . import _config, _rng
from .base import MXNetTypeError, MXNetValueError, string_types  # noqa: F401  (string_types: MXNet's)
from ._config import is_np_array  # noqa: F401  (MXNet's initializer carries it)
from ._ndarray import NDArray, device_copy
from .ndarray._io import load

__all__ = [
    "InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero", "Zeros", "One", "Ones",
    "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "RNNFused",
]


class InitDesc(str):
    """A variable's name, with its attributes (``attrs``) and the global initializer (``global_init``)."""

    def __new__(cls, name: str, attrs: dict | None = None, global_init: "Initializer | None" = None) -> "InitDesc":
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# -- writing into the target array ----------------------------------------------------------------
def _target(arr: Any, who: str) -> jax.Array:
    if not isinstance(arr, NDArray):
        raise MXNetTypeError(f"{who}: the array to initialize must be an NDArray, got {type(arr).__name__}")
    return arr.to_jax()


@_config.with_x64  # float64 parameters are filled as float64
def _fill(arr: NDArray, values: Any, who: str) -> None:
    """Write ``values`` (broadcast to ``arr``'s shape, cast to its dtype) into ``arr`` in place."""
    target = _target(arr, who)
    data = device_copy(values.to_jax() if isinstance(values, NDArray) else values, target.dtype)
    if data.shape != target.shape:
        try:
            data = jnp.broadcast_to(data, target.shape)
        except ValueError:
            raise MXNetValueError(f"{who}: values of shape {tuple(data.shape)} cannot fill an array of shape "
                                  f"{tuple(target.shape)}") from None
    sharding = getattr(target, "sharding", None)
    arr._write(jax.device_put(data, sharding) if sharding is not None else data)


def _host_rng(key: jax.Array) -> onp.random.Generator:
    """A NumPy generator seeded from ``key`` (the ``mx.random.seed`` stream): initial values are
    drawn on the host, where a new weight shape costs no compilation (a JAX draw compiled one
    program per shape: 29 of them, 11-13 s, for resnet18_v1's ``initialize()``)."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return onp.random.default_rng([int(v) for v in onp.asarray(key).ravel()])


@functools.partial(jax.jit, static_argnames=("shape", "normal"))
def _orthogonal(key: jax.Array, *, shape: tuple, normal: bool) -> jax.Array:
    # MXNet: SVD of a (nout, nin) random matrix; keep whichever factor has that shape
    f32 = jnp.float32
    tmp = jax.random.normal(key, shape, f32) if normal else jax.random.uniform(key, shape, f32, -1.0, 1.0)
    u, _, v = jnp.linalg.svd(tmp, full_matrices=False)
    return u if u.shape == tmp.shape else v


@_config.with_x64
def _random_into(arr: NDArray, normal: bool, scale: float, who: str) -> None:
    """Fill with N(0, scale²) or U[-scale, scale) samples, drawn in the target's float dtype (float32 for
    an integer target, cast on writing)."""
    dtype = _target(arr, who).dtype
    dtype = dtype if jnp.issubdtype(dtype, jnp.floating) else jnp.dtype("float32")
    rng = _host_rng(_rng.next_key())
    drawn = onp.float64 if dtype == jnp.float64 else onp.float32  # (float16/bfloat16: drawn as float32,
    # cast by _fill)
    if normal:
        values = rng.standard_normal(arr.shape, dtype=drawn) * drawn(scale)
    else:
        values = rng.random(arr.shape, dtype=drawn) * drawn(2 * scale) - drawn(scale)
    _fill(arr, values, who)


def _jsonable(value: Any) -> Any:
    """Array-valued arguments (Constant's value) are written as nested lists."""
    return onp.asarray(value).tolist() if isinstance(value, (NDArray, onp.ndarray, onp.generic)) else value


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


# -- composite initializers ------------------------------------------------------------------------
class Load:
    """Initialize from saved parameters (a ``.params`` file name or a dict of name → array), dropping
    ``arg:``/``aux:`` prefixes; names not found go to ``default_init``."""

    def __init__(self, param: Any, default_init: Any = None, verbose: bool = False):
        if isinstance(param, str):
            param = load(param)
        if not isinstance(param, dict):
            raise MXNetTypeError(f"Load: expected a file name or a dict of name -> array, got {type(param).__name__}")
        self.param = {name[4:] if name.startswith(("arg:", "aux:")) else name: arr for name, arr in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name: str, arr: NDArray) -> None:
        if name in self.param:
            source = self.param[name]
            shape = tuple(source.shape) if isinstance(source, NDArray) else onp.shape(source)
            if tuple(arr.shape) != shape:
                raise MXNetValueError(f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                                      f"target {tuple(arr.shape)} vs loaded {shape}")
            _fill(arr, source if isinstance(source, NDArray) else onp.asarray(source), "Load")
            if self.verbose:
                logging.info("Initialized %s by loading", name)
        else:
            if self.default_init is None:
                raise MXNetValueError(f"Cannot initialize {name}: not found in the loaded parameters "
                                      "and no default initializer is provided")
            self.default_init(name, arr)
            if self.verbose:
                logging.info("Initialized %s by default", name)


class Mixed:
    """Initialize with the first initializer whose regular expression matches the parameter name
    (``re.match``: anchored at the start)."""

    def __init__(self, patterns: list, initializers: list):
        if len(patterns) != len(initializers):
            raise MXNetValueError(f"Mixed: got {len(patterns)} patterns but {len(initializers)} initializers")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name: str, arr: NDArray) -> None:
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise MXNetValueError(f"Parameter name {name} did not match any pattern. Consider adding a \".*\" "
                              "pattern at the end with a default Initializer.")


# -- the initializers ------------------------------------------------------------------------------
@register
@alias("zeros")
class Zero(Initializer):
    """Initializes weights to zero."""

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _fill(arr, 0, "Zero")


@register
@alias("ones")
class One(Initializer):
    """Initializes weights to one."""

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _fill(arr, 1, "One")


Zeros, Ones = Zero, One  # the plural names of the "zeros"/"ones" aliases


@register
class Constant(Initializer):
    """Initializes weights to ``value``: a scalar or an array broadcastable to the parameter's shape."""

    def __init__(self, value: Any):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, name: str, arr: NDArray) -> None:
        _fill(arr, self.value, f"Constant initializer for {name!r}")


@register
class Uniform(Initializer):
    """Initializes weights with values drawn uniformly from ``[-scale, scale)``."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _random_into(arr, False, self.scale, "Uniform")


@register
class Normal(Initializer):
    """Initializes weights with values drawn from N(0, ``sigma``²)."""

    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _: str, arr: NDArray) -> None:
        _random_into(arr, True, self.sigma, "Normal")


@register
class Orthogonal(Initializer):
    """Initializes weights as a ``scale``-times orthogonal matrix (Saxe et al., arXiv:1312.6120): the
    (shape[0], prod(shape[1:])) SVD factor of a ``rand_type`` ("uniform" or "normal") random matrix."""

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform"):
        if rand_type not in ("uniform", "normal"):
            raise MXNetValueError(f'Orthogonal: rand_type must be "uniform" or "normal", got {rand_type!r}')
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, name: str, arr: NDArray) -> None:
        _target(arr, "Orthogonal")
        if arr.ndim < 1:
            raise MXNetValueError(f"Orthogonal initializer cannot be applied to the scalar {name}")
        nout, nin = arr.shape[0], int(onp.prod(arr.shape[1:]))
        res = _orthogonal(_rng.next_key(), shape=(nout, nin), normal=self.rand_type == "normal")
        _fill(arr, self.scale * res.reshape(arr.shape), "Orthogonal")


@register
class Xavier(Initializer):
    """"Xavier" initialization: uniform in [-c, c] (``rnd_type="uniform"``) or normal with sigma c
    (``"gaussian"``), c = sqrt(magnitude / factor), factor = fan_in, fan_out or their mean
    (``factor_type`` "in", "out", "avg"); fan_in = shape[1]·prod(shape[2:]), fan_out = shape[0]·prod(shape[2:])."""

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        if rnd_type not in ("uniform", "gaussian"):
            raise MXNetValueError(f'{type(self).__name__}: rnd_type must be "uniform" or "gaussian", got {rnd_type!r}')
        if factor_type not in ("avg", "in", "out"):
            raise MXNetValueError(f'{type(self).__name__}: factor_type must be "avg", "in" or "out", '
                                  f"got {factor_type!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: NDArray) -> None:
        shape = tuple(_target(arr, type(self).__name__).shape)
        if len(shape) < 2:
            raise MXNetValueError(f"{type(self).__name__} initializer cannot be applied to vector {name} of shape "
                                  f"{shape}. It requires at least 2D.")
        hw_scale = float(onp.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[self.factor_type]
        scale = math.sqrt(self.magnitude / factor)
        _random_into(arr, self.rnd_type == "gaussian", scale, type(self).__name__)


@register
class MSRAPrelu(Xavier):
    """MSRA initialization for (P)ReLU networks (He et al., arXiv:1502.01852): gaussian Xavier with
    magnitude 2 / (1 + slope²)."""

    def __init__(self, factor_type: str = "avg", slope: float = 0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Initializes a 4-D weight as a bilinear upsampling kernel."""

    def _init_weight(self, name: str, arr: NDArray) -> None:
        self._init_bilinear(name, arr)


@register
class LSTMBias(Initializer):
    """Initializes an LSTM bias to 0 except the forget gate's (the second quarter), set to ``forget_bias``."""

    def __init__(self, forget_bias: float = 1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name: str, arr: NDArray) -> None:
        target = _target(arr, "LSTMBias")
        if target.ndim < 1:
            raise MXNetValueError(f"LSTMBias initializer cannot be applied to the scalar {name}")
        num_hidden = int(target.shape[0] / 4)
        values = onp.zeros(target.shape, onp.float64)
        values[num_hidden:2 * num_hidden] = self.forget_bias
        _fill(arr, values, "LSTMBias")


@register
class RNNFused(Initializer):
    """Initializes the flat parameter vector of the fused ``RNN`` op piece by piece, in the op's order:
    each layer's and direction's i2h, h2h (and, with ``projection_size``, h2r) weights, then the i2h and
    h2h biases, each filled by its own sub-initializer (any ``create`` argument).  The input size is read
    back from the vector's length.  A Gluon Parameter calls ``set_initializer(global_init)`` first,
    which, as in MXNet, fills the unset sub-initializers with the global one and replaces the set ones
    with ``'uniform'`` (weights) or ``'zero'`` (biases)."""

    def __init__(self, mode: str, num_layers: int, state_size: int, bidirectional: bool = False,
                 projection_size: int | None = None, i2h_weight_initializer: Any = None,
                 h2h_weight_initializer: Any = None, i2h_bias_initializer: Any = None,
                 h2h_bias_initializer: Any = None, h2r_weight_initializer: Any = None):
        gates = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
        if mode not in gates:
            raise MXNetValueError(f"RNNFused: mode={mode!r} is not supported; expected one of {sorted(gates)}")
        super().__init__(mode=mode, num_layers=num_layers, state_size=state_size, bidirectional=bidirectional,
                         projection_size=projection_size, i2h_weight_initializer=i2h_weight_initializer,
                         h2h_weight_initializer=h2h_weight_initializer, i2h_bias_initializer=i2h_bias_initializer,
                         h2h_bias_initializer=h2h_bias_initializer, h2r_weight_initializer=h2r_weight_initializer)
        self.gates, self.num_layers, self.num_hidden = gates[mode], num_layers, state_size
        self.dir = 2 if bidirectional else 1
        self.projection_size = projection_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer

    def _pieces(self, length: int) -> list[tuple[str, int]]:
        """``(initializer attribute, length)`` of each piece of a vector of ``length`` values."""
        gh, out, proj = self.gates * self.num_hidden, self.projection_size or self.num_hidden, self.projection_size
        later = (out * self.dir + out + 2) * gh * self.dir + (proj * self.num_hidden * self.dir if proj else 0)
        first = length - (self.num_layers - 1) * later                  # layer 0, both directions
        size_in = (first // self.dir - (proj * self.num_hidden if proj else 0)) // gh - out - 2
        if size_in < 1 or first != self.dir * (gh * (size_in + out + 2) + (proj * self.num_hidden if proj else 0)):
            raise MXNetValueError(
                f"RNNFused: a parameter vector of {length} values does not fit mode with {self.gates} gate(s), "
                f"num_layers={self.num_layers}, state_size={self.num_hidden}, directions={self.dir}, "
                f"projection_size={proj} for any input size")
        weights, biases = [], []
        for layer in range(self.num_layers):
            cols = size_in if layer == 0 else out * self.dir
            for _ in range(self.dir):
                weights += [("_i2h_weight_initializer", gh * cols), ("_h2h_weight_initializer", gh * out)]
                if proj:
                    weights.append(("_h2r_weight_initializer", proj * self.num_hidden))
                biases += [("_i2h_bias_initializer", gh), ("_h2h_bias_initializer", gh)]
        return weights + biases

    def _init_weight(self, name: str, arr: NDArray) -> None:
        target = _target(arr, "RNNFused")
        if target.ndim != 1:
            raise MXNetValueError(f"RNNFused initializes a flat parameter vector; {name!r} has shape {target.shape}")
        values = []
        for attr, size in self._pieces(target.shape[0]):
            init = getattr(self, attr)
            if init is None:
                raise MXNetValueError(f"RNNFused: no initializer for {attr[1:-12]} pieces; pass "
                                      f"{attr[1:]}= or let a Gluon Parameter set the global one")
            piece = NDArray._wrap(jnp.zeros((size,), target.dtype))
            create(init)(InitDesc(attr, {"__init__": init}), piece)
            values.append(piece.to_jax())
        _fill(arr, jnp.concatenate(values) if values else values, "RNNFused")

    def set_initializer(self, init: Any) -> None:
        """Gluon's hook (MXNet's rule, quirks kept): unset sub-initializers take ``init``, set ones become
        'uniform'/'zero'; h2h biases always end 'zero' (MXNet tests the i2h one, already replaced)."""
        self._i2h_weight_initializer = init if not self._i2h_weight_initializer else "uniform"
        self._h2h_weight_initializer = init if not self._h2h_weight_initializer else "uniform"
        self._i2h_bias_initializer = init if not self._i2h_bias_initializer else "zero"
        self._h2h_bias_initializer = init if not self._i2h_bias_initializer else "zero"
        self._h2r_weight_initializer = init if not self._h2r_weight_initializer else "uniform"
