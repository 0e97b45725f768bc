"""RMSProp, plain and centered (MXNet 2's ``mxnet.optimizer.rmsprop``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["RMSProp"]


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton (``centered=False``) or Graves (``centered=True``)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        var = rho * var + (1 - rho) * grad**2
        not centered: weight -= lr * grad / (sqrt(var) + epsilon)
        centered:     mean = rho * mean + (1 - rho) * grad
                      mom = momentum * mom - lr * grad / sqrt(var - mean**2 + epsilon); weight += mom

    then ``weight`` is clipped to ``[-clip_weights, clip_weights]`` when ``clip_weights`` is set.
    """

    _hyper = ("rho", "momentum", "epsilon", "centered", "clip_weights")

    def __init__(self, learning_rate: float | None = 0.001, rho: float = 0.9, momentum: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None,
                 use_fused_step: bool = True, gamma1: float | None = None, gamma2: float | None = None,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        if gamma1 is not None:
            raise DeprecationWarning("parameter 'gamma1' is deprecated. Please use 'rho' instead...")
        if gamma2 is not None:
            raise DeprecationWarning("parameter 'gamma2' is deprecated. Please use 'momentum' instead...")
        self.rho, self.momentum, self.epsilon = rho, momentum, epsilon
        self.centered, self.clip_weights = centered, clip_weights

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        if self.centered:
            # optax's centered RMS (epsilon inside the root, as MXNet) then MXNet's momentum buffer
            core = T.chain(optax.scale_by_stddev(self.rho, self.epsilon, eps_in_sqrt=True),
                           T.heavy_ball(learning_rate, self.momentum))
        else:
            # MXNet adds epsilon outside the root here: optax.rmsprop(eps_in_sqrt=False)
            core = T.chain(optax.scale_by_rms(self.rho, self.epsilon, eps_in_sqrt=False),
                           optax.scale(-learning_rate))
        clip = T.clip_weights(self.clip_weights) if self.clip_weights else None
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay), core, clip)
