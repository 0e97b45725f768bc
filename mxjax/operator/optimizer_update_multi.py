"""MXNet's multi-tensor update operators and their helpers.

``multi_sgd_update`` and friends update ``num_weights`` weights in one call; their inputs are the
per-weight groups flattened (``w0, g0, w1, g1, ...``), and the ``preloaded_*`` forms take the
learning rates and weight decays as two trailing arrays instead of parameters.  Outputs are the
new weights, then the new mutated states (see ``optimizer_update.UpdateSpec``).  Also here: the
checks and reductions MXNet's multi-tensor optimizers use (``all_finite``, ``multi_all_finite``,
``multi_sum_sq``, ``multi_lars``) and ``reset_arrays``.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp

from . import optimizer_rules as R
from .nn_util import fail
from .optimizer_update import UpdateSpec, _momentum, _sgd, check_update_inputs, required, update_op
from .registry import defop

__all__ = ["split_groups"]


def split_groups(op: str, data: tuple, spec: UpdateSpec, count: int, what: str = "num_weights") -> list[tuple]:
    """The per-weight input groups of a multi-tensor op, after checking how many arrays came."""
    expected = spec.stride * count + spec.tail
    if count < 1 or len(data) != expected:
        fail(op, f"expected {expected} input arrays ({spec.stride} per weight for {what}={count}"
                 f"{f', then {spec.tail} more' if spec.tail else ''}), got {len(data)}")
    return [tuple(data[k * spec.stride:(k + 1) * spec.stride]) for k in range(count)]


def _per_weight(op: str, values: Any, name: str, count: int) -> tuple:
    values = required(op, name, values, "tuple of <float>")
    values = tuple(values) if isinstance(values, (tuple, list)) else (values,)
    if len(values) != count:
        fail(op, f"{name} has {len(values)} values but num_weights={count} are expected")
    return values


def _collect(results: list[tuple]) -> tuple:
    """(weights..., states...) from per-weight (weight, *states) results."""
    return tuple(r[0] for r in results) + tuple(s for r in results for s in r[1:])


_NAMES = {2: ("weight", "grad"), 3: ("weight", "grad", "mom"), 4: ("weight", "grad", "mom", "weight32")}


def _multi_sgd(op: str, spec: UpdateSpec, momentum_rule: bool, mp: bool) -> Callable:
    """The compute of one of the eight multi/preloaded SGD ops."""
    names = ("weight", "grad", "weight32") if mp and not momentum_rule else _NAMES[spec.stride]
    master = ("mom", "weight32") if mp else ()

    def step(group: tuple, lr: Any, wd: Any, momentum: float, rescale_grad: float, clip_gradient: float) -> tuple:
        check_update_inputs(op, names, group, master)
        weight, grad = group[0], group[1]
        base = group[-1] if mp else weight
        grad = grad.astype(jnp.float32) if mp else grad
        if momentum_rule:
            new, mom = _momentum(op, R.momentum, base, grad, group[2], lr, momentum, wd, rescale_grad,
                                 clip_gradient)
            states = (mom, new) if mp else (mom,)
        else:
            new = _sgd(op, base, grad, lr, wd, rescale_grad, clip_gradient)
            states = (new,) if mp else ()
        return (new.astype(weight.dtype), *states)

    def compute(data: tuple, lrs: Any, wds: Any, momentum: float, rescale_grad: float, clip_gradient: float,
                num_weights: int) -> tuple:
        groups = split_groups(op, data, spec, num_weights)
        if spec.tail:  # preloaded: lrs and wds are the two trailing arrays
            lrs_array, wds_array = data[-2], data[-1]
            for name, x in (("lrs", lrs_array), ("wds", wds_array)):
                if x.size != num_weights:
                    fail(op, f"{name} has shape {tuple(x.shape)} but ({num_weights},) is expected")
            lrs = [lrs_array.reshape(-1)[k] for k in range(num_weights)]
            wds = [wds_array.reshape(-1)[k] for k in range(num_weights)]
        else:
            lrs = _per_weight(op, lrs, "lrs", num_weights)
            wds = _per_weight(op, wds, "wds", num_weights)
        return _collect([step(g, lr, wd, momentum, rescale_grad, clip_gradient)
                         for g, lr, wd in zip(groups, lrs, wds, strict=True)])
    return compute


_SPEC = {
    "multi_sgd_update": UpdateSpec(2, (), 0, "num_weights"),
    "multi_sgd_mom_update": UpdateSpec(3, (2,), 0, "num_weights"),
    "multi_mp_sgd_update": UpdateSpec(3, (2,), 0, "num_weights"),
    "multi_mp_sgd_mom_update": UpdateSpec(4, (2, 3), 0, "num_weights"),
}
_SPEC.update({f"preloaded_{k}": UpdateSpec(v.stride, v.mutated, 2, "num_weights") for k, v in list(_SPEC.items())})
_RULES = {name: _multi_sgd(name, spec, "_mom_" in name, "_mp_" in name) for name, spec in _SPEC.items()}


@update_op("multi_sgd_update", _SPEC["multi_sgd_update"])
def multi_sgd_update(*data, lrs: tuple | None = None, wds: tuple | None = None, rescale_grad: float = 1.0,
                     clip_gradient: float = -1.0, num_weights: int = 1):
    """``sgd_update`` of ``num_weights`` weights; data is ``w0, g0, w1, g1, ...``."""
    return _RULES["multi_sgd_update"](data, lrs, wds, 0.0, rescale_grad, clip_gradient, num_weights)


@update_op("multi_sgd_mom_update", _SPEC["multi_sgd_mom_update"])
def multi_sgd_mom_update(*data, lrs: tuple | None = None, wds: tuple | None = None, momentum: float = 0.0,
                         rescale_grad: float = 1.0, clip_gradient: float = -1.0, num_weights: int = 1):
    """``sgd_mom_update`` of ``num_weights`` weights; data is ``w0, g0, mom0, w1, ...``."""
    return _RULES["multi_sgd_mom_update"](data, lrs, wds, momentum, rescale_grad, clip_gradient, num_weights)


@update_op("multi_mp_sgd_update", _SPEC["multi_mp_sgd_update"])
def multi_mp_sgd_update(*data, lrs: tuple | None = None, wds: tuple | None = None, rescale_grad: float = 1.0,
                        clip_gradient: float = -1.0, num_weights: int = 1):
    """``mp_sgd_update`` of ``num_weights`` weights; data is ``w0, g0, w32_0, w1, ...``."""
    return _RULES["multi_mp_sgd_update"](data, lrs, wds, 0.0, rescale_grad, clip_gradient, num_weights)


@update_op("multi_mp_sgd_mom_update", _SPEC["multi_mp_sgd_mom_update"])
def multi_mp_sgd_mom_update(*data, lrs: tuple | None = None, wds: tuple | None = None, momentum: float = 0.0,
                            rescale_grad: float = 1.0, clip_gradient: float = -1.0, num_weights: int = 1):
    """``mp_sgd_mom_update`` of ``num_weights`` weights; data is ``w0, g0, mom0, w32_0, w1, ...``."""
    return _RULES["multi_mp_sgd_mom_update"](data, lrs, wds, momentum, rescale_grad, clip_gradient, num_weights)


@update_op("preloaded_multi_sgd_update", _SPEC["preloaded_multi_sgd_update"])
def preloaded_multi_sgd_update(*data, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                               num_weights: int = 1):
    """``multi_sgd_update`` with the learning rates and weight decays as the last two arrays."""
    return _RULES["preloaded_multi_sgd_update"](data, None, None, 0.0, rescale_grad, clip_gradient, num_weights)


@update_op("preloaded_multi_sgd_mom_update", _SPEC["preloaded_multi_sgd_mom_update"])
def preloaded_multi_sgd_mom_update(*data, momentum: float = 0.0, rescale_grad: float = 1.0,
                                   clip_gradient: float = -1.0, num_weights: int = 1):
    """``multi_sgd_mom_update`` with the learning rates and weight decays as the last two arrays."""
    return _RULES["preloaded_multi_sgd_mom_update"](data, None, None, momentum, rescale_grad, clip_gradient,
                                                    num_weights)


@update_op("preloaded_multi_mp_sgd_update", _SPEC["preloaded_multi_mp_sgd_update"])
def preloaded_multi_mp_sgd_update(*data, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                                  num_weights: int = 1):
    """``multi_mp_sgd_update`` with the learning rates and weight decays as the last two arrays."""
    return _RULES["preloaded_multi_mp_sgd_update"](data, None, None, 0.0, rescale_grad, clip_gradient,
                                                   num_weights)


@update_op("preloaded_multi_mp_sgd_mom_update", _SPEC["preloaded_multi_mp_sgd_mom_update"])
def preloaded_multi_mp_sgd_mom_update(*data, momentum: float = 0.0, rescale_grad: float = 1.0,
                                      clip_gradient: float = -1.0, num_weights: int = 1):
    """``multi_mp_sgd_mom_update`` with the learning rates and weight decays as the last two arrays."""
    return _RULES["preloaded_multi_mp_sgd_mom_update"](data, None, None, momentum, rescale_grad, clip_gradient,
                                                       num_weights)


# -- checks and reductions of the multi-tensor optimizers --------------------------------------
def _all_finite(arrays: tuple) -> Any:
    ok = jnp.array(True)
    for x in arrays:
        ok = ok & jnp.all(jnp.isfinite(x))
    return ok.astype(jnp.float32).reshape(1)


@defop("all_finite", differentiable=False)
def all_finite(data, *, init_output: bool = True):
    """``[1.]`` (float32) when every element of ``data`` is finite, else ``[0.]``; with
    ``init_output=False`` the ``mx.nd`` front end ANDs this into the given ``out``."""
    return _all_finite((data,))


@defop("multi_all_finite", differentiable=False)
def multi_all_finite(*data, num_arrays: int = 1, init_output: bool = True):
    """``all_finite`` over ``num_arrays`` arrays at once."""
    if len(data) != num_arrays:
        fail("multi_all_finite", f"expected num_arrays={num_arrays} input arrays, got {len(data)}")
    return _all_finite(data)


@defop("multi_sum_sq", differentiable=False)
def multi_sum_sq(*data, num_arrays: int | None = None, scale: float = 1.0):
    """The sum of squares of each array (times ``scale`` first), as one float32 array of
    ``num_arrays`` values."""
    num_arrays = required("multi_sum_sq", "num_arrays", num_arrays, "int")
    if len(data) != num_arrays:
        fail("multi_sum_sq", f"expected num_arrays={num_arrays} input arrays, got {len(data)}")
    return jnp.stack([jnp.sum(jnp.square(x.astype(jnp.float32) * scale)) for x in data])


@defop("multi_lars", differentiable=False)
def multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, *, eta: float | None = None, eps: float | None = None,
               rescale_grad: float = 1.0):
    """LARS learning rates ``lr * eta * |w| / (|g| + wd * |w| + eps)`` from the squared norms
    (``|g|`` scaled by ``rescale_grad``), ``lr`` itself where either norm is 0."""
    op = "multi_lars"
    eta, eps = required(op, "eta", eta), required(op, "eps", eps)
    for name, x in (("weights_sum_sq", weights_sum_sq), ("grads_sum_sq", grads_sum_sq), ("wds", wds)):
        if tuple(x.shape) != tuple(lrs.shape):
            fail(op, f"{name} has shape {tuple(x.shape)} but lrs' shape {tuple(lrs.shape)} is expected")
    w_norm = jnp.sqrt(weights_sum_sq)
    g_norm = jnp.sqrt(grads_sum_sq) * rescale_grad
    scaled = lrs * eta * w_norm / (g_norm + wds * w_norm + eps)
    return jnp.where((w_norm > 0) & (g_norm > 0), scaled, lrs).astype(lrs.dtype)


@update_op("reset_arrays", UpdateSpec(1, (), 0, "num_arrays"))
def reset_arrays(*data, num_arrays: int | None = None):
    """Zeros of each array's shape and dtype: the ``mx.nd`` front end writes them into the arrays
    (MXNet sets them to zero in place and returns no output)."""
    num_arrays = required("reset_arrays", "num_arrays", num_arrays, "int")
    if len(data) != num_arrays:
        fail("reset_arrays", f"expected num_arrays={num_arrays} input arrays, got {len(data)}")
    return tuple(jnp.zeros_like(x) for x in data)
