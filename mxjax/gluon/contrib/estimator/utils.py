"""Argument checks shared by the Estimator and its handlers."""
from __future__ import annotations

from typing import Any

from ...loss import SoftmaxCrossEntropyLoss
from ...metric import Accuracy, CompositeEvalMetric, EvalMetric


def _check_metrics(metrics: Any) -> list:
    """One metric, a composite or a list of metrics -> a flat list of EvalMetric."""
    if isinstance(metrics, CompositeEvalMetric):
        return [leaf for child in metrics.metrics for leaf in _check_metrics(child)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    bad = [m for m in metrics if not isinstance(m, EvalMetric)]
    if bad:
        raise ValueError(f"metrics must be an EvalMetric or a list of EvalMetric (gluon.metric), got {bad!r}")
    return metrics


def _suggest_metric_for_loss(loss: Any) -> EvalMetric | None:
    """The metric a loss implies when the user names none (accuracy for softmax cross-entropy)."""
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None


def _check_handler_metric_ref(handler: Any, known: set) -> None:
    """A handler that mixes with the defaults must watch the estimator's own metric objects."""
    for attr in ("metrics", "monitor"):
        ref = getattr(handler, attr, None)
        for metric in ref if isinstance(ref, list) else [ref] if ref is not None else []:
            if metric not in known:
                raise ValueError(
                    f"event handler {type(handler).__name__} refers to metric {metric}, which is not one of "
                    "estimator.train_metrics or estimator.val_metrics; pass those objects instead")
