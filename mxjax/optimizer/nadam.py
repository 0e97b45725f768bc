"""Nesterov Adam with Dozat's momentum schedule (``mxnet.optimizer.nadam``)."""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from . import _rules as R
from . import _transforms as T
from ._moments import Moments
from .optimizer import register

__all__ = ["Nadam"]


@register
class Nadam(Moments):
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
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.nadam(learning_rate, self.beta1, self.beta2, self.epsilon, coefs))
