"""``mx.gluon.metric`` classification metrics: Accuracy, TopKAccuracy, F1, Fbeta, BinaryAccuracy, MCC.

F1, Fbeta and MCC share one running confusion tally (:class:`_Tally`): per class, the counts of
true/false positives/negatives, kept in float64 as MXNet does.  The scores are pure functions of it.
"""
from __future__ import annotations

import math

import numpy as _onp

from ._base import _ARRAY_TYPES, EvalMetric, _host, _paired, alias, check_label_shapes, register

_TINY = 1e-12   # floor for denominators, so an empty class scores 0 instead of NaN


def _hits(truth, guess):
    """How many flattened int32 ``guess`` entries equal ``truth`` (lengths must agree), as float64."""
    truth = truth.astype('int32').ravel()
    guess = guess.astype('int32').ravel()
    check_label_shapes(truth, guess)
    return _onp.float64(_onp.count_nonzero(truth == guess)), guess.size


@register
@alias('acc')
class Accuracy(EvalMetric):
    """Fraction of correct predictions; scores are reduced by argmax over ``axis`` unless already indices."""

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names)
        self.axis = axis

    def update(self, labels, preds):
        for truth, guess in _paired(labels, preds):
            if guess.shape != truth.shape:
                guess = guess.argmax(axis=self.axis)
            hit, seen = _hits(truth, guess)
            self.sum_metric += hit
            self.num_inst += seen


@register
@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """A sample counts as correct when its label is among the ``top_k`` highest-scoring classes."""

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names)
        self.top_k = top_k
        assert self.top_k > 1, 'Please use Accuracy if top_k is no more than 1'
        self.name = '%s_%d' % (self.name, top_k)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for truth, scores in zip(labels, preds):
            assert len(scores.shape) <= 2, 'Predictions should be no more than 2 dims'
            # argpartition puts the indices of the k largest scores in the last k slots.
            ranked = _onp.argpartition(_host(scores).astype('float32'), -self.top_k)
            truth = _host(truth).astype('int32')
            check_label_shapes(truth, ranked)
            if ranked.ndim == 1:
                best = ranked.reshape(-1, 1)
            else:
                best = ranked[:, -min(ranked.shape[1], self.top_k):]
            found = best == truth.reshape(-1, 1)
            self.sum_metric += _onp.float64(found.sum())
            self.num_inst += ranked.shape[0]


def predict_with_threshold(pred, threshold=0.5):
    """``pred > threshold``: a float threshold, or one threshold per class (last axis) as an array."""
    if isinstance(threshold, _ARRAY_TYPES):
        assert threshold.shape[-1] == pred.shape[-1], \
            "shape mismatch: %s vs. %s" % (pred.shape[-1], threshold.shape[-1])
        # NumPy predictions are compared with a host copy; device ones stay on the device.
        return pred > (_host(threshold) if isinstance(pred, _onp.ndarray) else threshold)
    if not isinstance(threshold, float):
        raise ValueError("{} is a wrong type for threshold!".format(type(threshold)))
    return pred > threshold


def one_hot(idx, num):
    """Int32 rows of length ``num`` with a 1 at each class index in ``idx``."""
    idx = _host(idx)
    return (idx[:, None] == _onp.arange(num, dtype=idx.dtype)).astype('int32')


def _binary_view(truth, scores, threshold):
    """Flat 0/1 (truth, guess) for binary tasks; scores may be one probability or two columns."""
    if truth.max() > 1:
        raise ValueError("Wrong label for binary classification.")
    if scores.shape != truth.shape:
        width = scores.shape[-1]
        if width > 2:
            raise ValueError("The shape of prediction {} is wrong for binary classification.".format(scores.shape))
        if width == 2:
            scores = scores.reshape(-1, 2)[:, 1]   # probability of the positive class
    return truth.ravel(), predict_with_threshold(scores, threshold).ravel(), 1


def _multiclass_view(truth, scores, _threshold):
    """One-hot (truth, argmax guess) matrices, one column per class."""
    width = scores.shape[-1]
    assert truth.max() < width, "pred contains fewer classes than label!"
    guess = scores.argmax(axis=-1).ravel()
    return one_hot(truth.ravel(), width), one_hot(guess, width), width


def _multilabel_view(truth, scores, threshold):
    """Per-class 0/1 (truth, thresholded guess) matrices."""
    width = scores.shape[-1]
    assert scores.shape == truth.shape, \
        "The shape of label should be same as that of prediction for multilabel classification."
    guess = predict_with_threshold(scores, threshold)
    return truth.reshape(-1, width), guess.reshape(-1, width), width


_VIEWS = {'binary': _binary_view, 'multiclass': _multiclass_view, 'multilabel': _multilabel_view}


class _Tally:
    """Running per-class confusion counts (``tp``, ``fp``, ``fn``, ``tn``) for one task type."""

    def __init__(self, class_type="binary", threshold=0.5):
        self.class_type, self.threshold = class_type, threshold
        self.clear()

    def clear(self):
        self.width = None
        self.tp = self.fp = self.fn = self.tn = None

    def add(self, truth, scores):
        """Count one (label, prediction) pair."""
        scores, truth = _host(scores), _host(truth).astype('int32')
        view = _VIEWS.get(self.class_type)
        if view is None:
            raise ValueError(
                "Wrong class_type {}! Only supports ['binary', 'multiclass', 'multilabel']".format(self.class_type))
        if self.class_type == 'binary':
            self._fix_width(1)   # binary fixes its width before the label check, as MXNet does
        else:
            self._fix_width(scores.shape[-1])
        truth, guess, _ = view(truth, scores, self.threshold)
        check_label_shapes(truth, guess)
        yes_t, yes_g = truth == 1, guess == 1
        no_t, no_g = truth == 0, guess == 0
        self.tp += (yes_g & yes_t).sum(axis=0)
        self.fp += (yes_g & no_t).sum(axis=0)
        self.fn += (no_g & yes_t).sum(axis=0)
        self.tn += (no_g & no_t).sum(axis=0)

    def _fix_width(self, width):
        if self.width is None:
            self.width = width
            self.tp, self.fp, self.fn, self.tn = (_onp.zeros(width, 'float64') for _ in range(4))
        assert self.width == width, \
            "Input number of classes has changed from {} to {}".format(self.width, width)

    @property
    def count(self):
        """Examples seen (judged from class 0's cells)."""
        if self.width is None:
            return 0
        return int(self.tp[0] + self.fp[0] + self.fn[0] + self.tn[0])


def _f_score(tp, fp, fn, beta):
    """Per-class F-beta from count vectors; the denominators are floored so empty classes give 0."""
    precision = tp / _onp.maximum(tp + fp, _TINY)
    recall = tp / _onp.maximum(tp + fn, _TINY)
    b2 = beta ** 2
    return (1 + b2) * precision * recall / _onp.maximum(b2 * precision + recall, _TINY)


def _micro_f_score(tp, fp, fn, beta):
    """F-beta of the counts pooled over classes (0 when there are no positives at all)."""
    tp, fp, fn = tp.sum(), fp.sum(), fn.sum()
    precision = tp / max(tp + fp, _TINY)
    recall = tp / max(tp + fn, _TINY)
    if precision + recall <= 0:
        return 0.
    b2 = beta ** 2
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def _matthews(tally):
    """Matthews correlation of binary counts; zero margins are left out of the denominator."""
    if not tally.count:
        return 0.
    tp, fp, fn, tn = (float(c[0]) for c in (tally.tp, tally.fp, tally.fn, tally.tn))
    margins = [m for m in (tp + fp, tp + fn, tn + fp, tn + fn) if m != 0.]
    return (tp * tn - fp * fn) / math.sqrt(math.prod(margins))


class _TallyMetric(EvalMetric):
    """A metric whose value is recomputed from a :class:`_Tally` after every update."""

    def _score(self):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for truth, scores in zip(labels, preds):
            self._tally.add(truth, scores)
        # Stored as score * n so that the inherited get() (sum / n) returns the score.
        self.num_inst = self._tally.count
        self.sum_metric = self._score() * self.num_inst

    def reset(self):
        self.num_inst, self.sum_metric = 0, 0.
        self._tally.clear()


@register
class F1(_TallyMetric):
    """F1 score (binary, multiclass or multilabel); ``average`` is 'micro', 'macro' or None (per class)."""

    def __init__(self, name='f1', output_names=None, label_names=None, class_type="binary", threshold=0.5,
                 average="micro"):
        self.average = average
        self.beta = 1
        self._tally = _Tally(class_type, threshold)
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _score(self):
        t = self._tally
        if t.width is None:
            return 0.
        if self.average == 'micro':
            return _micro_f_score(t.tp, t.fp, t.fn, self.beta)
        per_class = _f_score(t.tp, t.fp, t.fn, self.beta)
        return per_class.mean() if self.average == "macro" else per_class


@register
class Fbeta(F1):
    """F-beta score, weighting recall ``beta`` times as much as precision."""

    def __init__(self, name='fbeta', output_names=None, label_names=None, class_type="binary", beta=1,
                 threshold=0.5, average="micro"):
        super().__init__(name, output_names, label_names, class_type, threshold, average)
        self.beta = beta


@register
class BinaryAccuracy(EvalMetric):
    """Accuracy of ``pred > threshold`` against 0/1 labels."""

    def __init__(self, name='binary_accuracy', output_names=None, label_names=None, threshold=0.5):
        self.threshold = threshold
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        for truth, scores in _paired(labels, preds):
            hit, seen = _hits(truth, predict_with_threshold(scores, self.threshold))
            self.sum_metric += hit
            self.num_inst += seen


@register
class MCC(_TallyMetric):
    """Matthews correlation coefficient of a binary classifier."""

    def __init__(self, name='mcc', output_names=None, label_names=None):
        self._tally = _Tally()
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _score(self):
        return _matthews(self._tally)
