"""gluon.contrib.estimator: fit/evaluate vs a hand-written loop, stopping, checkpoints, logging."""
import io
import logging
import os

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon.contrib.estimator import (BatchEnd, CheckpointHandler, EarlyStoppingHandler, Estimator,
                                           LoggingHandler, TrainBegin)
from mxjax.gluon.data import ArrayDataset, DataLoader


def _blobs(n=240, seed=0):
    rng = onp.random.RandomState(seed)
    centers = onp.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 3.0]], dtype="float32")
    labels = rng.randint(0, 3, size=n)
    data = centers[labels] + rng.normal(scale=0.6, size=(n, 2)).astype("float32")
    return data.astype("float32"), labels.astype("float32")


def _net(seed=1):
    mx.random.seed(seed)
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(16, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net(mx.np.zeros((1, 2)))
    return net


def _loader(data, labels, batch_size=32):
    return DataLoader(ArrayDataset(data, labels), batch_size=batch_size)


def _quiet(est):
    est.logger.handlers = [logging.NullHandler()]
    return est


def test_fit_matches_a_hand_written_training_loop():
    data, labels = _blobs()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    manual = _net()
    trainer = gluon.Trainer(manual.collect_params(), "sgd", {"learning_rate": 0.1})
    for start in range(0, len(data), 32):
        x, y = mx.np.array(data[start:start + 32]), mx.np.array(labels[start:start + 32])
        with autograd.record():
            loss = loss_fn(manual(x), y)
        loss.backward()
        trainer.step(x.shape[0])

    net = _net()
    est = _quiet(Estimator(net, loss_fn, trainer=gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})))
    est.fit(_loader(data, labels), epochs=1)
    for (name, ours), theirs in zip(net.collect_params().items(), manual.collect_params().values()):
        onp.testing.assert_allclose(ours.data().asnumpy(), theirs.data().asnumpy(), rtol=1e-5, atol=1e-6,
                                    err_msg=name)


def test_fit_reaches_accuracy_and_default_metrics_are_named_like_mxnet():
    data, labels = _blobs()
    val_data, val_labels = _blobs(90, seed=5)
    net = _net()
    est = _quiet(Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                           trainer=gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.05})))
    assert [m.name for m in est.train_metrics] == ["training accuracy", "training SoftmaxCrossEntropyLoss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy", "validation SoftmaxCrossEntropyLoss"]
    est.fit(_loader(data, labels), val_data=_loader(val_data, val_labels), epochs=6)
    assert est.val_metrics[0].get()[1] >= 0.95
    predicted = net(mx.np.array(val_data)).asnumpy().argmax(axis=1)
    assert est.val_metrics[0].get()[1] == pytest.approx((predicted == val_labels).mean())


class _CountBatches(BatchEnd):
    def __init__(self):
        self.count = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.count += 1


def test_fit_by_batches_stops_mid_epoch():
    data, labels = _blobs()
    counter = _CountBatches()
    est = _quiet(Estimator(_net(), gluon.loss.SoftmaxCrossEntropyLoss()))
    est.fit(_loader(data, labels), batches=11, event_handlers=[counter])
    assert counter.count == 11


def test_early_stopping_when_the_monitored_loss_stops_improving():
    data, labels = _blobs()
    net = _net()
    est = _quiet(Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                           trainer=gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.0})))
    loss_metric = est.train_metrics[1]
    stopper = EarlyStoppingHandler(monitor=loss_metric, patience=2)  # 'auto' -> min for a loss
    counter = _CountBatches()
    est.fit(_loader(data, labels), epochs=10, event_handlers=[stopper, counter])
    assert stopper.stop_training and stopper.stopped_epoch == 2
    assert counter.count == 3 * 8  # three epochs of eight batches


def test_checkpoints_rotate_and_training_resumes(tmp_path):
    data, labels = _blobs()
    net = _net()
    net.hybridize()
    est = _quiet(Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(),
                           trainer=gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})))
    est.fit(_loader(data, labels), epochs=3,
            event_handlers=[CheckpointHandler(str(tmp_path), "m", max_checkpoints=2)])
    names = sorted(os.listdir(tmp_path))
    assert names == ["m-epoch1batch16.params", "m-epoch1batch16.states", "m-epoch2batch24.params",
                     "m-epoch2batch24.states", "m-symbol.json"]
    saved = {k: v.data().asnumpy() for k, v in net.collect_params().items()}

    resumed = _net(seed=7)
    seen = {}

    class _Snapshot(TrainBegin):
        priority = 10  # after the checkpoint handler has loaded the parameters

        def train_begin(self, estimator, *args, **kwargs):
            seen.update({k: v.data().asnumpy() for k, v in estimator.net.collect_params().items()})
            seen["max_epoch"] = estimator.max_epoch

    est2 = _quiet(Estimator(resumed, gluon.loss.SoftmaxCrossEntropyLoss(),
                            trainer=gluon.Trainer(resumed.collect_params(), "adam", {"learning_rate": 0.01})))
    est2.fit(_loader(data, labels), epochs=5, event_handlers=[
        CheckpointHandler(str(tmp_path), "m", max_checkpoints=2, resume_from_checkpoint=True), _Snapshot()])
    assert seen.pop("max_epoch") == 2
    for name, value in saved.items():
        onp.testing.assert_array_equal(seen[name], value)
    assert "m-epoch4batch40.params" in os.listdir(tmp_path)


def test_logging_shows_a_progress_bar_only_when_asked_or_on_a_terminal(capsys):
    data, labels = _blobs(64)
    for bar in (True, False):
        est = Estimator(_net(), gluon.loss.SoftmaxCrossEntropyLoss())
        stream = io.StringIO()
        est.logger.handlers = [logging.StreamHandler(stream)]
        est.fit(_loader(data, labels), epochs=1, event_handlers=[LoggingHandler(metrics=est.train_metrics,
                                                                               progress_bar=bar)])
        out = capsys.readouterr().out
        log = stream.getvalue()
        assert "[Epoch 0] Finished in" in log and "training accuracy" in log and "samples/s" in log
        assert ("samples/s" in out and "2/2" in out) if bar else out == ""


def test_bad_arguments_raise_value_errors():
    data, labels = _blobs(32)
    est = _quiet(Estimator(_net(), gluon.loss.SoftmaxCrossEntropyLoss()))
    with pytest.raises(ValueError, match="DataLoader"):
        est.fit([(data, labels)], epochs=1)
    with pytest.raises(ValueError, match="exactly one of epochs or batches"):
        est.fit(_loader(data, labels), epochs=1, batches=2)
    with pytest.raises(ValueError, match="gluon.loss.Loss"):
        Estimator(_net(), loss=lambda a, b: a)
    with pytest.raises(ValueError, match="not one of"):
        est.fit(_loader(data, labels), epochs=1,
                event_handlers=[EarlyStoppingHandler(monitor=mx.gluon.metric.Accuracy())])
    with pytest.raises(ValueError, match="log_interval"):
        LoggingHandler(log_interval="batch")


def test_an_initialized_network_trains_where_its_parameters_are(monkeypatch):
    """Without device=, an initialized network keeps its parameters' device (MXNet would take
    gpu(0) on a machine with a GPU, and fail against parameters on the CPU); a network not
    initialized yet goes to gpu(0) there, as in MXNet.  The machine's one GPU is simulated."""
    import importlib
    monkeypatch.setattr(importlib.import_module("mxjax.gluon.contrib.estimator.estimator"), "num_gpus", lambda: 1)
    est = _quiet(Estimator(_net(), gluon.loss.SoftmaxCrossEntropyLoss()))
    assert est.device == [mx.cpu(0)]
    assert Estimator._check_devices(None) == [mx.gpu(0)]  # what a network not initialized gets
