"""Adam with MXNet's bias correction through the learning rate (``mxnet.optimizer.adam``)."""
from __future__ import annotations

from typing import Any

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["Adam"]


@register
class Adam(Optimizer):
    """Adam, with MXNet's bias correction through the learning rate (step ``t`` of the weight)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)

    The state is ``(mean, var)``; ``t`` is the optimizer's update count of the weight.
    """

    _hyper = ("beta1", "beta2", "epsilon")
    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = False, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       T.mx_adam(learning_rate, self.beta1, self.beta2, self.epsilon, step))
