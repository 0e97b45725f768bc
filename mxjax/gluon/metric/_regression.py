"""``mx.gluon.metric`` regression, entropy, correlation, loss and user-defined metrics.

The error metrics (MAE, MSE, RMSE, MeanPairwiseDistance, MeanCosineSimilarity) form one family: each
maps a (label, pred) pair to one score per sample, and the metric is the mean of those scores over all
samples seen.  Only the per-sample function and the final transform (``sqrt`` for RMSE) differ.
"""
from __future__ import annotations

import math

import numpy as _onp

from ..._ndarray import NDArray
from ...base import MXNetError, MXNetValueError
from ._base import _NAN, EvalMetric, _as_list, _host, _paired, alias, check_label_shapes, register


def _rows(x, n):
    """``x`` flattened to ``n`` rows, one per sample."""
    return x.reshape(n, -1)


class _PerSampleMetric(EvalMetric):
    """Mean over samples of ``_per_sample(label, pred)``; ``_finish`` maps the mean to the reported value."""

    _finish = None

    def _per_sample(self, label, pred):
        raise NotImplementedError()

    def update(self, labels, preds):
        for truth, guess in _paired(labels, preds):
            scores = self._per_sample(truth, guess)
            self.sum_metric += scores.sum()
            self.num_inst += scores.size

    def get(self):
        if self._finish is None or self.num_inst == 0:
            return super().get()
        return (self.name, self._finish(self.sum_metric / self.num_inst))


@register
class MAE(_PerSampleMetric):
    """Mean absolute error (mean over each sample's elements, then over samples)."""

    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _per_sample(self, label, pred):
        return _onp.abs(_rows(label - pred, label.shape[0])).mean(axis=-1)


@register
class MSE(_PerSampleMetric):
    """Mean squared error (mean over each sample's elements, then over samples)."""

    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _per_sample(self, label, pred):
        return (_rows(label - pred, label.shape[0]) ** 2.0).mean(axis=-1)


@register
class RMSE(MSE):
    """Square root of the mean squared error over everything seen."""

    _finish = staticmethod(math.sqrt)

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class MeanPairwiseDistance(_PerSampleMetric):
    """Mean ``p``-distance between the flattened label and prediction of each sample.

    As in MXNet the differences are raised to ``p`` without taking their absolute value.
    """

    def __init__(self, name='mpd', output_names=None, label_names=None, p=2):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.p = p

    def _per_sample(self, label, pred):
        gap = _rows(label, label.shape[0]) - _rows(pred, pred.shape[0])
        return (gap ** self.p).sum(axis=-1) ** (1.0 / self.p)


@register
class MeanCosineSimilarity(_PerSampleMetric):
    """Mean cosine similarity along the last axis (a 1-d input is one vector)."""

    def __init__(self, name='cos_sim', output_names=None, label_names=None, eps=1e-8):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.eps = eps

    def _per_sample(self, label, pred):
        label, pred = _onp.atleast_2d(label), _onp.atleast_2d(pred)
        dot = _onp.einsum('...i,...i->...', label, pred)
        norms = _onp.linalg.norm(label, axis=-1) * _onp.linalg.norm(pred, axis=-1)
        return dot / _onp.maximum(norms, _onp.asarray(self.eps, dot.dtype))


def _softmax(x, axis):
    shifted = _onp.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)


def _take_class(probs, classes, axis):
    """``probs`` at index ``classes`` along ``axis`` (``npx.pick`` with clipping), or MXNet's shape error."""
    axis %= probs.ndim
    expected = probs.shape[:axis] + probs.shape[axis + 1:]
    if classes.shape != expected:
        raise MXNetError("Shape inconsistent, Provided = [{}], inferred shape=[{}]".format(
            ','.join(str(d) for d in classes.shape), ','.join(str(d) for d in expected)))
    where = _onp.clip(classes.astype('int64'), 0, probs.shape[axis] - 1)
    return _onp.take_along_axis(probs, _onp.expand_dims(where, axis), axis).squeeze(axis)


@register
@alias('ce')
class CrossEntropy(EvalMetric):
    """Mean negative log-probability of the labelled class (``pred`` holds probabilities along ``axis``).

    Entries whose label is ``ignore_label`` contribute neither loss nor count.
    """

    def __init__(self, eps=1e-12, ignore_label=None, axis=-1, from_logits=False, name='cross-entropy',
                 output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        if isinstance(eps, bool) or not isinstance(eps, (int, float, _onp.floating)) or not eps >= 0:
            # (a 1.x call Perplexity(None) meant ignore_label: MXNet 2.0 fails obscurely, the floor would be nan)
            raise MXNetValueError(f"{type(self).__name__}: eps (the first argument) must be a number >= 0, got "
                                  f"{eps!r}; give 1.x's first argument by name (ignore_label={eps!r})")
        self.ignore_label, self.axis = ignore_label, axis
        self.from_logits, self.eps = from_logits, eps

    def _batch_nll(self, label, pred):
        """(summed negative log-likelihood, number of counted entries) of one pair."""
        assert label.size == pred.size / pred.shape[-1], \
            "shape mismatch: %s vs. %s" % (label.shape, pred.shape)
        label = label.ravel()
        if self.from_logits:
            pred = _softmax(pred, self.axis)
        prob = _take_class(pred, label.astype('int32'), self.axis)
        count = prob.size
        skip = None if self.ignore_label is None else label == self.ignore_label
        if skip is not None:
            prob = _onp.where(skip, _onp.ones((), prob.dtype), prob)   # log(1) = 0
            count -= int(skip.sum())
        floor = _onp.asarray(self.eps, prob.dtype)
        return -_onp.log(_onp.maximum(prob, floor)).sum(), count

    def update(self, labels, preds):
        for truth, guess in _paired(labels, preds):
            nll, count = self._batch_nll(truth, guess)
            self.sum_metric += nll
            self.num_inst += count


@register
class Perplexity(CrossEntropy):
    """``exp`` of the cross-entropy."""

    def __init__(self, eps=1e-12, ignore_label=None, axis=-1, from_logits=False, name='perplexity',
                 output_names=None, label_names=None):
        super().__init__(eps, ignore_label, axis, from_logits, name, output_names, label_names)

    def get(self):
        if self.num_inst == 0:
            return (self.name, _NAN)
        return (self.name, math.exp(self.sum_metric / self.num_inst))


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of every label/prediction element seen so far.

    Keeps running means, sums of squared deviations and the co-moment in float64, merging each batch
    with Chan et al.'s pairwise update so that no raw data is stored.
    """

    def __init__(self, name='pearsonr', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def reset(self):
        self.num_inst, self.sum_metric = 0, 0.
        self._n = 0
        self._mean = _onp.zeros(2)        # (label, pred)
        self._m2 = _onp.zeros(2)          # sums of squared deviations
        self._co = 0.                     # sum of (label - mean) * (pred - mean)

    def update(self, labels, preds):
        for truth, guess in _paired(labels, preds):
            check_label_shapes(truth, guess, shape=True)
            self.num_inst += 1
            batch = _onp.stack([truth.ravel(), guess.ravel()]).astype(_onp.float64)
            size = batch.shape[1]
            if size == 0:
                continue
            mean = batch.mean(axis=1)
            dev = batch - mean[:, None]
            total = self._n + size
            shift = mean - self._mean
            weight = self._n * size / total
            self._m2 = self._m2 + (dev * dev).sum(axis=1) + shift ** 2 * weight
            self._co += float(dev[0] @ dev[1]) + shift[0] * shift[1] * weight
            self._mean = self._mean + shift * size / total
            self._n = total

    def get(self):
        if self.num_inst == 0:
            return (self.name, _NAN)
        return (self.name, float(self._co / _onp.sqrt(self._m2[0] * self._m2[1])))


@register
class PCC(EvalMetric):
    """Multiclass Matthews correlation (Pearson correlation of one-hot labels and predictions).

    Accumulates a confusion matrix that grows when a larger class index shows up; ``num_inst``
    counts ``update`` calls, as in MXNet.
    """

    def __init__(self, name='pcc', output_names=None, label_names=None):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names)

    def reset(self):
        self.num_inst = 0.
        self.lcm = _onp.zeros((self.k, self.k), dtype='float64')

    @property
    def sum_metric(self):
        return self._correlation() * self.num_inst

    def _correlation(self):
        cm = self.lcm
        total = cm.sum()
        by_pred, by_label = cm.sum(axis=1), cm.sum(axis=0)
        var_pred = _onp.sum(by_pred * (total - by_pred))
        var_label = _onp.sum(by_label * (total - by_label))
        if var_pred == 0 or var_label == 0:
            return float('nan')
        cov = _onp.sum(_onp.diag(cm) * total - by_pred * by_label)
        return cov / math.sqrt(var_pred * var_label)

    def _fold(self, label, pred):
        """Add one pair's (pred, label) counts, first widening the matrix if a new class appears."""
        top = int(max(pred.max(), label.max()))
        if top >= self.k:
            extra = top + 1 - self.k
            self.lcm = _onp.pad(self.lcm, ((0, extra), (0, extra)))
            self.k = top + 1
        flat = pred.ravel().astype('int64') * self.k + label.ravel()
        self.lcm += _onp.bincount(flat, minlength=self.k * self.k).reshape(self.k, self.k)

    def update(self, labels, preds):
        for truth, guess in _paired(labels, preds):
            truth = truth.astype('int32')
            guess = guess.argmax(axis=1) if guess.shape != truth.shape else guess
            self._fold(truth, guess.astype('int32'))
        self.num_inst += 1


@register
class Loss(EvalMetric):
    """Mean of all values in ``preds``; the labels are ignored."""

    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, _, preds):
        for values in _as_list(preds):
            values = _host(values)
            self.sum_metric += values.sum().item()
            self.num_inst += values.size


@register
class Torch(Loss):
    """Placeholder metric for torch criterions (behaves like :class:`Loss`)."""

    def __init__(self, name='torch', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
