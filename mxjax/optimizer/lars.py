"""LARS: layer-wise adaptive rate scaling over momentum SGD (``mxnet.optimizer.lars``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["LARS"]


@register
class LARS(Optimizer):
    """LARS (layer-wise adaptive rate scaling) on top of momentum SGD::

        lars = eta * |w| / (|rescale_grad * grad| + wd * |w| + epsilon)   (1 if |w| or |grad| is 0)
        grad = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state - lr * lars * grad;  weight += state

    Parameters whose name (``param_idx2name``) ends in ``gamma``, ``beta`` or ``bias`` get
    ``lars = 1``, as in MXNet (which looks names up in ``param_idx2name`` only).
    """

    _hyper = ("momentum", "eta", "epsilon")

    def __init__(self, learning_rate: float | None = 0.1, momentum: float = 0.0, eta: float = 0.001,
                 epsilon: float = 1e-8, lazy_update: bool = False, use_fused_step: bool = True,
                 aggregate_num: int = 1, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step,
                         aggregate_num=aggregate_num, **kwargs)
        self.momentum = momentum
        self.eta = eta
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def _param_config(self, index: Any) -> bool:
        name = self.idx2name[index] if index in self.idx2name else str(index)
        return not (name.endswith("gamma") or name.endswith("beta") or name.endswith("bias"))

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        apply = True if config is None else config
        step = T.heavy_ball(learning_rate, self.momentum) if self.momentum != 0.0 else optax.scale(-learning_rate)
        return T.chain(T.lars_scale(self.eta, self.epsilon, weight_decay, rescale_grad, self.clip_gradient, apply),
                       step)
