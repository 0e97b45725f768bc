"""MXNet's single-weight optimizer-update operators (``sgd_update``, ``adam_update``, ...).

MXNet's ops write the new weight to ``out`` and update their state inputs in place
(``FMutateInputs``).  Here an op is pure: it returns the new weight followed by the new value of
every state it mutates, in input order (``UPDATES[name].mutated``); the ``mx.nd`` front ends
(``ndarray/_updates.py``) write those back into the caller's arrays.  The math is the shared
per-array rules of ``optimizer_rules``; ``mp_*`` ops update a float32 master copy ``weight32``
and give the weight its cast.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import jax.numpy as jnp

from . import optimizer_rules as R
from .nn_util import fail
from .registry import defop

__all__ = ["UPDATES", "UpdateSpec", "check_update_inputs", "required"]


@dataclass(frozen=True)
class UpdateSpec:
    """How an update op's inputs group: each weight brings ``stride`` consecutive inputs, of which
    those at ``mutated`` offsets are updated in place; ``tail`` inputs follow all groups
    (``preloaded_*``'s lrs and wds).  ``counted``: the parameter holding the number of groups."""

    stride: int
    mutated: tuple[int, ...] = ()
    tail: int = 0
    counted: str | None = None

    def groups(self, num_inputs: int) -> int:
        return (num_inputs - self.tail) // self.stride

    def mutated_slots(self, num_inputs: int) -> list[int]:
        return [g * self.stride + o for g in range(self.groups(num_inputs)) for o in self.mutated]


UPDATES: dict[str, UpdateSpec] = {}


def update_op(name: str, spec: UpdateSpec, **options: Any) -> Callable[[Callable], Any]:
    """``defop`` for an update op: non-differentiable, outputs = new weight(s) then new states."""
    per_group = 1 + len(spec.mutated)
    if spec.counted is None:
        num_outputs: Any = per_group
    else:
        counted = spec.counted
        num_outputs = lambda params: per_group * int(params.get(counted, 1))  # noqa: E731

    def wrap(compute: Callable) -> Any:
        op = defop(name, num_outputs=num_outputs, differentiable=False, **options)(compute)
        for spelled in (op.name, *op.aliases):
            UPDATES[spelled] = spec
        return op
    return wrap


def required(op: str, name: str, value: Any, kind: str = "float") -> Any:
    if value is None:
        fail(op, f"Required parameter {name} of {kind} is not presented")
    return value


def check_update_inputs(op: str, names: tuple[str, ...], arrays: tuple, master: tuple[str, ...] = ()) -> None:
    """Every array has the first one's shape; those named in ``master`` are float32 (MXNet's
    multi-precision states), the others the first one's dtype."""
    shape, dtype = tuple(arrays[0].shape), arrays[0].dtype
    for name, x in zip(names[1:], arrays[1:], strict=True):
        if tuple(x.shape) != shape:
            fail(op, f"{name} has shape {tuple(x.shape)} but weight's shape {shape} is expected")
        want = jnp.dtype(jnp.float32) if name in master else dtype
        if x.dtype != want:
            fail(op, f"{name} has dtype {x.dtype} but {want} is expected (weight is {dtype})")


# -- SGD family -----------------------------------------------------------------------------
def _sgd(op: str, weight, grad, lr, wd, rescale_grad, clip_gradient):
    g = R.rescale_clip(grad, rescale_grad, clip_gradient)
    return weight - required(op, "lr", lr) * (g + wd * weight)


@update_op("sgd_update", UpdateSpec(2))
def sgd_update(weight, grad, *, lr: float | None = None, wd: float = 0.0, rescale_grad: float = 1.0,
               clip_gradient: float = -1.0, lazy_update: bool = True):
    """SGD step ``weight - lr * (clip(rescale_grad * grad) + wd * weight)`` (``lazy_update``
    concerns row-sparse gradients only; gradients are dense here)."""
    check_update_inputs("sgd_update", ("weight", "grad"), (weight, grad))
    return _sgd("sgd_update", weight, grad, lr, wd, rescale_grad, clip_gradient)


@update_op("mp_sgd_update", UpdateSpec(3, (2,)))
def mp_sgd_update(weight, grad, weight32, *, lr: float | None = None, wd: float = 0.0,
                  rescale_grad: float = 1.0, clip_gradient: float = -1.0, lazy_update: bool = True):
    """``sgd_update`` on the float32 master ``weight32``; returns (weight, weight32)."""
    check_update_inputs("mp_sgd_update", ("weight", "grad", "weight32"), (weight, grad, weight32), ("weight32",))
    w32 = _sgd("mp_sgd_update", weight32, grad.astype(jnp.float32), lr, wd, rescale_grad, clip_gradient)
    return w32.astype(weight.dtype), w32


def _momentum(op: str, rule, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient):
    g = R.rescale_clip(grad, rescale_grad, clip_gradient) + wd * weight
    lr = required(op, "lr", lr)
    if rule is R.momentum:
        mom = R.momentum(g, mom, lr, momentum)
        return weight + mom, mom
    delta, mom = rule(g, mom, lr, momentum)
    return weight + delta, mom


@update_op("sgd_mom_update", UpdateSpec(3, (2,)))
def sgd_mom_update(weight, grad, mom, *, lr: float | None = None, momentum: float = 0.0, wd: float = 0.0,
                   rescale_grad: float = 1.0, clip_gradient: float = -1.0, lazy_update: bool = True):
    """Momentum SGD: ``mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight)``,
    ``weight += mom``; returns (weight, mom)."""
    check_update_inputs("sgd_mom_update", ("weight", "grad", "mom"), (weight, grad, mom))
    return _momentum("sgd_mom_update", R.momentum, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient)


@update_op("mp_sgd_mom_update", UpdateSpec(4, (2, 3)))
def mp_sgd_mom_update(weight, grad, mom, weight32, *, lr: float | None = None, momentum: float = 0.0,
                      wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                      lazy_update: bool = True):
    """``sgd_mom_update`` on the float32 master ``weight32`` (``mom`` float32); returns
    (weight, mom, weight32)."""
    op = "mp_sgd_mom_update"
    check_update_inputs(op, ("weight", "grad", "mom", "weight32"), (weight, grad, mom, weight32), ("mom", "weight32"))
    w32, mom = _momentum(op, R.momentum, weight32, grad.astype(jnp.float32), mom, lr, momentum, wd, rescale_grad,
                         clip_gradient)
    return w32.astype(weight.dtype), mom, w32


@update_op("nag_mom_update", UpdateSpec(3, (2,)))
def nag_mom_update(weight, grad, mom, *, lr: float | None = None, momentum: float = 0.0, wd: float = 0.0,
                   rescale_grad: float = 1.0, clip_gradient: float = -1.0):
    """Nesterov momentum: ``g = clip(rescale_grad * grad) + wd * weight``, ``mom = momentum * mom -
    lr * g``, ``weight += momentum * mom - lr * g``; returns (weight, mom)."""
    check_update_inputs("nag_mom_update", ("weight", "grad", "mom"), (weight, grad, mom))
    return _momentum("nag_mom_update", R.nesterov, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient)


@update_op("mp_nag_mom_update", UpdateSpec(4, (2, 3)))
def mp_nag_mom_update(weight, grad, mom, weight32, *, lr: float | None = None, momentum: float = 0.0,
                      wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0):
    """``nag_mom_update`` on the float32 master ``weight32``; returns (weight, mom, weight32)."""
    op = "mp_nag_mom_update"
    check_update_inputs(op, ("weight", "grad", "mom", "weight32"), (weight, grad, mom, weight32), ("mom", "weight32"))
    w32, mom = _momentum(op, R.nesterov, weight32, grad.astype(jnp.float32), mom, lr, momentum, wd, rescale_grad,
                         clip_gradient)
    return w32.astype(weight.dtype), mom, w32


@update_op("signsgd_update", UpdateSpec(2))
def signsgd_update(weight, grad, *, lr: float | None = None, wd: float = 0.0, rescale_grad: float = 1.0,
                   clip_gradient: float = -1.0):
    """signSGD: ``weight = (1 - lr * wd) * weight - lr * sign(grad)`` (rescaling and clipping do not
    change a sign)."""
    check_update_inputs("signsgd_update", ("weight", "grad"), (weight, grad))
    lr = required("signsgd_update", "lr", lr)
    return (1 - lr * wd) * weight - lr * jnp.sign(grad)


@update_op("signum_update", UpdateSpec(3, (2,)))
def signum_update(weight, grad, mom, *, lr: float | None = None, momentum: float = 0.0, wd: float = 0.0,
                  rescale_grad: float = 1.0, clip_gradient: float = -1.0, wd_lh: float = 0.0):
    """Signum: ``mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)``,
    ``weight = (1 - lr * wd_lh) * weight + lr * sign(mom)``; returns (weight, mom)."""
    check_update_inputs("signum_update", ("weight", "grad", "mom"), (weight, grad, mom))
    lr = required("signum_update", "lr", lr)
    mom = R.negated_ema(R.rescale_clip(grad, rescale_grad, clip_gradient) + wd * weight, mom, momentum)
    return (1 - lr * wd_lh) * weight + lr * jnp.sign(mom), mom


# -- adaptive rules -------------------------------------------------------------------------
def _decayed_clip(grad, weight, wd, rescale_grad, clip_gradient):
    """MXNet 2's Adam/RMSProp/FTML preprocessing: ``clip(rescale_grad * grad) + wd * weight``."""
    return R.rescale_clip(grad, rescale_grad, clip_gradient) + wd * weight


@update_op("adam_update", UpdateSpec(4, (2, 3)))
def adam_update(weight, grad, mean, var, *, lr: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
                epsilon: float = 1e-8, wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                lazy_update: bool = True):
    """Adam without bias correction (MXNet's optimizer folds it into ``lr``): ``g = clip(rescale_grad
    * grad) + wd * weight``, moments, ``weight -= lr * mean / (sqrt(var) + epsilon)``; returns
    (weight, mean, var)."""
    op = "adam_update"
    check_update_inputs(op, ("weight", "grad", "mean", "var"), (weight, grad, mean, var))
    g = _decayed_clip(grad, weight, wd, rescale_grad, clip_gradient)
    delta, mean, var = R.adam(g, mean, var, required(op, "lr", lr), beta1, beta2, epsilon)
    return weight + delta, mean, var


@update_op("ftml_update", UpdateSpec(5, (2, 3, 4)))
def ftml_update(weight, grad, d, v, z, *, lr: float | None = None, beta1: float = 0.6, beta2: float = 0.999,
                epsilon: float = 1e-8, t: int | None = None, wd: float = 0.0, rescale_grad: float = 1.0,
                clip_grad: float = -1.0):
    """FTML at update ``t`` on ``g = clip(rescale_grad * grad, clip_grad) + wd * weight``; returns
    (weight, d, v, z)."""
    op = "ftml_update"
    check_update_inputs(op, ("weight", "grad", "d", "v", "z"), (weight, grad, d, v, z))
    t = required(op, "t", t, "int")
    g = _decayed_clip(grad, weight, wd, rescale_grad, clip_grad)
    return R.ftml(g, weight, d, v, z, required(op, "lr", lr), beta1, beta2, epsilon, t)


@update_op("ftrl_update", UpdateSpec(4, (2, 3)))
def ftrl_update(weight, grad, z, n, *, lr: float | None = None, lamda1: float = 0.01, beta: float = 1.0,
                wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0):
    """FTRL-proximal on ``g = clip(rescale_grad * grad)``; returns (weight, z, n)."""
    op = "ftrl_update"
    check_update_inputs(op, ("weight", "grad", "z", "n"), (weight, grad, z, n))
    g = R.rescale_clip(grad, rescale_grad, clip_gradient)
    return R.ftrl(g, weight, z, n, required(op, "lr", lr), lamda1, beta, wd)


def _clip_weights(weight, clip_weights):
    return jnp.clip(weight, -clip_weights, clip_weights) if clip_weights >= 0 else weight


@update_op("rmsprop_update", UpdateSpec(3, (2,)))
def rmsprop_update(weight, grad, n, *, lr: float | None = None, rho: float = 0.95, epsilon: float = 1e-8,
                   wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                   clip_weights: float = -1.0):
    """RMSProp (Tieleman & Hinton) on ``g = clip(rescale_grad * grad) + wd * weight``, the new weight
    clipped to ``[-clip_weights, clip_weights]``; returns (weight, n)."""
    op = "rmsprop_update"
    check_update_inputs(op, ("weight", "grad", "n"), (weight, grad, n))
    g = _decayed_clip(grad, weight, wd, rescale_grad, clip_gradient)
    delta, n = R.rmsprop(g, n, required(op, "lr", lr), rho, epsilon)
    return _clip_weights(weight + delta, clip_weights), n


@update_op("rmspropalex_update", UpdateSpec(5, (2, 3, 4)))
def rmspropalex_update(weight, grad, n, g, delta, *, lr: float | None = None, rho: float = 0.95,
                       momentum: float = 0.9, epsilon: float = 1e-8, wd: float = 0.0, rescale_grad: float = 1.0,
                       clip_gradient: float = -1.0, clip_weights: float = -1.0):
    """Centered RMSProp (Graves) with momentum ``delta`` on ``clip(rescale_grad * grad + wd * weight)``
    (MXNet 1.9's kernel; 2.0.0b1's gives NaN); returns (weight, n, g, delta)."""
    op = "rmspropalex_update"
    check_update_inputs(op, ("weight", "grad", "n", "g", "delta"), (weight, grad, n, g, delta))
    grad = R.rescale_clip(grad * rescale_grad + wd * weight, 1.0, clip_gradient)
    n, g, delta = R.rmsprop_centered(grad, n, g, delta, required(op, "lr", lr), rho, momentum, epsilon)
    return _clip_weights(weight + delta, clip_weights), n, g, delta


# -- LAMB in two phases -----------------------------------------------------------------------
def _lamb1(op, weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd, rescale_grad,
           clip_gradient):
    t = required(op, "t", t, "int")
    wd = required(op, "wd", wd)
    g = R.rescale_clip(grad, rescale_grad, clip_gradient)
    return R.lamb_direction(g, weight, mean, var, beta1, beta2, epsilon, t, bias_correction, wd)


@update_op("lamb_update_phase1", UpdateSpec(4, (2, 3)))
def lamb_update_phase1(weight, grad, mean, var, *, beta1: float = 0.9, beta2: float = 0.999,
                       epsilon: float = 1e-6, t: int | None = None, bias_correction: bool = True,
                       wd: float | None = None, rescale_grad: float = 1.0, clip_gradient: float = -1.0):
    """LAMB's direction ``g = m_hat / (sqrt(v_hat) + epsilon) + wd * weight``; returns (g, mean, var)."""
    op = "lamb_update_phase1"
    check_update_inputs(op, ("weight", "grad", "mean", "var"), (weight, grad, mean, var))
    return _lamb1(op, weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd, rescale_grad,
                  clip_gradient)


@update_op("mp_lamb_update_phase1", UpdateSpec(5, (2, 3)))
def mp_lamb_update_phase1(weight, grad, mean, var, weight32, *, beta1: float = 0.9, beta2: float = 0.999,
                          epsilon: float = 1e-6, t: int | None = None, bias_correction: bool = True,
                          wd: float | None = None, rescale_grad: float = 1.0, clip_gradient: float = -1.0):
    """``lamb_update_phase1`` on the float32 master ``weight32``; g is float32."""
    op = "mp_lamb_update_phase1"
    check_update_inputs(op, ("weight", "grad", "mean", "var", "weight32"), (weight, grad, mean, var, weight32),
                        ("mean", "var", "weight32"))
    return _lamb1(op, weight32, grad.astype(jnp.float32), mean, var, beta1, beta2, epsilon, t, bias_correction,
                  wd, rescale_grad, clip_gradient)


def _lamb2(op, weight, g, r1, r2, lr, lower_bound, upper_bound):
    if tuple(g.shape) != tuple(weight.shape):
        fail(op, f"g has shape {tuple(g.shape)} but weight's shape {tuple(weight.shape)} is expected")
    for name, r in (("r1", r1), ("r2", r2)):
        if r.size != 1:
            fail(op, f"{name} has shape {tuple(r.shape)} but (1,) is expected (a norm)")
    r1 = R.bounded_norm(r1.reshape(()), lower_bound, upper_bound)
    ratio = R.trust_ratio(r1, r2.reshape(()))
    return weight - required(op, "lr", lr) * ratio.astype(weight.dtype) * g.astype(weight.dtype)


@update_op("lamb_update_phase2", UpdateSpec(4))
def lamb_update_phase2(weight, g, r1, r2, *, lr: float | None = None, lower_bound: float = -1.0,
                       upper_bound: float = -1.0):
    """``weight -= lr * ratio * g`` with ``ratio = clip(r1, lower_bound, upper_bound) / r2`` (1 where
    that is 0 or not finite; ``r1``, ``r2`` the norms of weight and g)."""
    return _lamb2("lamb_update_phase2", weight, g, r1, r2, lr, lower_bound, upper_bound)


@update_op("mp_lamb_update_phase2", UpdateSpec(5))
def mp_lamb_update_phase2(weight, g, r1, r2, weight32, *, lr: float | None = None, lower_bound: float = -1.0,
                          upper_bound: float = -1.0):
    """``lamb_update_phase2`` computed from the float32 master ``weight32``; as in MXNet 2, only the
    weight is written (``weight32`` keeps its value)."""
    op = "mp_lamb_update_phase2"
    if weight32.dtype != jnp.float32 or tuple(weight32.shape) != tuple(weight.shape):
        fail(op, f"weight32 is {weight32.dtype}{tuple(weight32.shape)} but float32{tuple(weight.shape)} is expected")
    return _lamb2(op, weight32, g, r1, r2, lr, lower_bound, upper_bound).astype(weight.dtype)
