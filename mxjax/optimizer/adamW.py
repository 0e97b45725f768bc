"""AdamW with decoupled weight decay (MXNet 2's ``mxnet.optimizer.adamW``)."""
from __future__ import annotations

from typing import Any

from . import _transforms as T
from .optimizer import Optimizer, aggregation_size, register

__all__ = ["AdamW"]


@register
class AdamW(Optimizer):
    """AdamW with decoupled weight decay (MXNet 2's fused ``adamw_update``, registered as 'adamw')::

        grad = clip(grad * rescale_grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        eta = lr * sqrt(1 - beta2**t) / (1 - beta1**t)     (eta = lr when not correct_bias)
        weight -= eta * (m / (sqrt(v) + epsilon) + wd * weight)
    """

    _hyper = ("beta1", "beta2", "epsilon", "correct_bias")
    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, correct_bias: bool = True, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.aggregate_num = aggregation_size()
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.correct_bias = correct_bias

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        core = T.mx_adamw(learning_rate, weight_decay, self.beta1, self.beta2, self.epsilon, self.correct_bias,
                          step)
        return T.chain(T.preprocess(rescale_grad, self.clip_gradient), core)
