"""LANS: LAMB with Nesterov momentum on normalized gradients (``mxnet.optimizer.lans``)."""
from __future__ import annotations

from typing import Any

import optax

from ..base import MXNetValueError
from . import _rules as R
from . import _transforms as T
from ._moments import Moments
from .optimizer import register

__all__ = ["LANS"]


@register
class LANS(Moments):
    """LANS (LAMB with Nesterov momentum on the normalized gradient)::

        grad = clip(rescale_grad * grad / |rescale_grad * grad|, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        den = sqrt(v / (1 - beta2**t)) + epsilon;  r1 = clip(|weight|, lower_bound, upper_bound)
        u_m = m / (1 - beta1**t) / den + wd * weight;  u_g = grad / den + wd * weight
        weight -= lr * (beta1 * r1/|u_m| * u_m + (1 - beta1) * r1/|u_g| * u_g)

    (a ratio that is 0, inf or NaN counts as 1).  The state ``(mean, var)`` is float32.
    """

    _hyper = ("beta1", "beta2", "epsilon", "lower_bound", "upper_bound")

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 aggregate_num: int = 4, use_fused_step: bool = True, **kwargs: Any):
        if aggregate_num > 45:  # MXNet's limit of its multi-tensor kernel, kept for the same scripts
            raise MXNetValueError(f"LANS: aggregate_num must be at most 45, got {aggregate_num}")
        super().__init__(learning_rate, beta1, beta2, epsilon, use_fused_step, aggregate_num=aggregate_num,
                         **kwargs)
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        clip = self.clip_gradient
        return T.chain(optax.scale(rescale_grad), R.normalize_by_norm(),
                       optax.clip(clip) if clip is not None and clip > 0 else None,
                       R.lans(learning_rate, weight_decay, self.beta1, self.beta2, self.epsilon,
                              self.lower_bound, self.upper_bound, step))
