"""AdaBelief (MXNet 2's ``mxnet.optimizer.adabelief``)."""
from __future__ import annotations

from typing import Any

import optax

from . import _rules as R
from . import _transforms as T
from ._moments import Moments
from .optimizer import aggregation_size, register

__all__ = ["AdaBelief"]


@register
class AdaBelief(Moments):
    """AdaBelief (Zhuang et al. 2020): Adam with the variance of the gradient around its mean::

        grad = clip(grad * rescale_grad + wd * weight, clip_gradient)   (decay before the clip)
        m = beta1 * m + (1 - beta1) * grad;  s = beta2 * s + (1 - beta2) * (grad - m)**2 + epsilon
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(s) + epsilon)

    (no bias factor without ``correct_bias``).  The state is ``(mean, var)``.
    """

    _hyper = ("beta1", "beta2", "epsilon", "correct_bias")

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, correct_bias: bool = True, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, **kwargs)
        self.correct_bias = correct_bias
        self.aggregate_num = aggregation_size()

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        clip = self.clip_gradient
        return T.chain(optax.scale(rescale_grad), optax.add_decayed_weights(weight_decay),
                       optax.clip(clip) if clip is not None and clip > 0 else None,
                       R.adabelief(learning_rate, self.beta1, self.beta2, self.epsilon, self.correct_bias, step))
