"""MXNet's optimizer update rules for one array, in pure JAX: the one implementation of each rule.

The update operators (``sgd_mom_update``, ``adam_update``, ... in ``optimizer_update*.py``) and
the ``mx.optimizer`` classes (through their optax transformations) both call these.  Each rule
takes the *preprocessed* gradient (rescaled, clipped and, where MXNet does so, weight-decayed:
see each op) and returns the new states and the delta to add to the weight, or the new weight
where the rule is a closed form (FTML, FTRL).  Scalars (learning rate, step count) may be
traced.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp

__all__ = ["rescale_clip", "momentum", "nesterov", "negated_ema", "adam_moments", "adam", "adamw",
           "adabelief", "ftml", "ftrl", "rmsprop", "rmsprop_centered", "lamb_direction",
           "trust_ratio", "bounded_norm", "lans", "norm"]


def rescale_clip(grad: Any, rescale_grad: Any, clip_gradient: float | None) -> Any:
    """``clip(rescale_grad * grad, -c, c)``; the operators clip when ``c >= 0`` (their kernels'
    test), the optimizer classes pass ``None`` for "no clipping"."""
    grad = grad * rescale_grad
    if clip_gradient is not None and clip_gradient >= 0:
        grad = jnp.clip(grad, -clip_gradient, clip_gradient)
    return grad


def momentum(grad: Any, mom: Any, lr: Any, momentum: float) -> Any:
    """MXNet's heavy-ball buffer ``mom = momentum * mom - lr * grad`` (also the delta)."""
    return momentum * mom - lr * grad


def nesterov(grad: Any, mom: Any, lr: Any, momentum: float) -> tuple[Any, Any]:
    """NAG: ``mom = momentum * mom - lr * grad``; delta ``momentum * mom - lr * grad``."""
    mom = momentum * mom - lr * grad
    return momentum * mom - lr * grad, mom


def negated_ema(grad: Any, mom: Any, momentum: float) -> Any:
    """Signum's buffer ``mom = momentum * mom - (1 - momentum) * grad``."""
    return momentum * mom - (1.0 - momentum) * grad


def adam_moments(grad: Any, mean: Any, var: Any, beta1: float, beta2: float) -> tuple[Any, Any]:
    """``m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2`` (optax's update_moment order)."""
    mean = (1 - beta1) * grad + beta1 * mean
    var = (1 - beta2) * (grad * grad) + beta2 * var
    return mean, var


def adam(grad: Any, mean: Any, var: Any, lr: Any, beta1: float, beta2: float,
         epsilon: float) -> tuple[Any, Any, Any]:
    """``(delta, mean, var)`` with ``delta = -lr * m / (sqrt(v) + eps)`` (MXNet folds the bias
    correction into ``lr``)."""
    mean, var = adam_moments(grad, mean, var, beta1, beta2)
    return -lr * mean / (jnp.sqrt(var) + epsilon), mean, var


def adamw(grad: Any, weight: Any, mean: Any, var: Any, lr: Any, eta: Any, wd: Any, beta1: float,
          beta2: float, epsilon: float) -> tuple[Any, Any, Any]:
    """AdamW's decoupled decay: ``delta = -eta * (lr * m / (sqrt(v) + eps) + wd * w)``."""
    mean, var = adam_moments(grad, mean, var, beta1, beta2)
    return -eta * (lr * mean / (jnp.sqrt(var) + epsilon) + wd * weight), mean, var


def adabelief(grad: Any, mean: Any, var: Any, lr: Any, beta1: float, beta2: float,
              epsilon: float) -> tuple[Any, Any, Any]:
    """``s = b2*s + (1-b2)*(g-m)^2 + eps`` around the new mean; ``delta = -lr * m/(sqrt(s) + eps)``."""
    mean = (1 - beta1) * grad + beta1 * mean
    var = beta2 * var + (1.0 - beta2) * jnp.square(grad - mean) + epsilon
    return -lr * mean / (jnp.sqrt(var) + epsilon), mean, var


def ftml(grad: Any, weight: Any, d: Any, v: Any, z: Any, lr: Any, beta1: float, beta2: float,
         epsilon: float, t: Any) -> tuple[Any, Any, Any, Any]:
    """FTML: ``(new_weight, d, v, z)``::

        v = b2*v + (1-b2)*g^2;  d' = (1-b1^t)/lr * (sqrt(v/(1-b2^t)) + eps)
        z = b1*z + (1-b1)*g - (d' - b1*d)*w;  w = -z/d'
    """
    c1, c2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
    v = (1 - beta2) * (grad * grad) + beta2 * v
    d_new = c1 / lr * (jnp.sqrt(v / c2) + epsilon)
    z = beta1 * z + (1.0 - beta1) * grad - (d_new - beta1 * d) * weight
    return -z / d_new, d_new, v, z


def ftrl(grad: Any, weight: Any, z: Any, n: Any, lr: Any, lamda1: float, beta: float,
         wd: Any) -> tuple[Any, Any, Any]:
    """FTRL-proximal: ``(new_weight, z, n)``::

        z += g - (sqrt(n + g^2) - sqrt(n)) * w / lr;  n += g^2
        w = -sign(z) * max(|z| - lamda1, 0) / ((beta + sqrt(n)) / lr + wd)
    """
    n_new = n + jnp.square(grad)
    z = z + grad - (jnp.sqrt(n_new) - jnp.sqrt(n)) / lr * weight
    new = -jnp.sign(z) * jnp.maximum(jnp.abs(z) - lamda1, 0) / ((beta + jnp.sqrt(n_new)) / lr + wd)
    return new, z, n_new


def rmsprop(grad: Any, n: Any, lr: Any, rho: float, epsilon: float) -> tuple[Any, Any]:
    """Tieleman & Hinton: ``n = rho*n + (1-rho)*g^2;  delta = -lr * g / (sqrt(n) + eps)``."""
    n = (1 - rho) * (grad * grad) + rho * n
    return -lr * grad / (jnp.sqrt(n) + epsilon), n


def rmsprop_centered(grad: Any, n: Any, g: Any, delta: Any, lr: Any, rho: float, momentum: float,
                     epsilon: float) -> tuple[Any, Any, Any]:
    """Graves: ``n, g`` the moving mean square and mean; ``delta = momentum * delta - lr * grad /
    sqrt(n - g^2 + eps)`` (also the weight's delta).  Returns ``(n, g, delta)``."""
    n = (1 - rho) * (grad * grad) + rho * n
    g = (1 - rho) * grad + rho * g
    delta = momentum * delta - lr * grad / jnp.sqrt(n - g * g + epsilon)
    return n, g, delta


def lamb_direction(grad: Any, weight: Any, mean: Any, var: Any, beta1: float, beta2: float,
                   epsilon: float, t: Any, bias_correction: bool, wd: Any) -> tuple[Any, Any, Any]:
    """LAMB's phase 1: ``(g, mean, var)`` with ``g = m_hat / (sqrt(v_hat) + eps) + wd * w``
    (hats bias-corrected by step ``t`` when ``bias_correction``)."""
    mean, var = adam_moments(grad, mean, var, beta1, beta2)
    m_hat, v_hat = mean, var
    if bias_correction:
        m_hat, v_hat = mean / (1.0 - beta1 ** t), var / (1.0 - beta2 ** t)
    return m_hat / (jnp.sqrt(v_hat) + epsilon) + wd * weight, mean, var


def bounded_norm(r1: Any, lower_bound: float | None, upper_bound: float | None) -> Any:
    """``r1`` clipped to ``[lower_bound, upper_bound]``; a bound that is None or <= 0 is off."""
    if lower_bound is not None and lower_bound > 0:
        r1 = jnp.maximum(r1, lower_bound)
    if upper_bound is not None and upper_bound > 0:
        r1 = jnp.minimum(r1, upper_bound)
    return r1


def trust_ratio(r1: Any, r2: Any) -> Any:
    """``r1 / r2``, or 1 where that is 0, inf or NaN (MXNet's LAMB/LANS ratio)."""
    ratio = r1 / r2
    return jnp.where(jnp.isfinite(ratio) & (ratio != 0), ratio, 1.0)


def norm(x: Any) -> Any:
    """The L2 norm of all elements, accumulated in float32, in ``x``'s dtype."""
    return jnp.sqrt(jnp.sum(jnp.square(x.astype(jnp.float32)))).astype(x.dtype)


def lans(grad: Any, weight: Any, mean: Any, var: Any, lr: Any, wd: Any, beta1: float, beta2: float,
         epsilon: float, lower_bound: float | None, upper_bound: float | None,
         t: Any, weight_norm: Any = None) -> tuple[Any, Any, Any]:
    """LANS on the normalized (then clipped) gradient ``g``: ``(delta, mean, var)``::

        den = sqrt(v/(1-b2^t)) + eps;  r1 = clip(|w|, lower_bound, upper_bound)
        u_m = m/(1-b1^t)/den + wd*w;  u_g = g/den + wd*w
        delta = -lr * (b1 * ratio(r1, |u_m|) * u_m + (1-b1) * ratio(r1, |u_g|) * u_g)

    ``weight_norm``: ``|w|`` when it is not the norm of ``weight`` (MXNet's multi-precision LANS takes
    the float16 weight's norm while updating the float32 master).
    """
    c1, c2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
    mean, var = adam_moments(grad, mean, var, beta1, beta2)
    r1 = bounded_norm(norm(weight) if weight_norm is None else weight_norm, lower_bound, upper_bound)
    den = jnp.sqrt(var / c2) + epsilon
    u_m = mean / c1 / den + wd * weight
    u_g = grad / den + wd * weight
    delta = -lr * (beta1 * trust_ratio(r1, norm(u_m)) * u_m + (1.0 - beta1) * trust_ratio(r1, norm(u_g)) * u_g)
    return delta, mean, var
