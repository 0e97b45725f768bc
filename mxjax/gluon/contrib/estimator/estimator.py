"""``Estimator``: MXNet 2.0's high-level fit/evaluate loop over a Gluon net, loss, metrics and Trainer."""
from __future__ import annotations

import copy
import logging
import sys
import warnings
from typing import Any

from ....device import Device, cpu, gpu, num_gpus
from ...data import DataLoader
from ...loss import Loss
from ...metric import Loss as LossMetric
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, GradientUpdateHandler, LoggingHandler,
                            MetricHandler, StoppingHandler, TrainBegin, TrainEnd, ValidationHandler,
                            _check_event_handlers)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ["Estimator"]

_EVENTS = (("train_begin", TrainBegin), ("epoch_begin", EpochBegin), ("batch_begin", BatchBegin),
           ("batch_end", BatchEnd), ("epoch_end", EpochEnd), ("train_end", TrainEnd))


class Estimator:
    """Trains ``net`` with ``loss`` on a ``gluon.data.DataLoader``.

    Without ``train_metrics`` it tracks the loss (and accuracy for softmax cross-entropy); the
    validation metrics default to copies of the training ones.  The net is initialised with
    ``initializer`` unless it already is; without ``trainer`` it uses SGD at learning rate 0.001.
    ``logger`` writes INFO and above to stdout; add handlers to it to log elsewhere.
    """

    def __init__(self, net: Any, loss: Any, train_metrics: Any = None, val_metrics: Any = None,
                 initializer: Any = None, trainer: Trainer | None = None, device: Any = None,
                 val_net: Any = None, val_loss: Any = None, batch_processor: Any = None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        if not device and self._is_initialized():
            # a network already initialized trains where its parameters are (MXNet would move the
            # batches to gpu(0) on a machine with a GPU and fail against parameters on the CPU)
            device = next(iter(self.net.collect_params().values())).list_device()
        self.device = self._check_devices(device)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0

    # -- argument checks -------------------------------------------------------------------
    @staticmethod
    def _check_loss(loss: Any) -> Loss:
        if not isinstance(loss, Loss):
            raise ValueError(f"Estimator: loss must be a gluon.loss.Loss, got {loss!r}")
        return loss

    @staticmethod
    def _check_devices(devices: Any) -> list:
        available = [gpu(i) for i in range(num_gpus())]
        if not devices:
            return [available[0]] if available else [cpu()]
        devices = [devices] if isinstance(devices, Device) else devices
        if not isinstance(devices, list) or not all(isinstance(d, Device) for d in devices):
            raise ValueError(f"Estimator: device must be a Device or a list of Device "
                             f"(e.g. mx.cpu() or [mx.gpu(0), mx.gpu(1)]), got {devices!r}")
        for device in devices:
            if device.device_type != "cpu" and device not in available:
                raise ValueError(f"Estimator: {device} is not available; use mx.cpu() or one of {available}")
        return devices

    def _check_context(self, context: Any) -> list:
        warnings.warn("Estimator._check_context is renamed Estimator._check_devices", DeprecationWarning)
        return self._check_devices(context)

    @staticmethod
    def _check_batch_processor(processor: Any) -> Any:
        if processor is None:
            return BatchProcessor()
        if not (callable(getattr(processor, "fit_batch", None)) and callable(getattr(processor, "evaluate_batch", None))):
            raise ValueError("Estimator: a custom batch_processor must have fit_batch() and evaluate_batch() methods")
        return processor

    def _is_initialized(self) -> bool:
        for param in self.net.collect_params().values():
            try:
                param.list_device()
            except RuntimeError:
                return False
        return True

    def _initialize(self, initializer: Any) -> None:
        if not self._is_initialized():
            self.net.initialize(init=initializer, device=self.device) if initializer else \
                self.net.initialize(device=self.device)
        elif initializer:
            warnings.warn("Estimator: the network is already initialized, so initializer is ignored; use "
                          "net.initialize(init=..., force_reinit=True) to re-initialize it")

    def _check_trainer(self, trainer: Any) -> Trainer:
        if trainer is None:
            warnings.warn("Estimator: no trainer given, using SGD with learning rate 0.001")
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError(f"Estimator: trainer must be a gluon.Trainer, got {trainer!r}")
        return trainer

    def _add_default_training_metrics(self) -> None:
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            self._train_metrics = ([suggested] if suggested else []) + [LossMetric(type(self.loss).__name__)]
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self) -> None:
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            metric.name = (metric.name.replace("training", "validation") if "training" in metric.name
                           else "validation " + metric.name)

    @property
    def train_metrics(self) -> list:
        return self._train_metrics

    @property
    def val_metrics(self) -> list:
        return self._val_metrics

    def _get_data_and_label(self, batch: Any, device: list, batch_axis: int = 0) -> tuple[list, list]:
        return BatchProcessor()._get_data_and_label(batch, device, batch_axis)

    # -- loops ------------------------------------------------------------------------------
    def evaluate(self, val_data: Any, batch_axis: int = 0, event_handlers: Any = None) -> None:
        """Runs ``evaluate_batch`` over ``val_data``, updating ``val_metrics`` (reset first)."""
        _require_loader("evaluate", val_data)
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._with_defaults(event_handlers, self.val_metrics, [
            (MetricHandler, lambda: MetricHandler(metrics=self.val_metrics)),
            (LoggingHandler, lambda: LoggingHandler(metrics=self.val_metrics))])
        by_event = _categorize(handlers)
        for handler in by_event["epoch_begin"]:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in by_event["batch_begin"]:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in by_event["batch_end"]:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in by_event["epoch_end"]:
            handler.epoch_end(self)

    def fit(self, train_data: Any, val_data: Any = None, epochs: int | None = None, event_handlers: Any = None,
            batches: int | None = None, batch_axis: int = 0) -> None:
        """Trains for exactly one of ``epochs`` or ``batches``, validating on ``val_data`` every epoch."""
        _require_loader("fit", train_data)
        if (not epochs) == (not batches):
            raise ValueError("Estimator.fit: give exactly one of epochs or batches")
        self.max_epoch, self.max_batch, self.batch_axis = epochs, batches, batch_axis
        try:
            self._batches_per_epoch = len(train_data)
        except TypeError:
            self._batches_per_epoch = None
        defaults = [(StoppingHandler, lambda: StoppingHandler(self.max_epoch, self.max_batch)),
                    (GradientUpdateHandler, GradientUpdateHandler),
                    (MetricHandler, lambda: MetricHandler(metrics=self.train_metrics))]
        if val_data:
            defaults.append((ValidationHandler, lambda: ValidationHandler(val_data=val_data, eval_fn=self.evaluate)))
        defaults.append((LoggingHandler, lambda: LoggingHandler(metrics=self.train_metrics)))
        by_event = _categorize(self._with_defaults(event_handlers, self.train_metrics + self.val_metrics, defaults,
                                                   always=(StoppingHandler,)))
        for handler in by_event["train_begin"]:
            handler.train_begin(self)
        while True:
            for handler in by_event["epoch_begin"]:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in by_event["batch_begin"]:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                stops = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                         for handler in by_event["batch_end"]]
                if any(stops):
                    break
            if any([handler.epoch_end(self) for handler in by_event["epoch_end"]]):
                break
        for handler in by_event["train_end"]:
            handler.train_end(self)

    @staticmethod
    def _with_defaults(event_handlers: Any, known_metrics: list, defaults: list, always: tuple = ()) -> list:
        """The user's handlers plus each default whose kind the user did not supply, by priority."""
        handlers = _check_event_handlers(event_handlers)
        added = [make() for kind, make in defaults
                 if kind in always or not any(isinstance(h, kind) for h in handlers)]
        if handlers and added:
            known = set(known_metrics)
            for handler in handlers + added:
                _check_handler_metric_ref(handler, known)
        return sorted(handlers + added, key=lambda h: getattr(h, "priority", 0))


def _require_loader(method: str, data: Any) -> None:
    if not isinstance(data, DataLoader):
        raise ValueError(f"Estimator.{method} takes a gluon.data.DataLoader, got {type(data).__name__}; wrap "
                         "arrays in gluon.data.ArrayDataset and a DataLoader")


def _categorize(handlers: list) -> dict[str, list]:
    return {event: [h for h in handlers if isinstance(h, kind)] for event, kind in _EVENTS}
