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

The base class and registry live in ``_initializer_base``, the array writing and random
draws in ``_initializer_fill``, ``Load`` / ``Mixed`` in ``_initializer_composite``; this
module holds the registered initializers and is the public namespace for all of them.
"""
from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as onp

from . import _rng
from .base import MXNetValueError, string_types  # noqa: F401  (string_types: MXNet's)
from ._config import is_np_array  # noqa: F401  (MXNet's initializer carries it)
from ._ndarray import NDArray
from .ndarray._io import load  # noqa: F401  (MXNet's initializer carries it)
from ._initializer_base import InitDesc, Initializer, alias, create, register
from ._initializer_composite import Load, Mixed
from ._initializer_fill import _fill, _orthogonal, _random_into, _target

for _public in (InitDesc, Initializer, Load, Mixed):  # named by their public home, as in MXNet (repr, pickles)
    _public.__module__ = __name__

__all__ = [
    "InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero", "Zeros", "One", "Ones",
    "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "RNNFused",
]


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
