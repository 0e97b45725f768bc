"""Stochastic gradient Langevin dynamics (MXNet 2's ``mxnet.optimizer.sgld``)."""
from __future__ import annotations

from typing import Any

import jax
import optax

from .. import _rng
from . import _rules as R
from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["SGLD"]


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics; no state::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        weight += -lr / 2 * grad + normal(0, sqrt(lr))

    The noise comes from mxjax's seeded stream (``mx.random.seed``): one key per step, split
    over the parameters inside the compiled update.
    """

    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.1, use_fused_step: bool = False, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)

    def _step_inputs(self, indices: Any) -> Any:
        return jax.random.split(_rng.next_key(), len(indices))

    def transformation(self, lr_mult: float = 1.0, wd_mult: float = 1.0, index: Any = None
                       ) -> optax.GradientTransformation:
        self._standalone_key = _rng.next_key()  # standalone: noise keys fold the step count into it
        return super().transformation(lr_mult, wd_mult, index)

    def _standalone_step(self, count: Any) -> Any:
        return jax.random.fold_in(self._standalone_key, count)

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        key = jax.random.PRNGKey(0) if step is None else step  # (structure only)
        return T.chain(T.decayed(rescale_grad, self.clip_gradient, weight_decay), R.langevin(learning_rate, key))
