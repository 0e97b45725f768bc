"""optax GradientTransformations for the update rules of Adamax, Nadam, AdaBelief, FTML, LANS,
DCASGD, SGLD and Test, written from MXNet 2's formulas.

Like ``_transforms``, each returns the *delta* to add to the weight; ``t`` and the other
per-step values are (traced) runtime inputs from the optimizer's ``_step_inputs``.  optax has
no FTML, LANS, DCASGD or SGLD, and its adamax/nadam/adabelief place epsilon and the bias
correction differently (each docstring says how), so these are MXNet's rules.  Where an update
operator implements the same rule (AdaBelief, FTML, LANS), the per-array math is the one in
``mxjax.operator.optimizer_rules``; these wrap it for parameter trees.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from ..operator import optimizer_rules as R
from ._transforms import AdamState, _adam_init, _per_leaf, _zeros

tm = jax.tree.map


def adamax(learning_rate: Any, beta1: float, beta2: float, epsilon: float, t: Any) -> optax.GradientTransformation:
    """``m = b1*m + (1-b1)*g;  u = max(b2*u, |g|);  w -= lr/(1-b1^t) * m/(u + eps)``.

    optax.scale_by_adamax folds ``eps`` into the max (``max(b2*u, |g| + eps)``) and keeps its own
    count; MXNet adds ``eps`` after the max, so the state ``(mean, var)`` differs from optax's.
    """
    def update_fn(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        mean = optax.tree.update_moment(updates, state.mean, beta1, 1)
        var = tm(lambda u, g: jnp.maximum(beta2 * u, jnp.abs(g)), state.var, updates)
        lr = learning_rate / (1.0 - beta1 ** jnp.asarray(t).astype(jnp.result_type(learning_rate)))
        return tm(lambda m, u: -lr * m / (u + epsilon), mean, var), AdamState(mean, var)

    return optax.GradientTransformation(_adam_init, update_fn)


def nadam(learning_rate: Any, beta1: float, beta2: float, epsilon: float, coefs: Any) -> optax.GradientTransformation:
    """Nadam with MXNet's momentum schedule; ``coefs`` = (momentum_t, momentum_t+1, m_schedule,
    m_schedule_next, 1 - beta2^t)::

        m_bar = mu_t1 * m / (1 - m_sched_next) + (1 - mu_t) * g / (1 - m_sched)
        w -= lr * m_bar / (sqrt(v / (1 - beta2^t)) + eps)

    optax.nadam has no schedule (constant beta1) and puts ``eps`` differently.
    """
    mu_t, mu_t1, m_sched, m_next, coef2 = (coefs[k].astype(jnp.result_type(learning_rate)) for k in range(5))

    def update_fn(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        mean = optax.tree.update_moment(updates, state.mean, beta1, 1)
        var = optax.tree.update_moment_per_elem_norm(updates, state.var, beta2, 2)
        delta = tm(lambda g, m, v: -learning_rate * (mu_t1 * m / (1.0 - m_next) + (1.0 - mu_t) * g / (1.0 - m_sched))
                   / (jnp.sqrt(v / coef2) + epsilon), updates, mean, var)
        return delta, AdamState(mean, var)

    return optax.GradientTransformation(_adam_init, update_fn)


def adabelief(learning_rate: Any, beta1: float, beta2: float, epsilon: float, correct_bias: bool,
              t: Any) -> optax.GradientTransformation:
    """``m = b1*m + (1-b1)*g;  s = b2*s + (1-b2)*(g-m)^2 + eps;  w -= eta * m/(sqrt(s) + eps)``
    with ``eta = lr * sqrt(1-b2^t)/(1-b1^t)`` (``lr`` without ``correct_bias``).

    optax.scale_by_belief bias-corrects ``m`` and ``s`` themselves (so ``eps`` meets the
    corrected ``sqrt(s_hat)``) and adds ``eps`` to ``s`` only through ``eps_root``.
    """
    def update_fn(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        eta = learning_rate
        if correct_bias:
            tt = jnp.asarray(t).astype(jnp.result_type(learning_rate))
            eta = learning_rate * jnp.sqrt(1.0 - beta2 ** tt) / (1.0 - beta1 ** tt)
        return _per_leaf(lambda g, m, s: R.adabelief(g, m, s, eta, beta1, beta2, epsilon), updates, state)

    return optax.GradientTransformation(_adam_init, update_fn)


class FTMLState(NamedTuple):
    """MXNet's FTML state ``(d, v, z)``."""
    d: Any
    v: Any
    z: Any


def ftml(learning_rate: Any, beta1: float, beta2: float, epsilon: float, t: Any) -> optax.GradientTransformation:
    """FTML (Zheng & Kwok 2017)::

        v = b2*v + (1-b2)*g^2;  d' = (1-b1^t)/lr * (sqrt(v/(1-b2^t)) + eps)
        z = b1*z + (1-b1)*g - (d' - b1*d)*w;  w = -z/d'
    """
    def step(g: Any, d: Any, v: Any, z: Any, w: Any) -> tuple:
        tt = jnp.asarray(t).astype(jnp.result_type(learning_rate))
        new, d, v, z = R.ftml(g, w, d, v, z, learning_rate, beta1, beta2, epsilon, tt)
        return new - w, d, v, z

    def update_fn(updates: Any, state: FTMLState, params: Any) -> tuple[Any, FTMLState]:
        return _per_leaf(step, updates, state, params)

    return optax.GradientTransformation(lambda p: FTMLState(_zeros(p), _zeros(p), _zeros(p)), update_fn)


def lans(learning_rate: Any, weight_decay: Any, beta1: float, beta2: float, epsilon: float,
         lower_bound: float | None, upper_bound: float | None, t: Any) -> optax.GradientTransformation:
    """LANS (Zheng et al. 2020) on the normalized gradient ``g = g/|g|`` (clipped after)::

        m, v as Adam;  den = sqrt(v/(1-b2^t)) + eps;  r1 = clip(|w|, lower_bound, upper_bound)
        u_m = m/(1-b1^t)/den + wd*w;  u_g = g/den + wd*w
        w -= lr * (b1 * ratio(r1, |u_m|) * u_m + (1-b1) * ratio(r1, |u_g|) * u_g)

    ``ratio`` is 1 where it is 0, inf or NaN; both halves use the weight before the update (as
    MXNet's fused ``multi_lans_update``).  The state ``(mean, var)`` is float32.
    """
    def init_fn(params: Any) -> AdamState:
        zeros = tm(lambda p: jnp.zeros(p.shape, jnp.float32), params)
        return AdamState(zeros, zeros)

    def update_fn(updates: Any, state: AdamState, params: Any) -> tuple[Any, AdamState]:
        tt = jnp.asarray(t).astype(jnp.float32)
        return _per_leaf(lambda g, m, v, w: R.lans(g, w, m, v, learning_rate, weight_decay, beta1, beta2, epsilon,
                                                   lower_bound, upper_bound, tt), updates, state, params)

    return optax.GradientTransformation(init_fn, update_fn)


def normalize_by_norm() -> optax.GradientTransformation:
    """``g / |g|`` (LANS's first step, before the clip)."""
    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        return tm(lambda g: g / R.norm(g), updates), state

    return optax.GradientTransformation(optax.init_empty_state, update_fn)


def dcasgd(learning_rate: Any, momentum: float, lamda: float) -> optax.GradientTransformation:
    """Delay-compensated SGD; the state is ``(mom or None, previous weight)``::

        d = g + lamda * g^2 * (w - w_prev);  mom = momentum*mom - lr*d  (-lr*d without momentum)
        w_prev = w;  w += mom
    """
    def init_fn(params: Any) -> tuple:
        return (_zeros(params) if momentum != 0.0 else None, tm(lambda p: jnp.array(p, copy=True), params))

    def update_fn(updates: Any, state: tuple, params: Any) -> tuple[Any, tuple]:
        mom, prev = state
        d = tm(lambda g, w, p: g + lamda * jnp.square(g) * (w - p), updates, params, prev)
        if mom is None:
            step = tm(lambda d: -learning_rate * d, d)
            return step, (None, params)
        mom = tm(lambda m, d: momentum * m - learning_rate * d, mom, d)
        return mom, (mom, params)

    return optax.GradientTransformation(init_fn, update_fn)


def langevin(learning_rate: Any, key: Any) -> optax.GradientTransformation:
    """SGLD: ``w += -lr/2 * g + N(0, lr)`` (optax.add_noise's variance decays by its own schedule)."""
    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        leaves, treedef = jax.tree.flatten(updates)
        keys = jax.random.split(key, len(leaves))
        out = [-learning_rate / 2 * g + jnp.sqrt(learning_rate) * jax.random.normal(k, g.shape, g.dtype)
               for g, k in zip(leaves, keys)]
        return jax.tree.unflatten(treedef, out), state

    return optax.GradientTransformation(optax.init_empty_state, update_fn)


def plain_step(learning_rate: Any, weight_decay: Any, rescale_grad: Any) -> optax.GradientTransformation:
    """The Test optimizer: ``w -= lr * (rescale_grad * g + wd * w)`` with an unused float32 state."""
    def init_fn(params: Any) -> Any:
        return tm(lambda p: jnp.zeros(p.shape, jnp.float32), params)

    def update_fn(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        return tm(lambda g, w: -learning_rate * (rescale_grad * g + weight_decay * w), updates, params), state

    return optax.GradientTransformation(init_fn, update_fn)


def group_adagrad(learning_rate: Any, epsilon: float) -> optax.GradientTransformation:
    """GroupAdaGrad: one history per row, ``h += mean(g^2, axis=1)``; ``w -= lr * g/(sqrt(h) + eps)``
    (optax.adagrad keeps one history per element and puts ``eps`` inside the root)."""
    def init_fn(params: Any) -> Any:
        return tm(lambda p: jnp.zeros((p.shape[0], 1), p.dtype), params)

    def update_fn(updates: Any, history: Any, params: Any = None) -> tuple[Any, Any]:
        history = tm(lambda h, g: h + jnp.mean(jnp.square(g), axis=1, keepdims=True), history, updates)
        return tm(lambda g, h: -learning_rate * g / (jnp.sqrt(h) + epsilon), updates, history), history

    return optax.GradientTransformation(init_fn, update_fn)
