"""The shared constructor of the (beta1, beta2, epsilon) optimizers: Adamax, Nadam, AdaBelief,
FTML and LANS."""
from __future__ import annotations

from typing import Any

from .optimizer import Optimizer

__all__ = ["Moments"]


class Moments(Optimizer):
    """The shared constructor of the (beta1, beta2, epsilon) optimizers here."""

    _hyper = ("beta1", "beta2", "epsilon")
    _uses_step = True

    def __init__(self, learning_rate: float | None, beta1: float, beta2: float, epsilon: float,
                 use_fused_step: bool, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
