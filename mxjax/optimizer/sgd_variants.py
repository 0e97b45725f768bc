"""SGD's relatives MXNet 2 ships: DCASGD, SGLD and the ``Test`` optimizer (rules in ``_rules``)."""
from __future__ import annotations

from typing import Any

import jax
import optax

from .. import _rng
from . import _rules as R
from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["DCASGD", "SGLD", "Test"]


def _decayed(rescale_grad: Any, clip_gradient: float | None, weight_decay: Any) -> optax.GradientTransformation:
    return T.chain(T.preprocess(rescale_grad, clip_gradient), optax.add_decayed_weights(weight_decay))


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
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       R.dcasgd(learning_rate, self.momentum, self.lamda))


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
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay), R.langevin(learning_rate, key))


@register
class Test(Optimizer):
    """The Test optimizer: ``weight -= lr * (rescale_grad * grad + wd * weight)`` (no clipping);
    its state is an unused float32 array of zeros."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return R.plain_step(learning_rate, weight_decay, rescale_grad)
