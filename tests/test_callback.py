"""mx.callback: Speedometer, ProgressBar, metric logging and do_checkpoint, with MXNet's log lines."""
import logging
import os

import pytest

import mxjax as mx
from mxjax.callback import (LogValidationMetricsCallback, ProgressBar, Speedometer, do_checkpoint,
                            log_train_metric)
from mxjax.model import BatchEndParam


class _Metric:
    """Anything with get_name_value()/reset() works, as in MXNet."""

    def __init__(self):
        self.resets = 0

    def get_name_value(self):
        return [("accuracy", 0.5), ("loss", 1.25)]

    def reset(self):
        self.resets += 1


def _param(nbatch, metric=None, epoch=0):
    return BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=metric, locals=None)


@pytest.fixture
def log(caplog):
    caplog.set_level(logging.INFO)
    return caplog


def test_speedometer_logs_every_frequent_batches(log):
    metric = _Metric()
    speed = Speedometer(batch_size=4, frequent=2)
    for nbatch in range(5):
        speed(_param(nbatch, metric))
    lines = [r.getMessage() for r in log.records]
    assert len(lines) == 2 and metric.resets == 2
    assert lines[0].startswith("Epoch[0] Batch [0-2]\tSpeed: ") and lines[0].endswith(
        "samples/sec\taccuracy=0.500000\tloss=1.250000")
    assert lines[1].startswith("Epoch[0] Batch [2-4]")


def test_speedometer_without_reset_and_without_metric(log):
    metric = _Metric()
    speed = Speedometer(batch_size=1, frequent=1, auto_reset=False)
    speed(_param(0, metric))
    speed(_param(1, metric))
    plain = Speedometer(batch_size=1, frequent=1)
    plain(_param(0))
    plain(_param(1))
    lines = [r.getMessage() for r in log.records]
    assert lines[0].startswith("Epoch[0] Batch [0-1]\tSpeed:") and metric.resets == 0
    assert lines[1].startswith("Iter[0] Batch [1]\tSpeed:")


def test_speedometer_restarts_on_a_new_epoch(log):
    speed = Speedometer(batch_size=1, frequent=1)
    speed(_param(0))
    speed(_param(1))
    speed(_param(0, epoch=1))  # count went down: a new epoch, timer restarts, nothing logged
    assert len(log.records) == 1


def test_progress_bar(log):
    ProgressBar(total=4, length=8)(_param(2))
    assert log.records[0].getMessage() == "[====----] 50%\r"


def test_metric_loggers(log):
    metric = _Metric()
    log_train_metric(period=2, auto_reset=True)(_param(4, metric, epoch=3))
    log_train_metric(period=2)(_param(3, metric))
    LogValidationMetricsCallback()(_param(0, metric, epoch=3))
    LogValidationMetricsCallback()(_param(0, None))
    assert [r.getMessage() for r in log.records] == [
        "Iter[3] Batch[4] Train-accuracy=0.500000", "Iter[3] Batch[4] Train-loss=1.250000",
        "Epoch[3] Validation-accuracy=0.500000", "Epoch[3] Validation-loss=1.250000"]
    assert metric.resets == 1


def test_do_checkpoint_saves_every_period(tmp_path):
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    args = {"fc_weight": mx.nd.ones((2, 3)), "fc_bias": mx.nd.zeros((2,))}
    prefix = str(tmp_path / "ck")
    callback = do_checkpoint(prefix, period=2)
    for epoch in range(4):
        callback(epoch, net, args, {})
    assert sorted(os.listdir(tmp_path)) == ["ck-0002.params", "ck-0004.params", "ck-symbol.json"]
    _, loaded, aux = mx.model.load_checkpoint(prefix, 4)
    assert sorted(loaded) == ["fc_bias", "fc_weight"] and aux == {}
