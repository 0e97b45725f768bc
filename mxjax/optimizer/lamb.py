"""LAMB: layer-wise adaptive moments for large batches (``mxnet.optimizer.lamb``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["LAMB"]


@register
class LAMB(Optimizer):
    """LAMB (layer-wise adaptive moments for large batches)::

        grad = clip(grad * rescale_grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        g = m_hat / (sqrt(v_hat) + epsilon) + wd * weight   (hats: bias-corrected if bias_correction)
        r1 = clip(|weight|, lower_bound, upper_bound);  r2 = |g|
        weight -= lr * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * g

    With bias correction and no bounds this is optax.lamb's chain (scale_by_adam,
    add_decayed_weights, scale_by_trust_ratio).
    """

    _hyper = ("beta1", "beta2", "epsilon", "lower_bound", "upper_bound", "bias_correction")
    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 bias_correction: bool = True, aggregate_num: int = 4, use_fused_step: bool = True,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, aggregate_num=aggregate_num,
                         use_fused_step=use_fused_step, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        moments = T.scale_by_moments(self.beta1, self.beta2, self.epsilon, step if self.bias_correction else None)
        if self.lower_bound or self.upper_bound:
            trust = T.bounded_trust_ratio(self.lower_bound, self.upper_bound)
        else:
            trust = optax.scale_by_trust_ratio()
        return T.chain(T.preprocess(rescale_grad, self.clip_gradient), moments,
                       optax.add_decayed_weights(weight_decay), trust, optax.scale(-learning_rate))
