"""``mx.gluon.metric`` core: the EvalMetric protocol, the name registry, ``create`` and the composite metric.

Every metric keeps two running numbers, ``sum_metric`` and ``num_inst``, and reports their ratio.  Inputs
(``mx.np``/``mx.nd``/NumPy arrays or nested lists) are pulled to the host as NumPy arrays, so the maths is
plain vectorised NumPy and never enters a JAX trace.
"""
from __future__ import annotations

import numpy as _onp

from ... import numpy as _mx_np
from ... import registry
from ..._ndarray import NDArray
from ...base import numeric_types, string_types

# What counts as "one array" (rather than a list of arrays) when a single input is passed.
_ARRAY_TYPES = (NDArray, _onp.ndarray)
_NAN = float('nan')
_KIND = 'metric'


def _host(x):
    """``x`` as a NumPy array: device arrays are copied over, anything else goes through ``asarray``."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    return _onp.asarray(x)


def _as_list(x):
    """A single array becomes a one-element list; lists and tuples pass through."""
    return [x] if isinstance(x, _ARRAY_TYPES) else x


def _paired(labels, preds):
    """Check that ``labels`` and ``preds`` have equal length, then yield them pairwise as NumPy arrays."""
    labels, preds = check_label_shapes(labels, preds, wrap=True)
    for lab, prd in zip(labels, preds):
        yield _host(lab), _host(prd)


def _to_user(value):
    """Scalars leave ``get()`` as Python floats; vectors (``F1(average=None)``) as ``mx.np`` arrays."""
    if isinstance(value, NDArray):
        return value.item() if value.ndim == 0 else value
    if not isinstance(value, (_onp.ndarray, _onp.generic)):
        return value
    if _onp.ndim(value) == 0:
        return value.item()
    return _mx_np.array(value, dtype=value.dtype)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ``ValueError`` unless labels and preds agree in length (or in shape, with ``shape=True``).

    With ``wrap=True`` a bare array is returned wrapped in a list, so callers can always iterate.
    """
    got_l, got_p = (labels.shape, preds.shape) if shape else (len(labels), len(preds))
    if got_l != got_p:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(got_l, got_p))
    return (_as_list(labels), _as_list(preds)) if wrap else (labels, preds)


class EvalMetric:
    """Base class of all metrics: ``get()`` is ``sum_metric / num_inst`` (NaN before the first update).

    Constructor keyword arguments beyond the three standard ones are remembered so ``get_config`` can
    rebuild the metric through ``create``.
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names, self.label_names = output_names, label_names
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: " + str(dict(self.get_name_value()))

    def get_config(self):
        """The keyword arguments that ``metric.create(**config)`` turns back into this metric."""
        return dict(self._kwargs, metric=type(self).__name__, name=self.name,
                    output_names=self.output_names, label_names=self.label_names)

    @staticmethod
    def _select(mapping, keys):
        """The values of ``mapping`` for ``keys`` in that order, or all of them when ``keys`` is None."""
        return list(mapping.values()) if keys is None else [mapping[k] for k in keys]

    def update_dict(self, label, pred):
        """Update from name -> array dicts, keeping only ``label_names``/``output_names`` when given."""
        self.update(self._select(label, self.label_names), self._select(pred, self.output_names))

    def update(self, labels, preds):
        """Fold one batch of labels and predictions into the running result."""
        raise NotImplementedError()

    def reset(self):
        """Forget everything accumulated so far."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)``."""
        if self.num_inst == 0:
            return (self.name, _NAN)
        return (self.name, _to_user(self.sum_metric / self.num_inst))

    def get_name_value(self):
        """The result as a list of ``(name, value)`` pairs (one per child for composites)."""
        names, values = self.get()
        names = names if isinstance(names, list) else [names]
        values = values if isinstance(values, list) else [values]
        return list(zip(names, values))


register = registry.get_register_func(EvalMetric, _KIND)
alias = registry.get_alias_func(EvalMetric, _KIND)
_lookup = registry.get_create_func(EvalMetric, _KIND)


def create(metric, *args, **kwargs):
    """Build a metric from a registered name, an instance, a list (-> composite) or ``feval(label, pred)``."""
    if isinstance(metric, list):
        group = CompositeEvalMetric()
        for part in metric:
            group.add(create(part, *args, **kwargs))
        return group
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    return _lookup(metric, *args, **kwargs)


@register
@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get()`` returns their names and values as two lists."""

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)
        self.metrics = [create(m) for m in metrics or ()]

    def add(self, metric):
        """Append a child (anything ``create`` accepts)."""
        self.metrics += [create(metric)]

    def get_metric(self, index):
        """The child at ``index``; out of range, a ``ValueError`` is *returned*, as MXNet does."""
        if -len(self.metrics) <= index < len(self.metrics):
            return self.metrics[index % len(self.metrics)]
        return ValueError("Metric index {} is out of range 0 and {}".format(index, len(self.metrics)))

    def update_dict(self, labels, preds):  # pylint: disable=arguments-differ
        def keep(mapping, names):
            return mapping if names is None else {k: v for k, v in mapping.items() if k in names}
        labels, preds = keep(labels, self.label_names), keep(preds, self.output_names)
        for child in self.metrics:
            child.update_dict(labels, preds)

    def update(self, labels, preds):
        for child in self.metrics:
            child.update(labels, preds)

    def reset(self):
        # Called from EvalMetric.__init__ before ``metrics`` exists.
        for child in getattr(self, 'metrics', ()):
            child.reset()

    def get(self):
        names, values = [], []
        for child in self.metrics:
            n, v = child.get()
            names += [n] if isinstance(n, string_types) else n
            values += [v] if isinstance(v, numeric_types) else v
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config['metrics'] = [child.get_config() for child in self.metrics]
        return config


def _as_mx_np(x):
    return x.as_np_ndarray() if isinstance(x, NDArray) else _mx_np.array(x)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` called on ``mx.np`` arrays, one pair at a time.

    ``feval`` returns either a value (counted as one instance) or ``(sum_metric, num_inst)``.
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if '<' in name:    # lambdas and other anonymous callables
                name = 'custom({})'.format(name)
        config = {'feval': feval, 'allow_extra_outputs': allow_extra_outputs}
        super().__init__(name, output_names, label_names, **config)
        self._feval, self._allow_extra_outputs = feval, allow_extra_outputs

    def update(self, labels, preds):
        # With extra outputs allowed, surplus predictions are simply dropped by zip.
        pairs = (labels, preds) if self._allow_extra_outputs else check_label_shapes(labels, preds, wrap=True)
        for truth, guess in zip(*pairs):
            out = self._feval(_as_mx_np(truth), _as_mx_np(guess))
            total, count = out if isinstance(out, tuple) else (out, 1)
            self.sum_metric += total
            self.num_inst += count

    def get_config(self):
        raise NotImplementedError('CustomMetric cannot be serialized')


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """Wrap ``numpy_feval(label, pred)`` as a :class:`CustomMetric` named after the function."""
    def wrapped(*label_pred):
        return numpy_feval(*label_pred)
    wrapped.__name__ = numpy_feval.__name__   # so the default name is the user's function name
    return CustomMetric(wrapped, name=name, allow_extra_outputs=allow_extra_outputs)
