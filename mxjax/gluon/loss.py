"""``mx.gluon.loss``: MXNet 2.0's loss functions as HybridBlocks.

Every loss returns one value per sample (the mean over all axes but ``batch_axis``)
unless noted; ``weight`` scales the loss, ``sample_weight`` is broadcast-multiplied.
"""
from __future__ import annotations

import math
from typing import Any

from .. import numpy as np
from .. import numpy_extension as npx
from ..base import MXNetValueError, numeric_types  # noqa: F401  (MXNet's loss module offers both)
from ..util import use_np  # noqa: F401
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss", "HingeLoss",
           "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss", "CosineEmbeddingLoss", "SDMLLoss"]


def _apply_weighting(loss: Any, weight: Any = None, sample_weight: Any = None) -> Any:
    """``loss * sample_weight`` (broadcast) ``* weight`` (a Python number)."""
    if sample_weight is not None:
        loss = loss * sample_weight
    if weight is not None:
        if not isinstance(weight, (int, float)) or isinstance(weight, bool):
            raise MXNetValueError(f"loss weight must be a number, got {type(weight).__name__}")
        loss = loss * weight
    return loss


def _reshape_like(x: Any, like: Any, loss: str, what: str = "label") -> Any:
    """``x.reshape(like.shape)``, with a clear error when the sizes differ."""
    if tuple(x.shape) == tuple(like.shape):
        return x
    if math.prod(x.shape) != math.prod(like.shape):
        raise MXNetValueError(f"{loss}: {what} of shape {tuple(x.shape)} ({math.prod(x.shape)} elements) "
                              f"cannot be reshaped to pred's shape {tuple(like.shape)}; "
                              "they must have the same number of elements")
    return x.reshape(like.shape)


def _batch_mean(loss: Any, batch_axis: int) -> Any:
    """Mean over every axis except ``batch_axis`` (MXNet's ``mean(..., exclude=True)``)."""
    axes = tuple(i for i in range(loss.ndim) if i != batch_axis % max(loss.ndim, 1))
    return np.mean(loss, axis=axes) if axes else loss


def _softrelu(x: Any) -> Any:
    return npx.activation(x, act_type="softrelu")


class Loss(HybridBlock):
    """Base class of losses: a global scalar ``weight`` and the ``batch_axis``."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _per_sample(self, loss: Any, sample_weight: Any, weight: Any = None) -> Any:
        """Weighted (``sample_weight``, then ``weight``, default the loss's own) and averaged over every
        axis but the batch axis: how most losses end."""
        weight = self._weight if weight is None else weight
        return _batch_mean(_apply_weighting(loss, weight, sample_weight), self._batch_axis)


class L2Loss(Loss):
    """Mean squared error ``0.5 * (label - pred)**2`` per sample."""

    def __init__(self, weight: float = 1.0, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(label, pred, "L2Loss")
        loss = np.square(label - pred)
        return self._per_sample(loss, sample_weight, self._weight / 2)


class L1Loss(Loss):
    """Mean absolute error ``|label - pred|`` per sample."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(label, pred, "L1Loss")
        return self._per_sample(np.abs(label - pred), sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy; ``pred`` are logits unless ``from_sigmoid``; optional ``pos_weight``."""

    def __init__(self, from_sigmoid: bool = False, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def forward(self, pred: Any, label: Any, sample_weight: Any = None, pos_weight: Any = None) -> Any:
        label = _reshape_like(label, pred, "SigmoidBinaryCrossEntropyLoss")
        if not self._from_sigmoid:
            if pos_weight is None:
                # stable: max(x, 0) - x * z + log(1 + exp(-|x|))
                loss = npx.relu(pred) - pred * label + _softrelu(-np.abs(pred))
            else:
                log_weight = 1 + (pos_weight - 1) * label
                loss = pred - pred * label + log_weight * (_softrelu(-np.abs(pred)) + npx.relu(-pred))
        else:
            eps = 1e-12
            pos = np.log(pred + eps) * label
            if pos_weight is not None:
                pos = pos * pos_weight
            loss = -(pos + np.log(1.0 - pred + eps) * (1.0 - label))
        return self._per_sample(loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Softmax cross-entropy over ``axis``; integer labels if ``sparse_label``, else distributions."""

    def __init__(self, axis: int = -1, sparse_label: bool = True, from_logits: bool = False,
                 weight: float | None = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._axis, self._sparse_label, self._from_logits = axis, sparse_label, from_logits

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        name = "SoftmaxCrossEntropyLoss"
        if not self._from_logits:
            pred = npx.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            expected = list(pred.shape)
            del expected[self._axis % pred.ndim]
            if math.prod(label.shape) != math.prod(expected):
                raise MXNetValueError(f"{name}: sparse label of shape {tuple(label.shape)} does not match pred "
                                      f"{tuple(pred.shape)} without its class axis {self._axis}: expected "
                                      f"{tuple(expected)}")
            if tuple(label.shape) != tuple(expected):
                label = label.reshape(tuple(expected))
            loss = -npx.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(label, pred, name)
            loss = -np.sum(pred * label, axis=self._axis, keepdims=True)
        return self._per_sample(loss, sample_weight)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """``label * (log(label) - pred)``; ``pred`` are log-probabilities if ``from_logits``."""

    def __init__(self, from_logits: bool = True, axis: int = -1, weight: float | None = None,
                 batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._axis = from_logits, axis

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        if not self._from_logits:
            pred = npx.log_softmax(pred, axis=self._axis)
        label = _reshape_like(label, pred, "KLDivLoss")
        loss = label * (np.log(label + 1e-12) - pred)
        return self._per_sample(loss, sample_weight)


class CTCLoss(Loss):
    """Connectionist temporal classification loss, shape (batch,); blank is ``alphabet_size - 1``,
    labels are padded with -1 unless ``label_lengths`` is given."""

    def __init__(self, layout: str = "NTC", label_layout: str = "NT", weight: float | None = None,
                 **kwargs: Any) -> None:
        if layout not in ("NTC", "TNC"):
            raise MXNetValueError(f"CTCLoss: only 'NTC' and 'TNC' layouts for pred are supported, got {layout!r}")
        if label_layout not in ("NT", "TN"):
            raise MXNetValueError(f"CTCLoss: only 'NT' and 'TN' layouts for label are supported, "
                                  f"got {label_layout!r}")
        self._layout, self._label_layout = layout, label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def forward(self, pred: Any, label: Any, pred_lengths: Any = None, label_lengths: Any = None,
                sample_weight: Any = None) -> Any:
        if self._layout == "NTC":
            pred = np.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = np.swapaxes(label, 0, 1)
        loss = npx.ctc_loss(pred, label, pred_lengths, label_lengths, use_data_lengths=pred_lengths is not None,
                            use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(loss, self._weight, sample_weight)


class HuberLoss(Loss):
    """Smoothed L1: ``0.5/rho * err**2`` where ``|err| <= rho``, else ``|err| - 0.5*rho``."""

    def __init__(self, rho: float = 1, weight: float | None = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(label, pred, "HuberLoss")
        loss = np.abs(label - pred)
        loss = np.where(loss > self._rho, loss - 0.5 * self._rho, (0.5 / self._rho) * np.square(loss))
        return self._per_sample(loss, sample_weight)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` with labels in {-1, 1}."""

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(label, pred, type(self).__name__)
        loss = self._hinge(npx.relu(self._margin - pred * label))
        return self._per_sample(loss, sample_weight)

    @staticmethod
    def _hinge(x: Any) -> Any:
        return x


class SquaredHingeLoss(HingeLoss):
    """``max(0, margin - pred * label)**2`` with labels in {-1, 1}."""

    @staticmethod
    def _hinge(x: Any) -> Any:
        return np.square(x)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))``; labels in {-1, 1} (``'signed'``) or {0, 1} (``'binary'``)."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0, label_format: str = "signed",
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise MXNetValueError(f"LogisticLoss: label_format must be 'signed' or 'binary', got {label_format!r}")
        self._label_format = label_format

    def forward(self, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        label = _reshape_like(label, pred, "LogisticLoss")
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = npx.relu(pred) - pred * label + _softrelu(-np.abs(pred))
        return self._per_sample(loss, sample_weight)


class TripletLoss(Loss):
    """``max(|pos - pred|^2 - |neg - pred|^2 + margin, 0)`` per sample (sums over non-batch axes)."""

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, pred: Any, positive: Any, negative: Any, sample_weight: Any = None) -> Any:
        positive = _reshape_like(positive, pred, "TripletLoss", "positive")
        negative = _reshape_like(negative, pred, "TripletLoss", "negative")
        diff = np.square(positive - pred) - np.square(negative - pred)
        axes = tuple(i for i in range(diff.ndim) if i != self._batch_axis % diff.ndim)
        loss = npx.relu((np.sum(diff, axis=axes) if axes else diff) + self._margin)
        return _apply_weighting(loss, self._weight, sample_weight)


class PoissonNLLLoss(Loss):
    """Poisson negative log-likelihood per sample (averaged over every axis but the batch axis), as
    MXNet 2.0 gives it; MXNet 1.x averaged the batch too, to one scalar."""

    def __init__(self, weight: float | None = None, from_logits: bool = True, batch_axis: int = 0,
                 compute_full: bool = False, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits, self._compute_full = from_logits, compute_full

    def forward(self, pred: Any, target: Any, sample_weight: Any = None, epsilon: float = 1e-08) -> Any:
        target = _reshape_like(target, pred, "PoissonNLLLoss", "target")
        if self._from_logits:
            loss = np.exp(pred) - target * pred
        else:
            loss = pred - target * np.log(pred + epsilon)
        if self._compute_full:
            # Stirling's approximation of log(target!), used only where target > 1; the where()
            # keeps log(0) of the unused entries from turning into nan
            big = target > 1
            safe = np.where(big, target, np.ones_like(target))
            stirling = safe * np.log(safe) - safe + 0.5 * np.log(2 * math.pi * safe)
            loss = loss + np.where(big, stirling, np.zeros_like(stirling))
        return self._per_sample(loss, sample_weight)  # (MXNet 1.x averaged over the batch too)


class CosineEmbeddingLoss(Loss):
    """``1 - cos(x1, x2)`` where label is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0, margin: float = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def forward(self, input1: Any, input2: Any, label: Any, sample_weight: Any = None) -> Any:
        input1 = _reshape_like(input1, input2, "CosineEmbeddingLoss", "input1")
        cos_sim = self._cosine_similarity(input1, input2)
        label = _reshape_like(label, cos_sim, "CosineEmbeddingLoss")
        loss = np.where(label == 1, 1 - cos_sim, np.clip(cos_sim - self._margin, 0, 1 - self._margin))
        return self._per_sample(loss, sample_weight)

    @staticmethod
    def _cosine_similarity(x: Any, y: Any, axis: int = -1) -> Any:
        x_norm = np.linalg.norm(x, axis=axis).reshape((-1, 1))
        y_norm = np.linalg.norm(y, axis=axis).reshape((-1, 1))
        x_dot_y = np.sum(x * y, axis=axis).reshape((-1, 1))
        return x_dot_y / np.maximum(x_norm * y_norm, 1e-12)


class SDMLLoss(Loss):
    """Smoothed deep metric learning loss of aligned minibatches ``x1``, ``x2`` of shape (batch, dim).

    Row i of ``x2`` is the positive for row i of ``x1``, every other row a negative: the
    loss is the KL divergence between the softmax of negative squared distances and
    labels that put ``1 - smoothing_parameter`` on the diagonal, shape (batch,).  As in
    MXNet 2.0, ``weight`` is accepted but not applied.
    """

    def __init__(self, smoothing_parameter: float = 0.3, weight: float = 1.0, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def forward(self, x1: Any, x2: Any) -> Any:
        if x1.ndim != 2 or tuple(x1.shape) != tuple(x2.shape):
            raise MXNetValueError(f"SDMLLoss: x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must be "
                                  "(batch, dim) matrices of the same shape")
        batch = x1.shape[0]
        gold = np.eye(batch)
        labels = gold * (1 - self.smoothing_parameter) + (1 - gold) * self.smoothing_parameter / (batch - 1)
        distances = ((np.expand_dims(x1, 1) - np.expand_dims(x2, 0)) ** 2).sum(axis=2)
        return self.kl_loss(npx.log_softmax(-distances, axis=1), labels)
