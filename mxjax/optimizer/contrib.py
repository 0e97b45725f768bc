"""``mx.optimizer.contrib``: GroupAdaGrad (AdaGrad with one history value per row of a 2-D weight)."""
from __future__ import annotations

from typing import Any, Sequence

from ..base import MXNetValueError
from .._ndarray import NDArray
from . import _rules as R
from . import _transforms as T
from .optimizer import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with a history per row (for embeddings); weights must be 2-D and ``wd`` 0::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(grad**2, axis=1, keepdims=True)
        weight -= lr * grad / (sqrt(history) + epsilon)

    The state is the ``(rows, 1)`` history.  Gradients are dense here, for which MXNet's
    row-sparse kernel and its dense step agree.
    """

    _hyper = ("epsilon",)

    def __init__(self, learning_rate: float | None = 0.01, epsilon: float = 1e-6, use_fused_step: bool = True,
                 **kwargs: Any):
        super().__init__(learning_rate=learning_rate, use_fused_step=use_fused_step, **kwargs)
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> Any:
        if len(weight.shape) != 2:
            raise MXNetValueError(f"GroupAdaGrad.create_state: the weight must be 2-D, got shape {tuple(weight.shape)}")
        return super().create_state(index, weight)

    def prepare_update(self, indices: Sequence) -> tuple[list[float], list[float]]:
        lrs, wds = super().prepare_update(indices)
        if any(wds):
            raise MXNetValueError(f"GroupAdaGrad.update: weight decay is not supported, got wd {wds}")
        return lrs, wds

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return T.chain(T.preprocess(rescale_grad, self.clip_gradient), R.group_adagrad(learning_rate, self.epsilon))
