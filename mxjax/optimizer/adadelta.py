"""AdaDelta (MXNet 2's ``mxnet.optimizer.adadelta``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["AdaDelta"]


@register
class AdaDelta(Optimizer):
    """AdaDelta (optax.adadelta's rule exactly)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        acc_grad = rho * acc_grad + (1 - rho) * grad**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= learning_rate * delta
    """

    _hyper = ("rho", "epsilon")

    def __init__(self, learning_rate: float | None = 1.0, rho: float = 0.9, epsilon: float = 1e-6,
                 use_fused_step: bool = False, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       optax.scale_by_adadelta(self.rho, self.epsilon), optax.scale(-learning_rate))
