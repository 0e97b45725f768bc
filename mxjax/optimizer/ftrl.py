"""FTRL-proximal (MXNet 2's ``mxnet.optimizer.ftrl``)."""
from __future__ import annotations

from typing import Any

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["Ftrl"]


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al.); the state is ``(z, n)``::

        grad = clip(grad * rescale_grad, clip_gradient)
        z += grad - (sqrt(n + grad**2) - sqrt(n)) * weight / lr;  n += grad**2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """

    _hyper = ("lamda1", "beta")

    def __init__(self, learning_rate: float | None = 0.1, lamda1: float = 0.01, beta: float = 1.0,
                 use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.lamda1, self.beta = lamda1, beta

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(T.preprocess(rescale_grad, self.clip_gradient),
                       T.mx_ftrl(learning_rate, weight_decay, self.lamda1, self.beta))
