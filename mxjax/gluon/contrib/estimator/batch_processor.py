"""What the Estimator does with one batch: forward (and backward when training)."""
from __future__ import annotations

from typing import Any

from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """Default per-batch work of ``Estimator``; subclass it to customise ``fit_batch``/``evaluate_batch``.

    A batch is ``(data, label, ...)``; both are split along ``batch_axis`` over the estimator's
    devices.  Both methods return ``(data, label, pred, loss)`` as lists with one entry per device.
    """

    def _get_data_and_label(self, batch: Any, device: list, batch_axis: int = 0) -> tuple[list, list]:
        return (split_and_load(batch[0], device, batch_axis=batch_axis),
                split_and_load(batch[1], device, batch_axis=batch_axis))

    def evaluate_batch(self, estimator: Any, val_batch: Any, batch_axis: int = 0) -> tuple[list, list, list, list]:
        """Forward ``val_net`` and ``val_loss`` on one validation batch."""
        data, label = self._get_data_and_label(val_batch, estimator.device, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(p, y) for p, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator: Any, train_batch: Any, batch_axis: int = 0) -> tuple[list, list, list, list]:
        """Forward under ``autograd.record()`` and backward; the optimizer step is a handler's job."""
        data, label = self._get_data_and_label(train_batch, estimator.device, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(p, y) for p, y in zip(pred, label)]
        for value in loss:
            value.backward()
        return data, label, pred, loss
