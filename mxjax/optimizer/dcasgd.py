"""Delay-compensated asynchronous SGD (MXNet 2's ``mxnet.optimizer.dcasgd``)."""
from __future__ import annotations

from typing import Any

from . import _rules as R
from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["DCASGD"]


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD (Zheng et al. 2016)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        mom = momentum * mom - lr * (grad + lamda * grad**2 * (weight - previous_weight))
        previous_weight = weight;  weight += mom

    The state is ``(mom, previous_weight)``, ``mom`` None when ``momentum`` is 0, and
    ``previous_weight`` starts as a copy of the weight.
    """

    _hyper = ("momentum", "lamda")

    def __init__(self, learning_rate: float | None = 0.1, momentum: float = 0.0, lamda: float = 0.04,
                 use_fused_step: bool = False, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.momentum = momentum
        self.weight_previous: dict = {}
        self.lamda = lamda

    def _pack_state(self, leaves: list) -> Any:
        return (None, leaves[0]) if self.momentum == 0.0 else tuple(leaves)

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.dcasgd(learning_rate, self.momentum, self.lamda))
