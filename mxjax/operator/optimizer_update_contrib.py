"""MXNet 2's contrib update operators: AdamW, AdaBelief (single and multi-tensor, plain and
multi-precision), and the multi-tensor LAMB and LANS.

AdamW and AdaBelief take ``rescale_grad`` as an input array: when it is not finite (a loss
scaler's overflow) the op leaves weight and states unchanged, as MXNet's kernels do.  Outputs
follow ``optimizer_update.UpdateSpec``: the new weights, then the mutated states.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp

from . import optimizer_rules as R
from .nn_util import fail
from .optimizer_update import UpdateSpec, check_update_inputs, required, update_op
from .optimizer_update_multi import _collect, _per_weight, split_groups

__all__: list[str] = []


def _scale_of(op: str, rescale_grad: Any) -> Any:
    if rescale_grad.size != 1:
        fail(op, f"rescale_grad has shape {tuple(rescale_grad.shape)} but one value is expected")
    return rescale_grad.reshape(()).astype(jnp.float32)


def _adam_like(op: str, rule: str, group: tuple, scale: Any, lr: Any, eta: Any, wd: Any, beta1: float,
               beta2: float, epsilon: float, clip_gradient: float, mp: bool, write_grad: bool = False) -> tuple:
    """One AdamW/AdaBelief step: (weight, mean, var[, weight32]), unchanged when ``scale`` is not finite.
    ``write_grad``: also return the preprocessed gradient first among the states (MXNet 2's single-weight
    float32 kernels overwrite ``grad`` with it)."""
    names = ("weight", "grad", "mean", "var", "weight32")[:len(group)]
    check_update_inputs(op, names, group, ("mean", "var", "weight32") if mp else ())
    weight, grad, mean, var = group[:4]
    base = group[4] if mp else weight
    grad = grad.astype(jnp.float32) if mp else grad
    lr, eta = required(op, "lr", lr), required(op, "eta", eta)
    if rule == "adamw":
        g = R.rescale_clip(grad, scale.astype(grad.dtype), clip_gradient)
        delta, new_mean, new_var = R.adamw(g, base, mean, var, lr, eta, wd, beta1, beta2, epsilon)
    else:  # AdaBelief: the decay goes into the gradient before the clip
        g = R.rescale_clip(grad * scale.astype(grad.dtype) + wd * base, 1.0, clip_gradient)
        delta, new_mean, new_var = R.adabelief(g, mean, var, lr, beta1, beta2, epsilon)
        delta = eta * delta
    ok = jnp.isfinite(scale)
    new = jnp.where(ok, base + delta, base)
    states = (jnp.where(ok, new_mean, mean), jnp.where(ok, new_var, var))
    if write_grad:
        states = (jnp.where(ok, g, grad), *states)
    return (new.astype(weight.dtype), *states, new) if mp else (new, *states)


def _single(op: str, rule: str, mp: bool) -> Callable:
    def compute(weight, grad, mean, var, *rest, lr, beta1, beta2, epsilon, wd, eta, clip_gradient):
        group, scale = (weight, grad, mean, var, *rest[:-1]), rest[-1]
        return _adam_like(op, rule, group, _scale_of(op, scale), lr, eta, wd, beta1, beta2, epsilon,
                          clip_gradient, mp, write_grad=not mp)
    return compute


def _multi(op: str, rule: str, spec: UpdateSpec, mp: bool) -> Callable:
    def compute(data, lrs, wds, etas, beta1, beta2, epsilon, clip_gradient, num_weights):
        groups = split_groups(op, data, spec, num_weights)
        scale = _scale_of(op, data[-1])
        lrs, wds = _per_weight(op, lrs, "lrs", num_weights), _per_weight(op, wds, "wds", num_weights)
        etas = _per_weight(op, etas, "etas", num_weights)
        return _collect([_adam_like(op, rule, g, scale, lr, eta, wd, beta1, beta2, epsilon, clip_gradient, mp)
                         for g, lr, wd, eta in zip(groups, lrs, wds, etas, strict=True)])
    return compute


_ADAMW, _MP_ADAMW = _single("adamw_update", "adamw", False), _single("mp_adamw_update", "adamw", True)
_BELIEF, _MP_BELIEF = _single("adabelief_update", "adabelief", False), _single("mp_adabelief_update", "adabelief", True)
_M4, _M5 = UpdateSpec(4, (2, 3), 1, "num_weights"), UpdateSpec(5, (2, 3, 4), 1, "num_weights")
_MULTI = {name: _multi(name, rule, spec, mp) for name, rule, spec, mp in (
    ("multi_adamw_update", "adamw", _M4, False), ("multi_mp_adamw_update", "adamw", _M5, True),
    ("multi_adabelief_update", "adabelief", _M4, False), ("multi_mp_adabelief_update", "adabelief", _M5, True))}


@update_op("_adamw_update", UpdateSpec(5, (1, 2, 3)), aliases=("_contrib_adamw_update",))
def adamw_update(weight, grad, mean, var, rescale_grad, *, lr: float | None = None, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0.0, eta: float | None = None,
                 clip_gradient: float = -1.0):
    """AdamW: ``g = clip(rescale_grad * grad)``, moments, ``weight -= eta * (lr * mean / (sqrt(var) +
    epsilon) + wd * weight)``; returns (weight, grad, mean, var) -- MXNet overwrites ``grad`` with the
    clipped gradient -- all unchanged if rescale_grad is not finite."""
    return _ADAMW(weight, grad, mean, var, rescale_grad, lr=lr, beta1=beta1, beta2=beta2, epsilon=epsilon,
                  wd=wd, eta=eta, clip_gradient=clip_gradient)


@update_op("_mp_adamw_update", UpdateSpec(6, (2, 3, 4)), aliases=("_contrib_mp_adamw_update",))
def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, *, lr: float | None = None,
                    beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0.0,
                    eta: float | None = None, clip_gradient: float = -1.0):
    """``adamw_update`` on the float32 master ``weight32``; returns (weight, mean, var, weight32)."""
    return _MP_ADAMW(weight, grad, mean, var, weight32, rescale_grad, lr=lr, beta1=beta1, beta2=beta2,
                     epsilon=epsilon, wd=wd, eta=eta, clip_gradient=clip_gradient)


@update_op("_adabelief_update", UpdateSpec(5, (1, 2, 3)), aliases=("_contrib_adabelief_update",))
def adabelief_update(weight, grad, mean, var, rescale_grad, *, lr: float | None = None, beta1: float = 0.9,
                     beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0.0, eta: float | None = None,
                     clip_gradient: float = -1.0):
    """AdaBelief: ``g = clip(rescale_grad * grad + wd * weight)``, ``mean``, ``var = beta2 * var +
    (1 - beta2) * (g - mean)**2 + epsilon``, ``weight -= eta * lr * mean / (sqrt(var) + epsilon)``;
    returns (weight, g, mean, var): MXNet overwrites ``grad`` with ``g``."""
    return _BELIEF(weight, grad, mean, var, rescale_grad, lr=lr, beta1=beta1, beta2=beta2, epsilon=epsilon,
                   wd=wd, eta=eta, clip_gradient=clip_gradient)


@update_op("_mp_adabelief_update", UpdateSpec(6, (2, 3, 4)), aliases=("_contrib_mp_adabelief_update",))
def mp_adabelief_update(weight, grad, mean, var, weight32, rescale_grad, *, lr: float | None = None,
                        beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8, wd: float = 0.0,
                        eta: float | None = None, clip_gradient: float = -1.0):
    """``adabelief_update`` on the float32 master ``weight32``; returns (weight, mean, var, weight32)."""
    return _MP_BELIEF(weight, grad, mean, var, weight32, rescale_grad, lr=lr, beta1=beta1, beta2=beta2,
                      epsilon=epsilon, wd=wd, eta=eta, clip_gradient=clip_gradient)


def _multi_adam_op(name: str, spec: UpdateSpec, doc: str) -> None:
    def compute(*data, lrs: tuple | None = None, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                wds: tuple | None = None, etas: tuple | None = None, clip_gradient: float = -1.0,
                num_weights: int = 1):
        return _MULTI[name](data, lrs, wds, etas, beta1, beta2, epsilon, clip_gradient, num_weights)
    compute.__doc__ = doc
    update_op(f"_{name}", spec, aliases=(f"_contrib_{name}",))(compute)


_multi_adam_op("multi_adamw_update", _M4, "``adamw_update`` of ``num_weights`` weights: data is "
               "``w0, g0, mean0, var0, w1, ..., rescale_grad``.")
_multi_adam_op("multi_mp_adamw_update", _M5, "``mp_adamw_update`` of ``num_weights`` weights: data is "
               "``w0, g0, mean0, var0, w32_0, w1, ..., rescale_grad``.")
_multi_adam_op("multi_adabelief_update", _M4, "``adabelief_update`` of ``num_weights`` weights: data is "
               "``w0, g0, mean0, var0, w1, ..., rescale_grad``.")
_multi_adam_op("multi_mp_adabelief_update", _M5, "``mp_adabelief_update`` of ``num_weights`` weights: data "
               "is ``w0, g0, mean0, var0, w32_0, w1, ..., rescale_grad``.")


# -- multi-tensor LAMB and LANS ------------------------------------------------------------------
def _trust_step(op: str, rule: str, group: tuple, lr: Any, wd: Any, t: int, mp: bool, beta1: float,
                beta2: float, epsilon: float, rescale_grad: float, lower_bound: float, upper_bound: float,
                clip_gradient: float, bias_correction: bool) -> tuple:
    names = ("weight", "grad", "mean", "var", "weight32")[:len(group)]
    check_update_inputs(op, names, group, ("mean", "var", "weight32") if mp else ())
    weight, grad, mean, var = group[:4]
    base = group[4] if mp else weight
    grad = grad.astype(jnp.float32) if mp else grad
    if rule == "lamb":
        g = R.rescale_clip(grad, rescale_grad, clip_gradient)
        direction, mean, var = R.lamb_direction(g, base, mean, var, beta1, beta2, epsilon, t, bias_correction, wd)
        r1 = R.bounded_norm(R.norm(base), lower_bound, upper_bound)
        new = base - lr * R.trust_ratio(r1, R.norm(direction)).astype(base.dtype) * direction
    else:  # LANS: the gradient normalized by its norm, then clipped
        g = grad * rescale_grad
        g = R.rescale_clip(g / R.norm(g), 1.0, clip_gradient)
        delta, mean, var = R.lans(g, base, mean, var, lr, wd, beta1, beta2, epsilon, lower_bound, upper_bound, t,
                                  R.norm(weight.astype(jnp.float32)))
        new = base + delta
    return (new.astype(weight.dtype), mean, var, new) if mp else (new, mean, var)


def _trust_op(name: str, rule: str, mp: bool, doc: str) -> None:
    spec = UpdateSpec(5, (2, 3, 4), 0, "num_tensors") if mp else UpdateSpec(4, (2, 3), 0, "num_tensors")
    op = f"_{name}"

    def compute(*data, learning_rates: tuple | None = None, beta1: float = 0.9, beta2: float = 0.999,
                epsilon: float = 1e-6, wds: tuple | None = None, rescale_grad: float = 1.0,
                lower_bound: float = -1.0, upper_bound: float = -1.0, clip_gradient: float = -1.0,
                bias_correction: bool = True, step_count: tuple | None = None, num_tensors: int = 1):
        groups = split_groups(op, data, spec, num_tensors, "num_tensors")
        lrs = _per_weight(op, learning_rates, "learning_rates", num_tensors)
        wds = _per_weight(op, wds, "wds", num_tensors)
        steps = _per_weight(op, step_count, "step_count", num_tensors)
        return _collect([_trust_step(op, rule, g, lr, wd, t, mp, beta1, beta2, epsilon, rescale_grad, lower_bound,
                                     upper_bound, clip_gradient, bias_correction)
                         for g, lr, wd, t in zip(groups, lrs, wds, steps, strict=True)])
    if rule == "lans":  # MXNet's LANS kernels have no bias_correction parameter
        def lans_compute(*data, learning_rates: tuple | None = None, beta1: float = 0.9, beta2: float = 0.999,
                         epsilon: float = 1e-6, wds: tuple | None = None, rescale_grad: float = 1.0,
                         lower_bound: float = -1.0, upper_bound: float = -1.0, clip_gradient: float = -1.0,
                         step_count: tuple | None = None, num_tensors: int = 1):
            return compute(*data, learning_rates=learning_rates, beta1=beta1, beta2=beta2, epsilon=epsilon,
                           wds=wds, rescale_grad=rescale_grad, lower_bound=lower_bound, upper_bound=upper_bound,
                           clip_gradient=clip_gradient, step_count=step_count, num_tensors=num_tensors)
        lans_compute.__doc__ = doc
        update_op(op, spec, aliases=(f"_contrib_{name}",))(lans_compute)
        return
    compute.__doc__ = doc
    update_op(op, spec, aliases=(f"_contrib_{name}",))(compute)


_trust_op("multi_lamb_update", "lamb", False, "LAMB of ``num_tensors`` weights at their ``step_count``: data is "
          "``w0, g0, mean0, var0, w1, ...``; ``weight -= lr * ratio * g`` per weight.")
_trust_op("multi_mp_lamb_update", "lamb", True, "``multi_lamb_update`` on float32 masters: data is "
          "``w0, g0, mean0, var0, w32_0, w1, ...``.")
_trust_op("multi_lans_update", "lans", False, "LANS of ``num_tensors`` weights at their ``step_count``: data is "
          "``w0, g0, mean0, var0, w1, ...``.")
_trust_op("multi_mp_lans_update", "lans", True, "``multi_lans_update`` on float32 masters: data is "
          "``w0, g0, mean0, var0, w32_0, w1, ...``.")
