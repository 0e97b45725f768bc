"""Adam's relatives MXNet 2 ships: Adamax, Nadam, AdaBelief, FTML and LANS (rules in ``_rules``)."""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp
import optax

from ..base import MXNetValueError
from . import _rules as R
from . import _transforms as T
from .adaptive import aggregation_size
from .optimizer import Optimizer, register

__all__ = ["Adamax", "Nadam", "AdaBelief", "FTML", "LANS"]


def _decayed(rescale_grad: Any, clip_gradient: float | None, weight_decay: Any) -> optax.GradientTransformation:
    return T.chain(T.preprocess(rescale_grad, clip_gradient), optax.add_decayed_weights(weight_decay))


class _Moments(Optimizer):
    """The shared constructor of the (beta1, beta2, epsilon) optimizers here."""

    _hyper = ("beta1", "beta2", "epsilon")
    _uses_step = True

    def __init__(self, learning_rate: float | None, beta1: float, beta2: float, epsilon: float,
                 use_fused_step: bool, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon


@register
class Adamax(_Moments):
    """AdaMax (Adam with the infinity norm)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        m = beta1 * m + (1 - beta1) * grad;  u = max(beta2 * u, |grad|)
        weight -= lr / (1 - beta1**t) * m / (u + epsilon)

    The state is ``(mean, var)`` (``var`` holds ``u``).
    """

    def __init__(self, learning_rate: float | None = 0.002, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, use_fused_step: bool = False, **kwargs: Any):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, **kwargs)

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.adamax(learning_rate, self.beta1, self.beta2, self.epsilon, step))


@register
class Nadam(_Moments):
    """Nesterov Adam with Dozat's momentum schedule ``mu_t = beta1 * (1 - 0.5 * 0.96**(t * schedule_decay))``::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        m_schedule *= mu_t   (one running product on the optimizer, over every index's steps, as MXNet)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        m_bar = mu_{t+1} * m / (1 - m_schedule * mu_{t+1}) + (1 - mu_t) * grad / (1 - m_schedule)
        weight -= lr * m_bar / (sqrt(v / (1 - beta2**t)) + epsilon)
    """

    _hyper = ("beta1", "beta2", "epsilon", "schedule_decay")

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, use_fused_step: bool = False,
                 **kwargs: Any):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, **kwargs)
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def _mu(self, t: Any) -> Any:
        return self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))

    def _step_inputs(self, indices: Any) -> onp.ndarray:
        rows = []
        for t in super()._step_inputs(indices):
            mu_t, mu_next = self._mu(t), self._mu(t + 1)
            self.m_schedule *= mu_t
            rows.append((mu_t, mu_next, self.m_schedule, self.m_schedule * mu_next, 1.0 - self.beta2 ** t))
        return onp.asarray(rows, onp.float64).reshape(len(rows), 5)

    def _standalone_step(self, count: Any) -> Any:
        t = count.astype(jnp.float32)
        # standalone there is one parameter: m_schedule is the product of its own mu_1..mu_t
        m_sched = jax.lax.fori_loop(1, count + 1, lambda k, acc: acc * self._mu(k.astype(jnp.float32)),
                                    jnp.ones((), jnp.float32))
        mu_t, mu_next = self._mu(t), self._mu(t + 1)
        return jnp.stack([mu_t, mu_next, m_sched, m_sched * mu_next, 1.0 - self.beta2 ** t])

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        coefs = jnp.ones(5, jnp.float32) * 0.5 if step is None else step  # (structure only)
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.nadam(learning_rate, self.beta1, self.beta2, self.epsilon, coefs))


@register
class AdaBelief(_Moments):
    """AdaBelief (Zhuang et al. 2020): Adam with the variance of the gradient around its mean::

        grad = clip(grad * rescale_grad + wd * weight, clip_gradient)   (decay before the clip)
        m = beta1 * m + (1 - beta1) * grad;  s = beta2 * s + (1 - beta2) * (grad - m)**2 + epsilon
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(s) + epsilon)

    (no bias factor without ``correct_bias``).  The state is ``(mean, var)``.
    """

    _hyper = ("beta1", "beta2", "epsilon", "correct_bias")

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, correct_bias: bool = True, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, **kwargs)
        self.correct_bias = correct_bias
        self.aggregate_num = aggregation_size()

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        clip = self.clip_gradient
        return T.chain(optax.scale(rescale_grad), optax.add_decayed_weights(weight_decay),
                       optax.clip(clip) if clip is not None and clip > 0 else None,
                       R.adabelief(learning_rate, self.beta1, self.beta2, self.epsilon, self.correct_bias, step))


@register
class FTML(_Moments):
    """FTML (Follow the Moving Leader); the state is ``(d, v, z)``::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        v = beta2 * v + (1 - beta2) * grad**2
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * grad - (d_t - beta1 * d_{t-1}) * weight
        weight = -z / d_t
    """

    def __init__(self, learning_rate: float | None = 0.0025, beta1: float = 0.6, beta2: float = 0.999,
                 epsilon: float = 1e-8, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, **kwargs)

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.ftml(learning_rate, self.beta1, self.beta2, self.epsilon, step))


@register
class LANS(_Moments):
    """LANS (LAMB with Nesterov momentum on the normalized gradient)::

        grad = clip(rescale_grad * grad / |rescale_grad * grad|, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        den = sqrt(v / (1 - beta2**t)) + epsilon;  r1 = clip(|weight|, lower_bound, upper_bound)
        u_m = m / (1 - beta1**t) / den + wd * weight;  u_g = grad / den + wd * weight
        weight -= lr * (beta1 * r1/|u_m| * u_m + (1 - beta1) * r1/|u_g| * u_g)

    (a ratio that is 0, inf or NaN counts as 1).  The state ``(mean, var)`` is float32.
    """

    _hyper = ("beta1", "beta2", "epsilon", "lower_bound", "upper_bound")

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 aggregate_num: int = 4, use_fused_step: bool = True, **kwargs: Any):
        if aggregate_num > 45:  # MXNet's limit of its multi-tensor kernel, kept for the same scripts
            raise MXNetValueError(f"LANS: aggregate_num must be at most 45, got {aggregate_num}")
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, aggregate_num=aggregate_num,
                         **kwargs)
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        clip = self.clip_gradient
        return T.chain(optax.scale(rescale_grad), R.normalize_by_norm(),
                       optax.clip(clip) if clip is not None and clip > 0 else None,
                       R.lans(learning_rate, weight_decay, self.beta1, self.beta2, self.epsilon,
                              self.lower_bound, self.upper_bound, step))
