"""SGD with momentum and weight decay (MXNet 2's ``mxnet.optimizer.sgd``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["SGD"]


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay::

        rescaled_grad = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state - lr * rescaled_grad      (state = None when momentum == 0)
        weight = weight + state                            (weight - lr * rescaled_grad without)

    ``lazy_update`` (row-sparse gradients) is accepted; gradients are dense here, for which
    MXNet's lazy and standard updates coincide.
    """

    _hyper = ("momentum",)

    def __init__(self, learning_rate: float | None = 0.1, momentum: float = 0.0, lazy_update: bool = False,
                 multi_precision: bool = False, use_fused_step: bool = True, aggregate_num: int = 1,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, multi_precision=multi_precision,
                         use_fused_step=use_fused_step, aggregate_num=aggregate_num, **kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        # momentum lives inside MXNet's buffer with the learning rate (see heavy_ball);
        # without momentum this chain is optax.sgd(lr) after the preprocessing
        step = T.heavy_ball(learning_rate, self.momentum) if self.momentum != 0.0 else optax.scale(-learning_rate)
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay), step)
