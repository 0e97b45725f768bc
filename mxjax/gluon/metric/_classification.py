"""``mx.gluon.metric`` classification metrics: Accuracy, TopKAccuracy, F1, Fbeta, BinaryAccuracy, MCC."""
from __future__ import annotations

import math

import numpy as _onp

from ._base import _ARRAY_TYPES, EvalMetric, _host, alias, check_label_shapes, register


@register
@alias('acc')
class Accuracy(EvalMetric):
    """Accuracy: predictions are class indices or scores along ``axis``."""

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            label, pred_label = _host(label), _host(pred_label)
            if pred_label.shape != label.shape:
                pred_label = pred_label.argmax(axis=self.axis)
            label = label.astype('int32').reshape(-1)
            pred_label = pred_label.astype('int32').reshape(-1)
            check_label_shapes(label, pred_label)
            self.sum_metric += (pred_label == label).sum().astype('float64')
            self.num_inst += len(pred_label)


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """Top-k accuracy: a hit when the label is among the ``top_k`` highest scores."""

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names)
        self.top_k = top_k
        assert self.top_k > 1, 'Please use Accuracy if top_k is no more than 1'
        self.name += '_%d' % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            assert len(pred_label.shape) <= 2, 'Predictions should be no more than 2 dims'
            pred_label = _onp.argpartition(_host(pred_label).astype('float32'), -self.top_k)
            label = _host(label).astype('int32')
            check_label_shapes(label, pred_label)
            num_samples = pred_label.shape[0]
            if pred_label.ndim == 1:
                self.sum_metric += (pred_label.reshape(-1) == label.reshape(-1)).sum().astype('float64')
            elif pred_label.ndim == 2:
                num_classes = pred_label.shape[1]
                for j in range(min(num_classes, self.top_k)):
                    num_correct = (pred_label[:, num_classes - 1 - j].reshape(-1) == label.reshape(-1)).sum()
                    self.sum_metric += num_correct.astype('float64')
            self.num_inst += num_samples


def predict_with_threshold(pred, threshold=0.5):
    """``pred > threshold`` for a float threshold or a per-class array of thresholds (last axis)."""
    if isinstance(threshold, float):
        return pred > threshold
    if isinstance(threshold, _ARRAY_TYPES):
        num_classes = pred.shape[-1]
        assert threshold.shape[-1] == num_classes, \
            "shape mismatch: %s vs. %s" % (pred.shape[-1], threshold.shape[-1])
        return pred > (_host(threshold) if isinstance(pred, _onp.ndarray) else threshold)
    raise ValueError("{} is a wrong type for threshold!".format(type(threshold)))


def one_hot(idx, num):
    """``(len(idx), num)`` int32 one-hot rows of the class indices ``idx``."""
    idx = _host(idx)
    return (_onp.arange(num).astype(idx.dtype) == idx[:, None]).astype('int32')


class _ClassificationMetrics:
    """True/false positive/negative counts per class, accumulated over batches (float64)."""

    def __init__(self, class_type="binary", threshold=0.5, beta=1):
        self.class_type = class_type
        self.threshold = threshold
        self.beta = beta
        self.reset_stats()

    def _set(self, num):
        if self.num_classes is None:
            self.num_classes = num
            self.true_positives = _onp.zeros(num, dtype='float64')
            self.false_negatives = _onp.zeros(num, dtype='float64')
            self.false_positives = _onp.zeros(num, dtype='float64')
            self.true_negatives = _onp.zeros(num, dtype='float64')
        else:
            assert self.num_classes == num, \
                "Input number of classes has changed from {} to {}".format(self.num_classes, num)

    def update_stats(self, label, pred):
        """Add one (label, pred) pair's counts."""
        pred = _host(pred)
        label = _host(label).astype('int32')
        if self.class_type == "binary":
            self._set(1)
            if label.max() > 1:
                raise ValueError("Wrong label for binary classification.")
            if pred.shape == label.shape:
                pass
            elif pred.shape[-1] > 2:
                raise ValueError("The shape of prediction {} is wrong for binary classification.".format(pred.shape))
            elif pred.shape[-1] == 2:
                pred = pred.reshape(-1, 2)[:, 1]
            pred_label = predict_with_threshold(pred, self.threshold).reshape(-1)
            label = label.reshape(-1)
        elif self.class_type == "multiclass":
            num = pred.shape[-1]
            self._set(num)
            assert label.max() < num, "pred contains fewer classes than label!"
            pred_label = one_hot(pred.argmax(axis=-1).reshape(-1), num)
            label = one_hot(label.reshape(-1), num)
        elif self.class_type == "multilabel":
            num = pred.shape[-1]
            self._set(num)
            assert pred.shape == label.shape, \
                "The shape of label should be same as that of prediction for multilabel classification."
            pred_label = predict_with_threshold(pred, self.threshold).reshape(-1, num)
            label = label.reshape(-1, num)
        else:
            raise ValueError(
                "Wrong class_type {}! Only supports ['binary', 'multiclass', 'multilabel']".format(self.class_type))
        check_label_shapes(label, pred_label)
        pred_true, pred_false = pred_label == 1, pred_label == 0
        label_true, label_false = label == 1, label == 0
        self.true_positives += (pred_true * label_true).sum(0)
        self.false_positives += (pred_true * label_false).sum(0)
        self.false_negatives += (pred_false * label_true).sum(0)
        self.true_negatives += (pred_false * label_false).sum(0)

    @property
    def precision(self):
        if self.num_classes is None:
            return 0.
        return self.true_positives / _onp.maximum(self.true_positives + self.false_positives, 1e-12)

    @property
    def micro_precision(self):
        if self.num_classes is None:
            return 0.
        tp = self.true_positives.sum()
        return tp / _onp.maximum(tp + self.false_positives.sum(), 1e-12)

    @property
    def recall(self):
        if self.num_classes is None:
            return 0.
        return self.true_positives / _onp.maximum(self.true_positives + self.false_negatives, 1e-12)

    @property
    def micro_recall(self):
        if self.num_classes is None:
            return 0.
        tp = self.true_positives.sum()
        return tp / _onp.maximum(tp + self.false_negatives.sum(), 1e-12)

    @property
    def fscore(self):
        b2 = self.beta ** 2
        return (1 + b2) * self.precision * self.recall / _onp.maximum(b2 * self.precision + self.recall, 1e-12)

    @property
    def micro_fscore(self):
        p, r, b2 = self.micro_precision, self.micro_recall, self.beta ** 2
        return (1 + b2) * p * r / (b2 * p + r) if p + r > 0 else 0.

    def binary_matthewscc(self):
        """Matthew's correlation coefficient of the binary counts."""
        if not self.total_examples:
            return 0.
        tp, fp = float(self.true_positives[0]), float(self.false_positives[0])
        fn, tn = float(self.false_negatives[0]), float(self.true_negatives[0])
        denom = 1.
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t != 0.:
                denom *= t
        return ((tp * tn) - (fp * fn)) / math.sqrt(denom)

    @property
    def total_examples(self):
        if self.num_classes is None:
            return 0
        return int(self.false_negatives[0] + self.false_positives[0] + self.true_negatives[0] + self.true_positives[0])

    def reset_stats(self):
        self.num_classes = None
        self.true_positives = self.false_negatives = self.false_positives = self.true_negatives = None


@register
class F1(EvalMetric):
    """F1 score (binary, multiclass or multilabel); ``average`` is 'micro', 'macro' or None (per class)."""

    def __init__(self, name='f1', output_names=None, label_names=None, class_type="binary", threshold=0.5,
                 average="micro"):
        self.average = average
        self.metrics = _ClassificationMetrics(class_type=class_type, threshold=threshold)
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_stats(label, pred)
        total = self.metrics.total_examples
        if self.average == "micro":
            self.sum_metric = self.metrics.micro_fscore * total
        elif self.average == "macro":
            self.sum_metric = self.metrics.fscore.mean() * total
        else:
            self.sum_metric = self.metrics.fscore * total
        self.num_inst = total

    def reset(self):
        self.sum_metric = 0.
        self.num_inst = 0
        self.metrics.reset_stats()


@register
class Fbeta(F1):
    """F-beta score: ``(1 + beta**2) * p * r / (beta**2 * p + r)``."""

    def __init__(self, name='fbeta', output_names=None, label_names=None, class_type="binary", beta=1,
                 threshold=0.5, average="micro"):
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         class_type=class_type, threshold=threshold, average=average)
        self.metrics = _ClassificationMetrics(class_type=class_type, threshold=threshold, beta=beta)


@register
class BinaryAccuracy(EvalMetric):
    """Accuracy of ``pred > threshold`` against 0/1 labels."""

    def __init__(self, name='binary_accuracy', output_names=None, label_names=None, threshold=0.5):
        self.threshold = threshold
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred_label in zip(labels, preds):
            pred_label = predict_with_threshold(_host(pred_label), self.threshold)
            pred_label = pred_label.astype('int32').reshape(-1)
            label = _host(label).astype('int32').reshape(-1)
            check_label_shapes(label, pred_label)
            self.sum_metric += (pred_label == label).sum().astype('float64')
            self.num_inst += len(pred_label)


@register
class MCC(EvalMetric):
    """Matthew's correlation coefficient of a binary classifier."""

    def __init__(self, name='mcc', output_names=None, label_names=None):
        self._metrics = _ClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self._metrics.update_stats(label, pred)
        self.sum_metric = self._metrics.binary_matthewscc() * self._metrics.total_examples
        self.num_inst = self._metrics.total_examples

    def reset(self):
        self.sum_metric = 0.
        self.num_inst = 0.
        self._metrics.reset_stats()


