"""Signum and signSGD (MXNet 2's ``mxnet.optimizer.signum``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["Signum"]


@register
class Signum(Optimizer):
    """Signum (sign of the momentum) and signSGD (``momentum=0``)::

        rescaled_grad = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state + (1 - momentum) * rescaled_grad
        weight = (1 - lr * wd_lh) * weight - lr * sign(state)

    and without momentum ``weight = (1 - lr * (wd + wd_lh)) * weight - lr * sign(grad)``.
    The state is MXNet's ``mom``: the negated moving average, ``mom = momentum * mom - (1 -
    momentum) * grad`` (optax.ema would keep the average with a step count MXNet's state lacks).
    """

    _hyper = ("momentum", "wd_lh")

    def __init__(self, learning_rate: float | None = 0.01, momentum: float = 0.9, wd_lh: float = 0.0,
                 use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        if self.momentum != 0.0:
            # optax.signum's ema -> sign -> -lr (the ema negated, as MXNet stores it), plus MXNet's two decays
            return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay),
                           T.negated_ema(self.momentum), optax.scale_by_sign(), optax.scale(-1.0),
                           optax.add_decayed_weights(self.wd_lh), optax.scale(-learning_rate))
        # MXNet's signsgd_update: the sign of the raw gradient, both decays decoupled
        return T.chain(optax.scale_by_sign(), optax.add_decayed_weights(weight_decay + self.wd_lh),
                       optax.scale(-learning_rate))
