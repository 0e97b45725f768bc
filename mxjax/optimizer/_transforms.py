"""optax GradientTransformations for the MXNet update rules optax does not express exactly.

Every transformation here returns the *delta* to add to the weight (``w_new = w + u``),
like optax's built-ins followed by ``optax.scale(-lr)``.  Learning rates and weight
decays may be traced scalars (the fused update passes them as jit inputs, so a changing
learning rate does not recompile).  Each comment says why the optax built-in differs.  The
per-array math shared with the update operators (momentum, NAG, Signum, Adam, AdamW, FTRL, the
LAMB trust ratio) is ``mxjax.operator.optimizer_rules``; these wrap it for parameter trees.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax

from ..operator import optimizer_rules as R


def chain(*txs: optax.GradientTransformation | None) -> optax.GradientTransformation:
    """``optax.chain`` whose state keeps only the stateful links (None / the one state / a tuple).

    MXNet's states are ``None`` (plain SGD), one array (SGD momentum) or a short tuple,
    and gluon's ``Trainer.save_states`` pickles them; optax.chain would pad them with
    ``EmptyState()`` entries for every stateless link (scale, clip, weight decay).
    """
    txs = tuple(t for t in txs if t is not None)

    def pack(states: list) -> Any:
        if not states:
            return None
        return states[0] if len(states) == 1 else tuple(states)

    def init_fn(params: Any) -> Any:
        return pack([s for s in (t.init(params) for t in txs) if jax.tree.leaves(s)])

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        # which links keep a state: what their init gives.  Traced (the fused update), the init
        # itself: a stateful link's fresh state is never read, so never computed, and a nested
        # jax.eval_shape per link and parameter cost more to trace than the rest of the update;
        # run eagerly (a standalone transformation), its abstract value, which allocates nothing
        ref = updates if params is None else params
        traced = any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(ref))
        fresh = [t.init(ref) if traced else jax.eval_shape(t.init, ref) for t in txs]
        flags = [bool(jax.tree.leaves(s)) for s in fresh]
        n = sum(flags)
        given = [] if n == 0 else [state] if n == 1 else list(state)
        new_states, it = [], iter(given)
        for t, has_state, s in zip(txs, flags, fresh):
            if has_state:
                s = next(it)
            updates, s = t.update(updates, s, params)
            if has_state:
                new_states.append(s)
        return updates, pack(new_states)

    return optax.GradientTransformation(init_fn, update_fn)


def preprocess(rescale_grad: Any, clip_gradient: float | None) -> optax.GradientTransformation:
    """MXNet's gradient preprocessing: ``clip(rescale_grad * grad, -c, c)``.

    MXNet's kernels clip only for ``clip_gradient > 0`` (Python passes it when truthy).
    """
    if clip_gradient is not None and clip_gradient > 0:
        return chain(optax.scale(rescale_grad), optax.clip(clip_gradient))
    return optax.scale(rescale_grad)


def decayed(rescale_grad: Any, clip_gradient: float | None, weight_decay: Any) -> optax.GradientTransformation:
    """``clip(rescale_grad * grad, c) + wd * weight``: MXNet's preprocessed gradient."""
    return chain(preprocess(rescale_grad, clip_gradient), optax.add_decayed_weights(weight_decay))


def _zeros(params: Any) -> Any:
    return jax.tree.map(jnp.zeros_like, params)


def heavy_ball(learning_rate: Any, momentum: float) -> optax.GradientTransformation:
    """MXNet's momentum: ``mom = momentum * mom - lr * g``; the delta is ``mom``.

    optax.trace accumulates ``g`` and scales by ``-lr`` afterwards: the same weights only
    while ``lr`` is constant; MXNet's buffer already holds lr-scaled steps, so a learning
    rate schedule changes new steps only (and the state equals MXNet's ``mom``).
    """
    def update_fn(updates: Any, mom: Any, params: Any = None) -> tuple[Any, Any]:
        mom = jax.tree.map(lambda g, m: R.momentum(g, m, learning_rate, momentum), updates, mom)
        return mom, mom

    return optax.GradientTransformation(_zeros, update_fn)


def nesterov(learning_rate: Any, momentum: float) -> optax.GradientTransformation:
    """MXNet's NAG: ``mom = momentum * mom - lr * g``; delta ``momentum * mom - lr * g``.

    optax.sgd(nesterov=True) matches only for a constant learning rate (see heavy_ball).
    """
    def update_fn(updates: Any, mom: Any, params: Any = None) -> tuple[Any, Any]:
        leaves, treedef = jax.tree.flatten(updates)
        steps = [R.nesterov(g, m, learning_rate, momentum) for g, m in zip(leaves, treedef.flatten_up_to(mom))]
        return treedef.unflatten([d for d, _ in steps]), treedef.unflatten([m for _, m in steps])

    return optax.GradientTransformation(_zeros, update_fn)


def negated_ema(momentum: float) -> optax.GradientTransformation:
    """Signum's buffer ``mom = momentum * mom - (1 - momentum) * g``; the update is ``mom``."""
    def update_fn(updates: Any, mom: Any, params: Any = None) -> tuple[Any, Any]:
        mom = jax.tree.map(lambda g, m: R.negated_ema(g, m, momentum), updates, mom)
        return mom, mom

    return optax.GradientTransformation(_zeros, update_fn)


class AdamState(NamedTuple):
    """MXNet's Adam/AdamW/LAMB state ``(mean, var)``; the step ``t`` comes from the optimizer."""
    mean: Any
    var: Any


def _adam_init(params: Any) -> AdamState:
    return AdamState(_zeros(params), _zeros(params))


def _moments(updates: Any, state: AdamState, beta1: float, beta2: float) -> AdamState:
    mean = optax.tree.update_moment(updates, state.mean, beta1, 1)
    var = optax.tree.update_moment_per_elem_norm(updates, state.var, beta2, 2)
    return AdamState(mean, var)


def _per_leaf(rule: Any, updates: Any, state: tuple, params: Any = None) -> tuple[Any, Any]:
    """Apply a per-array rule ``rule(g, *state_leaves[, w]) -> (delta, *new_state)`` over the tree:
    returns ``(delta tree, state of the same type with the new trees)``."""
    leaves, treedef = jax.tree.flatten(updates)
    if not leaves:
        return updates, state
    columns = [treedef.flatten_up_to(s) for s in state]
    if params is not None:
        columns.append(treedef.flatten_up_to(params))
    results = [rule(g, *rest) for g, *rest in zip(leaves, *columns)]
    delta = treedef.unflatten([r[0] for r in results])
    new = [treedef.unflatten([r[k] for r in results]) for k in range(1, len(results[0]))]
    return delta, type(state)(*new)


def _bias_corrected_lr(learning_rate: Any, beta1: float, beta2: float, t: Any) -> Any:
    t = jnp.asarray(t).astype(jnp.result_type(learning_rate))
    return learning_rate * jnp.sqrt(1.0 - beta2 ** t) / (1.0 - beta1 ** t)


def mx_adam(learning_rate: Any, beta1: float, beta2: float, epsilon: float, t: Any) -> optax.GradientTransformation:
    """MXNet's Adam at step ``t``: ``w -= lr * sqrt(1-beta2^t)/(1-beta1^t) * m / (sqrt(v) + eps)``.

    optax.adam adds ``eps`` to ``sqrt(v_hat)`` (the bias-corrected variance); MXNet puts the
    bias correction into the learning rate, so its ``eps`` meets the uncorrected ``sqrt(v)``:
    equal to optax with ``eps / sqrt(1-beta2^t)``, a step-dependent epsilon optax lacks.
    """
    def update_fn(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        lr = _bias_corrected_lr(learning_rate, beta1, beta2, t)
        return _per_leaf(lambda g, m, v: R.adam(g, m, v, lr, beta1, beta2, epsilon), updates, state)

    return optax.GradientTransformation(_adam_init, update_fn)


def mx_adamw(learning_rate: Any, weight_decay: Any, beta1: float, beta2: float, epsilon: float,
             correct_bias: bool, t: Any) -> optax.GradientTransformation:
    """MXNet 2's AdamW (``adamw_update`` with ``lr=1, eta=lr_t``):
    ``w -= eta * (m / (sqrt(v) + eps) + wd * w)``, ``eta = lr * sqrt(1-beta2^t)/(1-beta1^t)``.

    optax.adamw scales the decay by the plain learning rate and adds ``eps`` to
    ``sqrt(v_hat)``; MXNet's decay is scaled by the bias-corrected ``eta`` too.
    """
    def update_fn(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        eta = _bias_corrected_lr(learning_rate, beta1, beta2, t) if correct_bias else learning_rate
        return _per_leaf(lambda g, m, v, w: R.adamw(g, w, m, v, 1.0, eta, weight_decay, beta1, beta2, epsilon),
                         updates, state, params)

    return optax.GradientTransformation(_adam_init, update_fn)


def scale_by_moments(beta1: float, beta2: float, epsilon: float, t: Any | None) -> optax.GradientTransformation:
    """``m_hat / (sqrt(v_hat) + eps)``: optax.scale_by_adam's rule (its update runs on a state
    rebuilt with count ``t - 1``) but with MXNet's ``(mean, var)`` state and the optimizer's ``t``;
    ``t=None``: no bias correction (LAMB ``bias_correction=False``), which optax cannot skip.
    The state is float32 whatever the weight's dtype, as MXNet's LAMB keeps it."""
    adam = optax.scale_by_adam(beta1, beta2, epsilon)

    def init_fn(params: Any) -> AdamState:
        zeros = jax.tree.map(lambda p: jnp.zeros(p.shape, jnp.float32), params)
        return AdamState(zeros, zeros)

    def update_fn(updates: Any, state: AdamState, params: Any = None) -> tuple[Any, AdamState]:
        if t is None:
            new = _moments(updates, state, beta1, beta2)
            return jax.tree.map(lambda m, v: m / (jnp.sqrt(v) + epsilon), new.mean, new.var), new
        count = (jnp.asarray(t) - 1).astype(jnp.int32)
        out, s = adam.update(updates, optax.ScaleByAdamState(count, state.mean, state.var), params)
        return out, AdamState(s.mu, s.nu)

    return optax.GradientTransformation(init_fn, update_fn)


def bounded_trust_ratio(lower_bound: float | None, upper_bound: float | None) -> optax.GradientTransformation:
    """LAMB's trust ratio with MXNet's bounds on the weight norm: ``r1 = clip(|w|, lower, upper)``,
    ``u *= r1 / |u|`` (1 where that ratio is 0, inf or NaN); optax's has no bounds."""
    def update_fn(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        def scale(u: Any, w: Any) -> Any:
            r1 = R.bounded_norm(jnp.linalg.norm(w.ravel()), lower_bound, upper_bound)
            return u * R.trust_ratio(r1, jnp.linalg.norm(u.ravel())).astype(u.dtype)
        return jax.tree.map(scale, updates, params), state

    return optax.GradientTransformation(optax.init_empty_state, update_fn)


def lars_scale(eta: float, epsilon: float, weight_decay: Any, rescale_grad: Any,
               clip_gradient: float | None, apply: bool) -> optax.GradientTransformation:
    """MXNet's LARS gradient: ``lars * (clip(rescale * g) + wd * w)`` with
    ``lars = eta * |w| / (|rescale * g| + wd * |w| + eps)`` from the *unclipped* gradient
    (1 where ``|w|`` or ``|g|`` is 0, and for names ending in gamma/beta/bias: ``apply``).

    optax.lars takes the ratio ``|w| / |g + wd * w|`` after weight decay, not MXNet's sum of norms.
    """
    pre = chain(preprocess(rescale_grad, clip_gradient), optax.add_decayed_weights(weight_decay))

    def update_fn(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        def factor(g: Any, w: Any) -> Any:
            w_norm = jnp.linalg.norm(w.astype(jnp.float32).ravel())
            g_norm = jnp.linalg.norm((g.astype(jnp.float32) * rescale_grad).ravel())
            lars = eta * w_norm / (g_norm + weight_decay * w_norm + epsilon)
            ok = (w_norm > 0) & (g_norm > 0) & jnp.isfinite(w_norm / g_norm)
            return jnp.where(ok, lars, 1.0).astype(g.dtype)

        factors = jax.tree.map(factor, updates, params) if apply else None
        updates, _ = pre.update(updates, None, params)
        if factors is not None:
            updates = jax.tree.map(lambda f, g: f * g, factors, updates)
        return updates, state

    return optax.GradientTransformation(optax.init_empty_state, update_fn)


class AdaGradState(NamedTuple):
    history: Any


def mx_adagrad(learning_rate: Any, epsilon: float) -> optax.GradientTransformation:
    """MXNet's AdaGrad: ``history += g^2; w -= lr * g / (sqrt(history) + eps)``.

    optax.adagrad starts the history at 0.1 and puts ``eps`` inside the square root.
    """
    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        history = jax.tree.map(lambda h, g: h + jnp.square(g), state.history, updates)
        delta = jax.tree.map(lambda g, h: -learning_rate * g / (jnp.sqrt(h) + epsilon), updates, history)
        return delta, AdaGradState(history)

    return optax.GradientTransformation(lambda p: AdaGradState(_zeros(p)), update_fn)


class FtrlState(NamedTuple):
    z: Any
    n: Any


def mx_ftrl(learning_rate: Any, weight_decay: Any, lamda1: float, beta: float) -> optax.GradientTransformation:
    """MXNet's FTRL-proximal (optax has none); the new weight is a closed form of (z, n)::

        z += g - (sqrt(n + g^2) - sqrt(n)) * w / lr;  n += g^2
        w = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """
    def step(g: Any, z: Any, n: Any, w: Any) -> tuple:
        new, z, n = R.ftrl(g, w, z, n, learning_rate, lamda1, beta, weight_decay)
        return new - w, z, n

    def update_fn(updates: Any, state: FtrlState, params: Any) -> tuple[Any, FtrlState]:
        delta, (z, n) = _per_leaf(step, updates, state, params)
        return delta, FtrlState(z, n)

    return optax.GradientTransformation(lambda p: FtrlState(_zeros(p), _zeros(p)), update_fn)


def clip_weights(bound: float) -> optax.GradientTransformation:
    """RMSProp's ``clip_weights``: the updated weight is clipped to ``[-bound, bound]``."""
    def update_fn(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        return jax.tree.map(lambda u, w: jnp.clip(w + u, -bound, bound) - w, updates, params), state

    return optax.GradientTransformation(optax.init_empty_state, update_fn)
