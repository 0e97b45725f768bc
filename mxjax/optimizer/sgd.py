"""Momentum-SGD family: SGD, NAG, LARS and Signum (MXNet 2's update rules)."""
from __future__ import annotations

from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["SGD", "NAG", "LARS", "Signum"]


def _decayed(rescale_grad: Any, clip_gradient: float | None, weight_decay: Any) -> optax.GradientTransformation:
    """``clip(rescale_grad * grad, c) + wd * weight``: MXNet's preprocessed gradient."""
    return T.chain(T.preprocess(rescale_grad, clip_gradient), optax.add_decayed_weights(weight_decay))


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay::

        rescaled_grad = clip(rescale_grad * grad, clip_gradient) + wd * weight
        state = momentum * state - lr * rescaled_grad      (state = None when momentum == 0)
        weight = weight + state                            (weight - lr * rescaled_grad without)

    ``lazy_update`` (row-sparse gradients) is accepted; gradients are dense here, for which
    MXNet's lazy and standard updates coincide.
    """

    _hyper = ("momentum",)

    def __init__(self, learning_rate: float | None = 0.1, momentum: float = 0.0, lazy_update: bool = False,
                 multi_precision: bool = False, use_fused_step: bool = True, aggregate_num: int = 1,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, multi_precision=multi_precision,
                         use_fused_step=use_fused_step, aggregate_num=aggregate_num, **kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        # momentum lives inside MXNet's buffer with the learning rate (see heavy_ball);
        # without momentum this chain is optax.sgd(lr) after the preprocessing
        step = T.heavy_ball(learning_rate, self.momentum) if self.momentum != 0.0 else optax.scale(-learning_rate)
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay), step)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        state = momentum * state - lr * grad
        weight = weight + momentum * state - lr * grad
    """

    _hyper = ("momentum",)

    def __init__(self, learning_rate: float | None = 0.1, momentum: float = 0.9, multi_precision: bool = False,
                 use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, multi_precision=multi_precision,
                         use_fused_step=use_fused_step, **kwargs)
        self.momentum = momentum

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        step = T.nesterov(learning_rate, self.momentum) if self.momentum != 0.0 else optax.scale(-learning_rate)
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay), step)


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
            return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                           T.negated_ema(self.momentum), optax.scale_by_sign(), optax.scale(-1.0),
                           optax.add_decayed_weights(self.wd_lh), optax.scale(-learning_rate))
        # MXNet's signsgd_update: the sign of the raw gradient, both decays decoupled
        return T.chain(optax.scale_by_sign(), optax.add_decayed_weights(weight_decay + self.wd_lh),
                       optax.scale(-learning_rate))
