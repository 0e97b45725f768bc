"""Adaptive optimizers: Adam, AdamW, AdaGrad, RMSProp, AdaDelta, Ftrl and LAMB (MXNet 2's rules)."""
from __future__ import annotations

import os
from typing import Any

import optax

from . import _transforms as T
from .optimizer import Optimizer, register


def aggregation_size() -> int:
    """MXNet's ``MXNET_OPTIMIZER_AGGREGATION_SIZE`` (default 4, clipped to 1..50): the
    ``aggregate_num`` AdamW and AdaBelief report (all updates are fused here anyway)."""
    try:
        size = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
    except ValueError:
        size = 4
    return max(1, min(50, size))

__all__ = ["Adam", "AdamW", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "LAMB"]


def _decayed(rescale_grad: Any, clip_gradient: float | None, weight_decay: Any) -> optax.GradientTransformation:
    return T.chain(T.preprocess(rescale_grad, clip_gradient), optax.add_decayed_weights(weight_decay))


@register
class Adam(Optimizer):
    """Adam, with MXNet's bias correction through the learning rate (step ``t`` of the weight)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)

    The state is ``(mean, var)``; ``t`` is the optimizer's update count of the weight.
    """

    _hyper = ("beta1", "beta2", "epsilon")
    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = False, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lazy_update = lazy_update

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       T.mx_adam(learning_rate, self.beta1, self.beta2, self.epsilon, step))


@register
class AdamW(Optimizer):
    """AdamW with decoupled weight decay (MXNet 2's fused ``adamw_update``, registered as 'adamw')::

        grad = clip(grad * rescale_grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        eta = lr * sqrt(1 - beta2**t) / (1 - beta1**t)     (eta = lr when not correct_bias)
        weight -= eta * (m / (sqrt(v) + epsilon) + wd * weight)
    """

    _hyper = ("beta1", "beta2", "epsilon", "correct_bias")
    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, correct_bias: bool = True, use_fused_step: bool = True, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.aggregate_num = aggregation_size()
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.correct_bias = correct_bias

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        core = T.mx_adamw(learning_rate, weight_decay, self.beta1, self.beta2, self.epsilon, self.correct_bias,
                          step)
        return T.chain(T.preprocess(rescale_grad, self.clip_gradient), core)


@register
class AdaGrad(Optimizer):
    """AdaGrad::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        history += grad**2
        weight -= lr * grad / (sqrt(history) + epsilon)
    """

    _hyper = ("epsilon",)

    def __init__(self, learning_rate: float | None = 0.01, epsilon: float = 1e-6, use_fused_step: bool = True,
                 eps: float | None = None, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        if eps is not None:
            raise DeprecationWarning("parameter 'eps' is deprecated. Please use 'epsilon' instead...")
        self.epsilon = epsilon

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       T.mx_adagrad(learning_rate, self.epsilon))


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
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay), core, clip)


@register
class AdaDelta(Optimizer):
    """AdaDelta (optax.adadelta's rule exactly)::

        grad = clip(grad * rescale_grad, clip_gradient) + wd * weight
        acc_grad = rho * acc_grad + (1 - rho) * grad**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= learning_rate * delta
    """

    _hyper = ("rho", "epsilon")

    def __init__(self, learning_rate: float | None = 1.0, rho: float = 0.9, epsilon: float = 1e-6,
                 use_fused_step: bool = False, **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(_decayed(rescale_grad, self.clip_gradient, weight_decay),
                       optax.scale_by_adadelta(self.rho, self.epsilon), optax.scale(-learning_rate))


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


@register
class LAMB(Optimizer):
    """LAMB (layer-wise adaptive moments for large batches)::

        grad = clip(grad * rescale_grad, clip_gradient)
        m = beta1 * m + (1 - beta1) * grad;  v = beta2 * v + (1 - beta2) * grad**2
        g = m_hat / (sqrt(v_hat) + epsilon) + wd * weight   (hats: bias-corrected if bias_correction)
        r1 = clip(|weight|, lower_bound, upper_bound);  r2 = |g|
        weight -= lr * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * g

    With bias correction and no bounds this is optax.lamb's chain (scale_by_adam,
    add_decayed_weights, scale_by_trust_ratio).
    """

    _hyper = ("beta1", "beta2", "epsilon", "lower_bound", "upper_bound", "bias_correction")
    _uses_step = True

    def __init__(self, learning_rate: float | None = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 bias_correction: bool = True, aggregate_num: int = 4, use_fused_step: bool = True,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, aggregate_num=aggregate_num,
                         use_fused_step=use_fused_step, **kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        self.bias_correction = bias_correction

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        moments = T.scale_by_moments(self.beta1, self.beta2, self.epsilon, step if self.bias_correction else None)
        if self.lower_bound or self.upper_bound:
            trust = T.bounded_trust_ratio(self.lower_bound, self.upper_bound)
        else:
            trust = optax.scale_by_trust_ratio()
        return T.chain(T.preprocess(rescale_grad, self.clip_gradient), moments,
                       optax.add_decayed_weights(weight_decay), trust, optax.scale(-learning_rate))
