"""Nesterov accelerated gradient (MXNet 2's ``mxnet.optimizer.nag``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["NAG"]


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        state = momentum * state - lr * grad
        weight = weight + momentum * state - lr * grad
    """

    _hyper = ("momentum",)

    def __init__(self, learning_rate: float | None = 0.1, momentum: float = 0.9, multi_precision: bool = False,
                 use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, multi_precision=multi_precision,
                         use_fused_step=use_fused_step, **kwargs)
        self.momentum = momentum

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        step = T.nesterov(learning_rate, self.momentum) if self.momentum != 0.0 else optax.scale(-learning_rate)
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay), step)
