"""AdaGrad (MXNet 2's ``mxnet.optimizer.adagrad``)."""
from __future__ import annotations

from typing import Any

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["AdaGrad"]


@register
class AdaGrad(Optimizer):
    """AdaGrad::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        history += grad**2
        weight -= lr * grad / (sqrt(history) + epsilon)
    """

    _hyper = ("epsilon",)

    def __init__(self, learning_rate: float | None = 0.01, epsilon: float = 1e-6, use_fused_step: bool = True,
                 eps: float | None = None, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        if eps is not None:
            raise DeprecationWarning("parameter 'eps' is deprecated. Please use 'epsilon' instead...")
        self.epsilon = epsilon

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       T.mx_adagrad(learning_rate, self.epsilon))
