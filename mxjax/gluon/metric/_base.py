"""``mx.gluon.metric`` base: EvalMetric, the registry, ``create`` and CompositeEvalMetric.

Metrics accumulate on the host: every ``update`` turns its arrays (``mx.np``, ``mx.nd``, NumPy, lists) into
NumPy arrays, and the arithmetic keeps MXNet's dtypes (float32 sums for regression metrics, float64 counts
for accuracy and the confusion statistics).  ``get()`` returns a Python float for a scalar result and an
``mx.np.ndarray`` for a vector one (``F1(average=None)``), as MXNet does.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as _onp

from ... import registry
from ..._ndarray import NDArray
from ...base import numeric_types, string_types


_ARRAY_TYPES = (NDArray, _onp.ndarray)


def _host(x):
    """A NumPy view of an ``mx.np``/``mx.nd``/NumPy array (or anything ``numpy.asarray`` takes)."""
    return x.asnumpy() if isinstance(x, NDArray) else _onp.asarray(x)


def _result(res):
    """What ``get()`` hands back: a float for a scalar, an ``mx.np.ndarray`` for anything bigger."""
    if isinstance(res, (_onp.ndarray, _onp.generic)):
        if _onp.ndim(res) == 0:
            return res.item()
        from ... import numpy as mnp
        return mnp.array(res, dtype=res.dtype)
    if isinstance(res, NDArray) and res.ndim == 0:
        return res.item()
    return res


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ``ValueError`` unless labels and preds agree in length (or in shape, with ``shape=True``).

    With ``wrap=True`` a single array is wrapped in a list.
    """
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, _ARRAY_TYPES):
            labels = [labels]
        if isinstance(preds, _ARRAY_TYPES):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """Base class for all evaluation metrics: accumulates ``sum_metric`` over ``num_inst`` instances."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        """The configuration that ``metric.create(**config)`` turns back into this metric."""
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update with name -> array mappings, picking ``output_names``/``label_names`` when set."""
        pred = [pred[name] for name in self.output_names] if self.output_names is not None else list(pred.values())
        label = ([label[name] for name in self.label_names] if self.label_names is not None
                 else list(label.values()))
        self.update(label, pred)

    def update(self, labels, preds):
        """Updates the internal evaluation result."""
        raise NotImplementedError()

    def reset(self):
        """Resets the internal evaluation result to initial state."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)``; the value is NaN before any update."""
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, _result(self.sum_metric / self.num_inst))

    def get_name_value(self):
        """A list of ``(name, value)`` pairs."""
        name, value = self.get()
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))


register = registry.get_register_func(EvalMetric, 'metric')
alias = registry.get_alias_func(EvalMetric, 'metric')
_create = registry.get_create_func(EvalMetric, 'metric')


def create(metric, *args, **kwargs):
    """A metric from a name, an ``EvalMetric``, a list of those (a composite) or a ``feval(label, pred)``."""
    if callable(metric):
        from ._regression import CustomMetric
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite_metric = CompositeEvalMetric()
        for child_metric in metric:
            composite_metric.add(create(child_metric, *args, **kwargs))
        return composite_metric
    return _create(metric, *args, **kwargs)


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Manages multiple evaluation metrics."""

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric):
        """Adds a child metric."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index`` (MXNet returns, not raises, a ValueError when out of range)."""
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError("Metric index {} is out of range 0 and {}".format(index, len(self.metrics)))

    def update_dict(self, labels, preds):  # pylint: disable=arguments-differ
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, 'metrics', []):
            metric.reset()

    def get(self):
        names, values = [], []
        for metric in self.metrics:
            name, value = metric.get()
            if isinstance(name, string_types):
                name = [name]
            if isinstance(value, numeric_types):
                value = [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config.update({'metrics': [i.get_config() for i in self.metrics]})
        return config
