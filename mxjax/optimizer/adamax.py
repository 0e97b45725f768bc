"""AdaMax, Adam with the infinity norm (MXNet 2's ``mxnet.optimizer.adamax``)."""
from __future__ import annotations

from typing import Any

from . import _rules as R
from . import _transforms as T
from ._moments import Moments
from .optimizer import register

__all__ = ["Adamax"]


@register
class Adamax(Moments):
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
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.adamax(learning_rate, self.beta1, self.beta2, self.epsilon, step))
