"""Neural-network operators: activations, softmax family, dropout and special functions.

Each op carries MXNet 1.x's legacy name (the one symbol JSON stores) with the
MXNet 2 ``_npx_*`` name as an alias, and the legacy parameter names and types,
so ``{"act_type": "relu"}`` attribute strings decode onto it.  Layers live in
``nn_conv`` (dense, convolution, pooling, resizing), ``nn_norm`` (normalizations)
and ``nn_index`` (embedding, picking, sequences, losses), imported at the bottom.

Train mode: ops that behave differently in training (Dropout, BatchNorm) take a
keyword parameter ``_train`` (default False, MXNet's ``is_train`` outside
``autograd.record``).  It is runtime context, not an MXNet attribute: front-ends
pass ``autograd.is_training()``, executors pass their ``is_train``, and symbol
JSON never stores it.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from ._dtypes import resolve_dtype
from .nn_util import check_choice, fail, float_input, norm_axis
from .registry import defop

# -------------------------------------------------------------------- activations

_SELU_LAMBDA = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _softrelu(x):
    # MXNet's softrelu: the identity above 20, where log1p(exp(x)) == x in float32
    return jnp.where(x > 20, x, jnp.log1p(jnp.exp(jnp.minimum(x, 20))))


def _softsign(x):
    return x / (1 + jnp.abs(x))


def _mish(x):
    return x * jnp.tanh(_softrelu(x))


_ACTIVATIONS = {
    "relu": jax.nn.relu, "sigmoid": jax.nn.sigmoid, "log_sigmoid": jax.nn.log_sigmoid,
    "tanh": jnp.tanh, "softrelu": _softrelu, "softsign": _softsign, "mish": _mish,
}


@defop("Activation", aliases=("_npx_activation",))
def activation(data, *, act_type: str = "relu"):
    """Element-wise activation: relu, sigmoid, log_sigmoid, tanh, softrelu, softsign or mish."""
    check_choice("Activation", "act_type", act_type, tuple(_ACTIVATIONS))
    if act_type == "relu":  # keeps integer dtypes, as MXNet's relu does
        return jax.nn.relu(data)
    return _ACTIVATIONS[act_type](float_input("Activation", data))


@defop("relu", aliases=("_npx_relu",))
def relu(data):
    """Rectified linear unit ``max(x, 0)`` (gradient 0 at 0, as MXNet)."""
    return jax.nn.relu(data)


@defop("sigmoid", aliases=("_npx_sigmoid",))
def sigmoid(data):
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    return jax.nn.sigmoid(float_input("sigmoid", data))


@defop("log_sigmoid", aliases=("_npx_log_sigmoid",))
def log_sigmoid(data):
    """``log(sigmoid(x))``, computed stably."""
    return jax.nn.log_sigmoid(float_input("log_sigmoid", data))


@defop("softsign", aliases=("_npx_softsign",))
def softsign(data):
    """``x / (1 + |x|)``."""
    return _softsign(float_input("softsign", data))


@defop("mish", aliases=("_npx_mish",))
def mish(data):
    """``x * tanh(softrelu(x))``."""
    return _mish(float_input("mish", data))


_LEAKY_TYPES = ("leaky", "prelu", "elu", "selu", "gelu", "gelu_tanh", "rrelu")


def _prelu_slope(data, gamma):
    """PReLU's gamma broadcast along the channel axis 1 (a size-1 gamma is a scalar slope)."""
    if gamma is None:
        fail("LeakyReLU", "act_type='prelu' needs the gamma input")
    gamma = jnp.asarray(gamma)
    if gamma.size == 1:
        return gamma.reshape(())
    if data.ndim >= 2 and gamma.ndim == 1 and gamma.shape[0] == data.shape[1]:
        return gamma.reshape((1, -1) + (1,) * (data.ndim - 2))
    if gamma.shape == data.shape[1:] or gamma.shape == data.shape:
        return gamma
    fail("LeakyReLU", f"gamma of shape {tuple(gamma.shape)} does not broadcast along axis 1 of data "
                      f"{tuple(data.shape)}; expected ({data.shape[1] if data.ndim > 1 else 1},) or (1,)")


@defop("LeakyReLU", aliases=("_npx_leaky_relu",), param_shapes=lambda s, p: {1: (s[0][1],)})
def leaky_relu(data, gamma=None, *, act_type: str = "leaky", slope: float = 0.25,
               lower_bound: float = 0.125, upper_bound: float = 0.334):
    """Leaky ReLU family: leaky, prelu (learned ``gamma``), elu, selu, gelu, gelu_tanh, rrelu (inference)."""
    check_choice("LeakyReLU", "act_type", act_type, _LEAKY_TYPES)
    x = float_input("LeakyReLU", data)
    if act_type == "leaky":
        return jnp.where(x > 0, x, x * jnp.asarray(slope, x.dtype))
    if act_type == "prelu":
        return jnp.where(x > 0, x, x * _prelu_slope(x, gamma).astype(x.dtype))
    if act_type == "elu":
        return jnp.where(x > 0, x, jnp.asarray(slope, x.dtype) * jnp.expm1(jnp.minimum(x, 0)))
    if act_type == "selu":
        neg = jnp.asarray(_SELU_ALPHA, x.dtype) * jnp.expm1(jnp.minimum(x, 0))
        return jnp.asarray(_SELU_LAMBDA, x.dtype) * jnp.where(x > 0, x, neg)
    if act_type == "gelu":
        return 0.5 * x * (1 + jsp.erf(x / jnp.asarray(math.sqrt(2.0), x.dtype)))
    if act_type == "gelu_tanh":
        inner = jnp.asarray(math.sqrt(2.0 / math.pi), x.dtype) * (x + 0.044715 * x ** 3)
        return 0.5 * x * (1 + jnp.tanh(inner))
    # rrelu at inference: the mean of the slope range
    mean_slope = jnp.asarray((lower_bound + upper_bound) / 2.0, x.dtype)
    return jnp.where(x > 0, x, x * mean_slope)


@defop("_rrelu_train", needs_key=True)
def rrelu_train(key, data, *, lower_bound: float = 0.125, upper_bound: float = 0.334):
    """Randomized leaky ReLU in training: one slope per element drawn from U[lower_bound, upper_bound)."""
    x = float_input("LeakyReLU", data)
    slopes = jax.random.uniform(key, x.shape, x.dtype, lower_bound, upper_bound)
    return jnp.where(x > 0, x, x * slopes)


# -------------------------------------------------------------------- softmax family

def _softmax_input(op, data, dtype, temperature):
    x = float_input(op, data)
    if dtype is not None:
        x = x.astype(resolve_dtype(dtype))
    if temperature is not None and temperature != 1.0:
        x = x / jnp.asarray(temperature, x.dtype)
    return x


def _length_mask(op, x, length, axis):
    """True where the position along ``axis`` is below ``length`` (which has x's shape without axis)."""
    if length is None:
        fail(op, "use_length=True needs the length input")
    length = jnp.asarray(length)
    expected = x.shape[:axis] + x.shape[axis + 1:]
    if tuple(length.shape) != expected:
        fail(op, f"length has shape {tuple(length.shape)} but {expected} is expected "
                 f"(data {tuple(x.shape)} without axis {axis})")
    positions = jax.lax.broadcasted_iota(jnp.int32, x.shape, axis)
    return positions < jnp.expand_dims(length.astype(jnp.int32), axis)


def _softmax_family(op, fn, data, length, axis, temperature, dtype, use_length):
    x = _softmax_input(op, data, dtype, temperature)
    axis = norm_axis(op, axis, x.ndim)
    if not use_length:
        return fn(x, axis=axis)
    mask = _length_mask(op, x, length, axis)
    # MXNet writes 0 past each length, for softmax and log_softmax alike
    return jnp.where(mask, fn(x, axis=axis, where=mask), jnp.zeros((), x.dtype))


@defop("softmax", aliases=("_npx_softmax",))
def softmax(data, length=None, *, axis: int = -1, temperature: float | None = None,
            dtype: dtype | None = None, use_length: bool = False):
    """Softmax along ``axis`` of ``data / temperature``; with ``use_length``, positions past ``length`` give 0."""
    return _softmax_family("softmax", jax.nn.softmax, data, length, axis, temperature, dtype, use_length)


@defop("log_softmax", aliases=("_npx_log_softmax",))
def log_softmax(data, length=None, *, axis: int = -1, temperature: float | None = None,
                dtype: dtype | None = None, use_length: bool = False):
    """Log of the softmax along ``axis``; with ``use_length``, positions past ``length`` give 0."""
    return _softmax_family("log_softmax", jax.nn.log_softmax, data, length, axis, temperature, dtype,
                           use_length)


@defop("softmin")
def softmin(data, length=None, *, axis: int = -1, temperature: float | None = None,
            dtype: dtype | None = None, use_length: bool = False):
    """Softmax of ``-data`` along ``axis``."""
    return _softmax_family("softmin", lambda x, axis, where=None: jax.nn.softmax(-x, axis=axis, where=where),
                           data, length, axis, temperature, dtype, use_length)


def _mask_for(op, x, mask):
    mask = jnp.asarray(mask)
    try:
        return jnp.broadcast_to(mask.astype(bool), x.shape)
    except ValueError:
        fail(op, f"mask of shape {tuple(mask.shape)} does not broadcast to data {tuple(x.shape)}")


@defop("masked_softmax", aliases=("_npx_masked_softmax",))
def masked_softmax(data, mask, *, axis: int = -1, temperature: float = 1.0, normalize: bool = True):
    """Softmax over the positions where ``mask`` is true; masked positions give 0.

    ``normalize`` (subtract the max first) is accepted for MXNet compatibility: the
    computation is always stabilized that way.
    """
    x = _softmax_input("masked_softmax", data, None, temperature)
    axis = norm_axis("masked_softmax", axis, x.ndim)
    keep = _mask_for("masked_softmax", x, mask)
    return jnp.where(keep, jax.nn.softmax(x, axis=axis, where=keep), jnp.zeros((), x.dtype))


@defop("masked_log_softmax", aliases=("_npx_masked_log_softmax",))
def masked_log_softmax(data, mask, *, axis: int = -1, temperature: float = 1.0, normalize: bool = True):
    """Log-softmax over the positions where ``mask`` is true; masked positions give -inf."""
    x = _softmax_input("masked_log_softmax", data, None, temperature)
    axis = norm_axis("masked_log_softmax", axis, x.ndim)
    keep = _mask_for("masked_log_softmax", x, mask)
    return jnp.where(keep, jax.nn.log_softmax(x, axis=axis, where=keep), jnp.asarray(-jnp.inf, x.dtype))


@defop("SoftmaxActivation")
def softmax_activation(data, *, mode: str = "instance"):
    """Softmax per instance (over all axes but the first) or per channel (axis 1)."""
    check_choice("SoftmaxActivation", "mode", mode, ("instance", "channel"))
    x = float_input("SoftmaxActivation", data)
    if mode == "channel":
        if x.ndim < 2:
            fail("SoftmaxActivation", f"mode='channel' needs at least 2-D data, got shape {tuple(x.shape)}")
        return jax.nn.softmax(x, axis=1)
    return jax.nn.softmax(x.reshape(x.shape[0], -1), axis=1).reshape(x.shape)


# -------------------------------------------------------------------- dropout

@defop("Dropout", aliases=("_npx_dropout",), needs_key=True)
def dropout(key, data, *, p: float = 0.5, mode: str = "training", axes: shape = (),
            cudnn_off: bool | None = False, _train: bool = False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    Active in training (``_train``) or always with ``mode='always'``; the identity
    otherwise.  ``axes`` share one mask value along those axes (variational dropout).
    """
    check_choice("Dropout", "mode", mode, ("training", "always"))
    if not 0.0 <= p <= 1.0:
        fail("Dropout", f"p={p} must lie in [0, 1]")
    if p == 0.0 or (mode == "training" and not _train):
        return data
    mask_shape = list(data.shape)
    for ax in axes or ():
        mask_shape[norm_axis("Dropout", ax, data.ndim)] = 1
    if p == 1.0:
        return jnp.zeros_like(data)
    keep = jax.random.bernoulli(key, 1.0 - p, tuple(mask_shape))
    scale = jnp.asarray(1.0 / (1.0 - p), data.dtype)
    return jnp.where(keep, data * scale, jnp.zeros((), data.dtype))


# -------------------------------------------------------------------- special functions

@defop("erf", aliases=("_npx_erf",))
def erf(data):
    """Gauss error function."""
    return jsp.erf(float_input("erf", data))


@defop("erfinv", aliases=("_npx_erfinv",))
def erfinv(data):
    """Inverse of the error function."""
    return jsp.erfinv(float_input("erfinv", data))


@defop("gamma", aliases=("_npx_gamma",))
def gamma(data):
    """The gamma function (the special function; random gamma sampling is ``_npi_gamma``)."""
    return jsp.gamma(float_input("gamma", data))


@defop("gammaln", aliases=("_npx_gammaln",))
def gammaln(data):
    """Natural log of the absolute value of the gamma function."""
    return jsp.gammaln(float_input("gammaln", data))


@defop("digamma", aliases=("_npx_digamma",))
def digamma(data):
    """Logarithmic derivative of the gamma function."""
    return jsp.digamma(float_input("digamma", data))


# The layer modules register on import; keep them after the definitions above.
from . import nn_conv, nn_norm, nn_index  # noqa: E402,F401
