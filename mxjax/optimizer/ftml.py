"""FTML, Follow the Moving Leader (MXNet 2's ``mxnet.optimizer.ftml``)."""
from __future__ import annotations

from typing import Any

from . import _rules as R
from . import _transforms as T
from ._moments import Moments
from .optimizer import register

__all__ = ["FTML"]


@register
class FTML(Moments):
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
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.ftml(learning_rate, self.beta1, self.beta2, self.epsilon, step))
