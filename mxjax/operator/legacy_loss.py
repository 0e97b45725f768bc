"""Legacy (MXNet 1.x) output/loss layers: forward is a plain transform, backward a fixed loss gradient.

``SoftmaxOutput`` and the regression outputs ignore the incoming gradient (they are
the end of a 1.x network) and produce the gradient of their implied loss, so they
are ``jax.custom_vjp`` functions; the label gets a zero gradient.
"""
from __future__ import annotations

from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetValueError
from .legacy_reduce import one_d
from .registry import defop


def _zero_cotangent(x):
    """A zero gradient for ``x`` (float0 for integer labels, as JAX requires)."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.zeros_like(x)
    return onp.zeros(x.shape, dtype=jax.dtypes.float0)


def _check_norm(op: str, normalization: str) -> None:
    if normalization not in ("null", "batch", "valid"):
        raise MXNetValueError(f"{op}: normalization must be 'null', 'batch' or 'valid', got {normalization!r}")


# ----------------------------------------------------------------------------- SoftmaxOutput

def _softmax_layout(dshape: tuple, lshape: tuple, multi_output: bool, preserve_shape: bool):
    """(softmax axis, label shape the gradient broadcasts against) for SoftmaxOutput's modes."""
    if lshape == dshape:
        return (len(dshape) - 1 if preserve_shape or not multi_output else 1), None
    if multi_output:
        spatial = dshape[2:]
        accepted = ((dshape[0], int(onp.prod(spatial))), (dshape[0],) + spatial, (dshape[0], 1) + spatial)
        if lshape not in accepted:
            raise MXNetValueError(f"SoftmaxOutput: label shape {lshape} does not fit data {dshape} with "
                                  f"multi_output (expected one of {list(accepted)})")
        return 1, (dshape[0],) + spatial
    if preserve_shape:
        expected = dshape[:-1]
    else:
        expected = (dshape[0],)
    if int(onp.prod(lshape)) != int(onp.prod(expected)):
        raise MXNetValueError(f"SoftmaxOutput: label shape {lshape} does not fit data {dshape} "
                              f"(expected {expected})")
    return (len(dshape) - 1 if preserve_shape else 1), expected


@lru_cache(maxsize=None)
def _softmax_output_fn(dshape, lshape, grad_scale, ignore_label, multi_output, use_ignore,
                       preserve_shape, normalization, out_grad, smooth_alpha):
    axis, label_shape = _softmax_layout(dshape, lshape, multi_output, preserve_shape)
    # the 1.x default mode flattens everything after the batch axis into one softmax
    work = (dshape[0], int(onp.prod(dshape[1:]))) if not (multi_output or preserve_shape) else dshape

    def forward(data):
        return jax.nn.softmax(data.reshape(work), axis=axis).reshape(dshape)

    def grad_of(out, label, g):
        if label_shape is None:  # the label is a probability distribution of the data's shape
            grad = (out - label) * grad_scale
            return grad * g if out_grad else grad
        p = out.reshape(work)
        lab = label.reshape(label_shape)
        k = p.shape[axis]
        classes = jnp.arange(k).reshape((k,) + (1,) * (p.ndim - axis - 1))
        hit = jnp.expand_dims(lab.astype(jnp.int64), axis) == classes
        if smooth_alpha:
            target = jnp.where(hit, 1.0 - smooth_alpha, smooth_alpha / max(k - 1, 1))
        else:
            target = hit
        grad = p - target.astype(p.dtype)
        ignored = lab.astype(jnp.int64) == int(ignore_label)
        if use_ignore:
            grad = jnp.where(jnp.expand_dims(ignored, axis), 0, grad)
        if normalization == "valid":
            scale = grad_scale / jnp.maximum(lab.size - jnp.sum(ignored), 1)
        else:
            # 'batch': the batch size with multi_output, else every label (1.x flattens them)
            count = (lab.shape[0] if multi_output else lab.size) if normalization == "batch" else 1
            spatial = int(onp.prod(lab.shape[1:])) if multi_output else 1
            scale = grad_scale / spatial / count
        grad = (grad * scale).astype(p.dtype).reshape(dshape)
        return grad * g if out_grad else grad

    @jax.custom_vjp
    def f(data, label):
        return forward(data)

    def fwd(data, label):
        out = forward(data)
        return out, (out, label)

    def bwd(res, g):
        out, label = res
        return grad_of(out, label, g), _zero_cotangent(label)

    f.defvjp(fwd, bwd)
    return f


@defop("SoftmaxOutput", aliases=("Softmax",),
       param_shapes=lambda s, p: {1: (s[0][0], *s[0][2:]) if p.get("multi_output") else s[0][:-1]})
def softmax_output(data, label, *, grad_scale: float = 1.0, ignore_label: float = -1.0,
                   multi_output: bool = False, use_ignore: bool = False, preserve_shape: bool = False,
                   normalization: str = "null", out_grad: bool = False, smooth_alpha: float = 0.0):
    """Softmax forward; backward gives ``(softmax - one_hot(label)) * grad_scale`` (cross-entropy's gradient)."""
    _check_norm("SoftmaxOutput", normalization)
    if data.ndim < 2 and not preserve_shape:
        raise MXNetValueError(f"SoftmaxOutput: expected data of at least 2 dimensions, got {tuple(data.shape)}")
    fn = _softmax_output_fn(tuple(data.shape), tuple(label.shape), float(grad_scale), float(ignore_label),
                            bool(multi_output), bool(use_ignore), bool(preserve_shape), normalization,
                            bool(out_grad), float(smooth_alpha))
    return fn(data, label)


@defop("softmax_cross_entropy")
def softmax_cross_entropy(data, label):
    """Total cross-entropy of softmax(data) against integer class labels, shape (1,)."""
    if data.ndim != 2 or label.shape != data.shape[:1]:
        raise MXNetValueError(f"softmax_cross_entropy: expected data (n, k) and label (n,), got "
                              f"{tuple(data.shape)} and {tuple(label.shape)}")
    logp = jax.nn.log_softmax(data, axis=1)
    idx = jnp.clip(jax.lax.stop_gradient(label).astype(jnp.int64), 0, data.shape[1] - 1)
    picked = jnp.take_along_axis(logp, idx[:, None], axis=1)
    return one_d(-jnp.sum(picked)).astype(data.dtype)


# ----------------------------------------------------------------------------- regression outputs

_REGRESSION = {
    # name: (forward transform, gradient of (output, label))
    "LinearRegressionOutput": (lambda x: x, lambda out, lab: out - lab),
    "LogisticRegressionOutput": (jax.nn.sigmoid, lambda out, lab: out - lab),
    "MAERegressionOutput": (lambda x: x, lambda out, lab: jnp.sign(out - lab)),
}


@lru_cache(maxsize=None)
def _regression_fn(name: str, dshape: tuple, lshape: tuple, grad_scale: float):
    transform, backward = _REGRESSION[name]
    # MXNet divides by the number of outputs per example: label.size // label.shape[0]
    num_output = (int(onp.prod(lshape)) // lshape[0]) if lshape and lshape[0] else 1

    @jax.custom_vjp
    def f(data, label):
        return transform(data)

    def fwd(data, label):
        out = transform(data)
        return out, (out, label)

    def bwd(res, g):
        out, label = res
        grad = backward(out, label.reshape(dshape).astype(out.dtype)) * (grad_scale / num_output)
        return grad.astype(out.dtype), _zero_cotangent(label)

    f.defvjp(fwd, bwd)
    return f


def _regression(name: str, data, label, grad_scale: float):
    if int(onp.prod(label.shape)) != int(onp.prod(data.shape)) or (label.ndim and data.ndim
                                                                  and label.shape[0] != data.shape[0]):
        raise MXNetValueError(f"{name}: label shape {tuple(label.shape)} does not match data {tuple(data.shape)}")
    return _regression_fn(name, tuple(data.shape), tuple(label.shape), float(grad_scale))(data, label)


_LABEL_LIKE_DATA = {"param_shapes": lambda s, p: {1: s[0]}}  # the regression outputs' labels


@defop("LinearRegressionOutput", **_LABEL_LIKE_DATA)
def linear_regression_output(data, label, *, grad_scale: float = 1.0):
    """Identity forward; backward gives (data - label) * grad_scale / outputs-per-example (squared loss)."""
    return _regression("LinearRegressionOutput", data, label, grad_scale)


@defop("LogisticRegressionOutput", **_LABEL_LIKE_DATA)
def logistic_regression_output(data, label, *, grad_scale: float = 1.0):
    """Sigmoid forward; backward gives (sigmoid(data) - label) * grad_scale / outputs-per-example."""
    return _regression("LogisticRegressionOutput", data, label, grad_scale)


@defop("MAERegressionOutput", **_LABEL_LIKE_DATA)
def mae_regression_output(data, label, *, grad_scale: float = 1.0):
    """Identity forward; backward gives sign(data - label) * grad_scale / outputs-per-example (L1 loss)."""
    return _regression("MAERegressionOutput", data, label, grad_scale)


# ----------------------------------------------------------------------------- MakeLoss

@lru_cache(maxsize=None)
def _make_loss_fn(grad_scale: float, valid_thresh: float, normalization: str):
    @jax.custom_vjp
    def f(data):
        return data

    def fwd(data):
        return data, data

    def bwd(data, g):
        if normalization == "batch":
            scale = grad_scale / max(data.shape[0] if data.ndim else 1, 1)
        elif normalization == "valid":
            scale = grad_scale / jnp.maximum(jnp.sum(data > valid_thresh), 1)
        else:
            scale = grad_scale
        return (jnp.ones_like(data) * scale).astype(data.dtype),

    f.defvjp(fwd, bwd)
    return f


@defop("MakeLoss", aliases=("make_loss",))
def make_loss(data, *, grad_scale: float = 1.0, valid_thresh: float = 0.0, normalization: str = "null"):
    """Mark ``data`` as a loss: identity forward; backward gives grad_scale (normalized), ignoring head gradients."""
    _check_norm("MakeLoss", normalization)
    return _make_loss_fn(float(grad_scale), float(valid_thresh), normalization)(data)
