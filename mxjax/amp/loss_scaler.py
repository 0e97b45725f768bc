"""Dynamic loss scaling for float16 training.

Gradients of a float16 model underflow when the loss is small, so the loss is multiplied by a
large scale before ``backward`` and the gradients divided by it before the update.  After each
backward the scaler checks the gradients: any inf/nan means the scale was too large, so it is
halved and that update skipped; after ``scale_seq_len`` clean steps in a row it is doubled again
(up to a ceiling).
"""
from __future__ import annotations

import logging
from typing import Any, Iterable

import jax.numpy as jnp

from .. import autograd

__all__ = ["LossScaler"]


class LossScaler:
    """``LossScaler()``: MXNet's dynamic loss scaler (start 2**16, ceiling 2**24, grow after 2000 clean
    steps); the keyword arguments, an mxjax extension, change those three numbers."""

    def __init__(self, *, init_scale: float = 2.0 ** 16, max_scale: float = 2.0 ** 24,
                 scale_seq_len: int = 2000) -> None:
        if not (init_scale > 0 and max_scale >= init_scale):
            raise ValueError(f"LossScaler: need 0 < init_scale <= max_scale, got init_scale={init_scale}, "
                             f"max_scale={max_scale}")
        if int(scale_seq_len) < 1:
            raise ValueError(f"LossScaler: scale_seq_len must be a positive integer, got {scale_seq_len}")
        self._loss_scale = float(init_scale)
        self._max_loss_scale = float(max_scale)
        self._scale_seq_len = int(scale_seq_len)
        self._unskipped = 0

    @property
    def loss_scale(self) -> float:
        """The scale the next ``amp.scale_loss`` multiplies the loss by."""
        return self._loss_scale

    def has_overflow(self, params: Iterable[Any]) -> bool:
        """Whether any gradient of ``params`` holds inf or nan; updates the scale for the next step.

        MXNet applies a new scale one check late (it stages it in ``_next_loss_scale``), so the step
        after an overflow runs again with the scale that overflowed; here it takes effect at once.
        """
        with autograd.pause():
            grads = [p.grad().to_jax() for p in params
                     if p.grad_req != "null" and p._data is not None and p._data.grad is not None]
            finite = bool(jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in grads]))) if grads else True
        if not finite:
            self._loss_scale /= 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._loss_scale)
            return True
        self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._loss_scale)
        return False
