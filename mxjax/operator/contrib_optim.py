"""MXNet's ``group_adagrad_update``: AdaGrad with one accumulated squared gradient per row.

The op returns ``(new_weight, new_history)``; the ``mx.nd.contrib`` front-end writes
the history back in place, as MXNet's op mutates its ``history`` input.  (MXNet 2.0
implements it only for row-sparse gradients on CPU; this is the dense form of the
same documented update.)
"""
from __future__ import annotations

import jax.numpy as jnp

from .nn_util import fail
from .registry import defop


@defop("_contrib_group_adagrad_update", aliases=("group_adagrad_update",), num_outputs=2, differentiable=False)
def group_adagrad_update(weight, grad, history, *, lr: float | None = None, rescale_grad: float = 1.0,
                         clip_gradient: float = -1.0, epsilon: float = 1e-5):
    """``g = clip(grad * rescale_grad)``; ``history += mean(g**2)`` over each row's other axes;
    ``weight -= lr * g / (sqrt(history) + epsilon)``."""
    op = "group_adagrad_update"
    if lr is None:
        fail(op, "lr is required")
    if weight.ndim < 1 or tuple(grad.shape) != tuple(weight.shape):
        fail(op, f"grad has shape {tuple(grad.shape)} but weight's shape {tuple(weight.shape)} is expected")
    rows = weight.shape[0]
    if tuple(history.shape) not in ((rows,), (rows, 1)):
        fail(op, f"history has shape {tuple(history.shape)} but ({rows}, 1) or ({rows},) is expected "
                 f"(one value per row of weight {tuple(weight.shape)})")
    dt = weight.dtype
    g = grad.astype(dt) * jnp.asarray(rescale_grad, dt)
    if clip_gradient > 0:
        g = jnp.clip(g, -clip_gradient, clip_gradient)
    per_row = jnp.mean((g * g).reshape(rows, -1), axis=1)
    new_history = history + per_row.reshape(history.shape).astype(history.dtype)
    scale = jnp.sqrt(new_history.astype(dt)).reshape((rows,) + (1,) * (weight.ndim - 1)) + jnp.asarray(epsilon, dt)
    return weight - jnp.asarray(lr, dt) * g / scale, new_history
