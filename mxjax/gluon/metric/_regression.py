"""``mx.gluon.metric`` regression, entropy, correlation, loss and custom metrics."""
from __future__ import annotations

import math

import numpy as _onp

from ..._ndarray import NDArray
from ...base import MXNetError
from ._base import _ARRAY_TYPES, EvalMetric, _host, alias, check_label_shapes, register


@register
class MAE(EvalMetric):
    """Mean absolute error (per-sample mean, averaged over samples)."""

    def __init__(self, name='mae', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            num_inst = label.shape[0]
            self.sum_metric += _onp.abs(label - pred).reshape(num_inst, -1).mean(axis=-1).sum()
            self.num_inst += num_inst


@register
class MSE(EvalMetric):
    """Mean squared error (per-sample mean, averaged over samples)."""

    def __init__(self, name='mse', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            num_inst = label.shape[0]
            self.sum_metric += ((label - pred) ** 2.0).reshape(num_inst, -1).mean(axis=-1).sum()
            self.num_inst += num_inst


@register
class RMSE(MSE):
    """Root of the mean squared error."""

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.sqrt(self.sum_metric / self.num_inst))


@register
class MeanPairwiseDistance(EvalMetric):
    """Mean p-norm distance between flattened label and prediction rows."""

    def __init__(self, name='mpd', output_names=None, label_names=None, p=2):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.p = p

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            label = label.reshape(label.shape[0], -1)
            pred = pred.reshape(pred.shape[0], -1)
            dis = ((label - pred) ** self.p).sum(axis=-1) ** (1.0 / self.p)
            self.sum_metric += dis.sum()
            self.num_inst += label.shape[0]


@register
class MeanCosineSimilarity(EvalMetric):
    """Mean cosine similarity along the last axis."""

    def __init__(self, name='cos_sim', output_names=None, label_names=None, eps=1e-8):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            if len(label.shape) == 1:
                label = label.reshape(1, label.shape[0])
            if len(pred.shape) == 1:
                pred = pred.reshape(1, pred.shape[0])
            sim = (label * pred).sum(axis=-1)
            n_p = _onp.linalg.norm(pred, axis=-1)
            n_l = _onp.linalg.norm(label, axis=-1)
            sim = sim / _onp.maximum(n_l * n_p, _onp.asarray(self.eps, sim.dtype))
            self.sum_metric += sim.sum()
            self.num_inst += len(label.reshape(-1, label.shape[-1]))


def _softmax(x, axis):
    e = _onp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _pick(data, index, axis):
    """``npx.pick(data, index, axis)`` with the default 'clip' mode, on the host."""
    axis = axis % data.ndim
    want = data.shape[:axis] + data.shape[axis + 1:]
    if index.shape != want:
        raise MXNetError("Shape inconsistent, Provided = [{}], inferred shape=[{}]".format(
            ','.join(map(str, index.shape)), ','.join(map(str, want))))
    index = _onp.clip(index.astype('int64'), 0, data.shape[axis] - 1)
    return _onp.take_along_axis(data, _onp.expand_dims(index, axis), axis).squeeze(axis)


@register
@alias('ce')
class CrossEntropy(EvalMetric):
    """Mean negative log of the probability picked by the label along ``axis``."""

    def __init__(self, eps=1e-12, ignore_label=None, axis=-1, from_logits=False, name='cross-entropy',
                 output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.ignore_label = ignore_label
        self.axis = axis
        self.from_logits = from_logits
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        loss = 0.
        num = 0
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            assert label.size == pred.size / pred.shape[-1], \
                "shape mismatch: %s vs. %s" % (label.shape, pred.shape)
            label = label.reshape((label.size,))
            if self.from_logits:
                pred = _softmax(pred, self.axis)
            pred = _pick(pred, label.astype('int32'), self.axis)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(pred.dtype)
                num -= ignore.sum()
                pred = pred * (1 - ignore) + ignore
            loss -= _onp.log(_onp.maximum(_onp.asarray(self.eps, pred.dtype), pred)).sum()
            num += pred.size
        self.sum_metric += loss
        self.num_inst += num


@register
class Perplexity(CrossEntropy):
    """``exp`` of the cross-entropy."""

    def __init__(self, eps=1e-12, ignore_label=None, axis=-1, from_logits=False, name='perplexity',
                 output_names=None, label_names=None):
        super().__init__(eps=eps, ignore_label=ignore_label, axis=axis, from_logits=from_logits, name=name,
                         output_names=output_names, label_names=label_names)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.sum_metric / self.num_inst))


@register
@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of all labels and predictions seen, updated online (float64)."""

    def __init__(self, name='pearsonr', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.reset()

    def reset(self):
        self._sse_p = 0
        self._mean_p = 0
        self._sse_l = 0
        self._mean_l = 0
        self._pred_nums = 0
        self._label_nums = 0
        self._conv = 0
        self.num_inst = 0
        self.sum_metric = 0.

    def update_variance(self, new_values, *aggregate):
        """Welford's update of ``(count, mean, M2)`` with a batch of values."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += _onp.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += _onp.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label, pred):
        self._conv = self._conv + _onp.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _host(label).reshape(-1).astype(_onp.float64)
            pred = _host(pred).reshape(-1).astype(_onp.float64)
            self.num_inst += 1
            self._label_nums, self._mean_l, self._sse_l = \
                self.update_variance(label, self._label_nums, self._mean_l, self._sse_l)
            self.update_cov(label, pred)
            self._pred_nums, self._mean_p, self._sse_p = \
                self.update_variance(pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        n = self._label_nums
        pearsonr = self._conv / ((n - 1) * _onp.sqrt(self._sse_p / (n - 1)) * _onp.sqrt(self._sse_l / (n - 1)))
        return (self.name, float(pearsonr))


@register
class PCC(EvalMetric):
    """Multiclass Pearson (Matthews) correlation from an accumulated confusion matrix."""

    def __init__(self, name='pcc', output_names=None, label_names=None):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names)

    def _grow(self, inc):
        self.lcm = _onp.pad(self.lcm, ((0, inc), (0, inc)), 'constant', constant_values=0)
        self.k += inc

    def _calc_mcc(self, cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = _onp.sum(x * (n - x))
        cov_yy = _onp.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        i = cmat[_onp.arange(self.k), _onp.arange(self.k)]
        cov_xy = _onp.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _host(label).astype('int32')
            pred = _host(pred)
            pred = pred.argmax(axis=1).astype('int32') if pred.shape != label.shape else pred.astype('int32')
            n = int(max(pred.max(), label.max()))
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = _onp.zeros((self.k, self.k), dtype='float64')
            _onp.add.at(bcm, (pred.reshape(-1), label.reshape(-1)), 1)
            self.lcm += bcm
        self.num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    def reset(self):
        self.num_inst = 0.
        self.lcm = _onp.zeros((self.k, self.k), dtype='float64')


@register
class Loss(EvalMetric):
    """Mean of the values in ``preds`` (the labels are ignored)."""

    def __init__(self, name='loss', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, _, preds):
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
        for pred in preds:
            pred = _host(pred)
            self.sum_metric += pred.sum().item()
            self.num_inst += pred.size


@register
class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name='torch', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)``, called with ``mx.np`` arrays; it returns a value, or
    ``(sum_metric, num_inst)``."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if name.find('<') != -1:
                name = 'custom(%s)' % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        from ... import numpy as mnp
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            label = label.as_np_ndarray() if isinstance(label, NDArray) else mnp.array(label)
            pred = pred.as_np_ndarray() if isinstance(pred, NDArray) else mnp.array(pred)
            reval = self._feval(label, pred)
            if isinstance(reval, tuple):
                sum_metric, num_inst = reval
                self.sum_metric += sum_metric
                self.num_inst += num_inst
            else:
                self.sum_metric += reval
                self.num_inst += 1

    def get_config(self):
        raise NotImplementedError('CustomMetric cannot be serialized')


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """A ``CustomMetric`` from ``numpy_feval(label, pred)``."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
