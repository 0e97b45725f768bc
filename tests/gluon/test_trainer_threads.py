"""Training in one thread while other threads run inference on the same parameters.

``Trainer.step`` donates the old weight buffers to its compiled update; a buffer another
thread has just read must not be donated (XLA's "Buffer has been deleted or donated").
"""
import contextlib
import threading

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn
from mxjax.optimizer import _donation

STEPS = 60  # (enough that all four threaded tests failed in every run before the fix)


def _net(hybridize: bool) -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.Dense(4))
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    return net


def _train_with_readers(net, trainer, steps=STEPS, readers=2, train_fn=None):
    """Train ``steps`` steps in this thread while ``readers`` threads call ``net(x)``; returns the
    readers' errors and how many forwards they ran."""
    x = mx.np.array(onp.random.RandomState(0).rand(8, 10).astype("float32"))
    y = mx.np.array(onp.random.RandomState(1).rand(8, 4).astype("float32"))
    loss_fn = gluon.loss.L2Loss()
    net(x).wait_to_read()  # shapes known, programs compiled, before the threads start
    stop, errors, counts = threading.Event(), [], []

    def infer():
        n = 0
        try:
            while not stop.is_set():
                net(x).asnumpy()
                n += 1
        except Exception as err:  # noqa: BLE001  (what the test reports)
            errors.append(err)
        counts.append(n)

    threads = [threading.Thread(target=infer) for _ in range(readers)]
    for t in threads:
        t.start()
    try:
        for _ in range(steps):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            (train_fn or trainer.step)(x.shape[0])
        net(x).asnumpy()
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    return errors, sum(counts)


@pytest.mark.parametrize("hybridize", [True, False])
def test_inference_threads_while_training(hybridize):
    net = _net(hybridize)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    errors, forwards = _train_with_readers(net, trainer)
    assert not errors, repr(errors[0])
    assert forwards > 0


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_allreduce_then_update_path(optimizer):
    net = _net(True)
    trainer = gluon.Trainer(net.collect_params(), optimizer, {"learning_rate": 0.01})

    def step(batch_size):
        trainer.allreduce_grads()
        trainer.update(batch_size)
    errors, _ = _train_with_readers(net, trainer, steps=STEPS, train_fn=step)
    assert not errors, repr(errors[0])


def test_training_matches_single_threaded_result():
    """Readers change nothing in what is learned (the non-donating update computes the same)."""
    results = []
    for readers in (0, 2):
        mx.random.seed(3)
        net = _net(True)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        errors, _ = _train_with_readers(net, trainer, steps=20, readers=readers)
        assert not errors
        results.append([p.data().asnumpy() for p in net.collect_params().values()])
    for a, b in zip(*results):
        onp.testing.assert_allclose(a, b, rtol=1e-6)


def test_single_thread_keeps_donating():
    net = _net(True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    x = mx.np.ones((2, 10))
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    weights = [p.data() for p in net.collect_params().values()]
    assert not _donation.shared(weights)
    old = weights[0].to_jax()
    trainer.step(2)
    assert old.is_deleted()  # donated: the single-threaded step keeps its speed


@contextlib.contextmanager
def _reader_alive(net, x):
    """Another thread has run ``net(x)`` and stays alive for the scope."""
    ready, release = threading.Event(), threading.Event()

    def reader():
        net(x).asnumpy()
        ready.set()
        release.wait(10)

    t = threading.Thread(target=reader)
    t.start()
    ready.wait(10)
    try:
        yield
    finally:
        release.set()
        t.join(10)


def test_reader_thread_stops_donation_until_it_ends():
    net = _net(False)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    x = mx.np.ones((2, 10))
    net(x)
    weights = [p.data() for p in net.collect_params().values()]
    with _reader_alive(net, x):
        assert _donation.shared(weights)
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        old = weights[0].to_jax()
        trainer.step(2)
        assert not old.is_deleted()  # another live thread may still read it
        assert onp.isfinite(onp.asarray(old)).all()  # still readable
    assert not _donation.shared(weights)  # the reader ended: donation resumes


def test_updater_used_directly_with_reader_thread():
    """An Updater applied to a Parameter's arrays sees the other readers as well."""
    net = _net(False)
    x = mx.np.ones((2, 10))
    net(x)
    params = list(net.collect_params().values())
    updater = mx.optimizer.get_updater(mx.optimizer.create("sgd", learning_rate=0.1))
    with _reader_alive(net, x):
        weight = params[0].data()
        old = weight.to_jax()
        expected = onp.asarray(old) - 0.1 * 1.0
        updater(0, mx.np.ones(weight.shape), weight)
        assert not old.is_deleted()
        onp.testing.assert_allclose(weight.asnumpy(), expected, rtol=1e-6)


def test_dataloader_threads_do_not_stop_donation():
    """A DataLoader's worker threads read no parameters: training from it still donates."""
    net = _net(True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    data = gluon.data.ArrayDataset(onp.ones((8, 10), "float32"), onp.zeros((8, 4), "float32"))
    loader = gluon.data.DataLoader(data, batch_size=4, num_workers=2, thread_pool=True)
    net(mx.np.ones((1, 10)))
    weight = next(iter(net.collect_params().values())).data()
    donated = []
    for x, y in loader:
        with autograd.record():
            loss = ((net(x) - y) ** 2).sum()
        loss.backward()
        old = weight.to_jax()
        trainer.step(4)
        donated.append(old.is_deleted())
    assert donated == [True, True]


@pytest.mark.parametrize("hybridize", [False, True])
def test_first_forwards_from_many_threads_initialize_each_parameter_once(hybridize, threads_switch_often):
    """Threads making a network's first forward together (a served model, deferred shapes): each
    parameter is initialized once, so every thread's first output is what the network computes."""
    net = _net(hybridize)
    inputs = [mx.np.array(onp.random.RandomState(i).rand(3, 5).astype("float32")) for i in range(6)]
    outputs, errors = {}, []

    def first_forward(i):
        try:
            outputs[i] = net(inputs[i]).asnumpy()
        except Exception as err:  # (reported by the test's thread)
            errors.append(err)
    threads = [threading.Thread(target=first_forward, args=(i,), daemon=True) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors[0]
    for i, x in enumerate(inputs):
        onp.testing.assert_allclose(outputs[i], net(x).asnumpy(), rtol=1e-6, atol=1e-7)


def _step_losses_read_by(net, trainer, x, y, steps, reader_thread: bool):
    """Train ``steps`` steps; each step's loss and output are read by another thread (when
    ``reader_thread``), possibly between ``backward`` and ``Trainer.step``.  Returns the losses."""
    import queue
    loss_fn, pending, losses, errors = gluon.loss.L2Loss(), queue.Queue(), {}, []

    def reader():
        while True:
            item = pending.get()
            if item is None:
                return
            i, loss, out = item
            try:
                losses[i] = float(loss.asnumpy().sum())
                out.asnumpy()
            except Exception as err:  # (reported by the test's thread)
                errors.append(err)
    thread = threading.Thread(target=reader, daemon=True) if reader_thread else None
    if thread:
        thread.start()
    for i in range(steps):
        with autograd.record():
            out = net(x)
            loss = loss_fn(out, y)
        loss.backward()
        if thread:
            pending.put((i, loss, out))
        else:
            losses[i] = float(loss.asnumpy().sum())
        trainer.step(x.shape[0])
    if thread:
        pending.put(None)
        thread.join(60)
    assert not errors, repr(errors[0])
    return [losses[i] for i in range(steps)]


@pytest.mark.parametrize("hybridize", [False, True])
def test_loss_read_by_another_thread_during_the_step(hybridize, threads_switch_often):
    """Another thread reading a step's loss may run its (pending) backward before ``Trainer.step``
    fuses the update into it: the update then applies to the gradients that run made, and training
    learns what it learns single-threaded."""
    x = mx.np.array(onp.random.RandomState(0).rand(8, 10).astype("float32"))
    y = mx.np.array(onp.random.RandomState(1).rand(8, 4).astype("float32"))
    results = []
    for reader_thread in (False, True):
        mx.random.seed(5)
        net = _net(hybridize)
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
        losses = _step_losses_read_by(net, trainer, x, y, STEPS, reader_thread)
        results.append((losses, [p.data().asnumpy() for p in net.collect_params().values()]))
    onp.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for a, b in zip(results[0][1], results[1][1]):
        onp.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_fused_update_of_a_backward_another_thread_ran():
    """``autograd.pending_backward`` found the backward pending; another thread's read runs it
    before the optimizer's update: ``update_all`` updates with the gradients that run computed."""
    net = _net(True)  # (a hybridized block's backward is deferred from its first step)
    x = mx.np.array(onp.random.RandomState(2).rand(4, 10).astype("float32"))
    net(x)  # (shapes known: the parameters exist before the recorded step)
    params = list(net.collect_params().values())
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    grads = [p.grad() for p in params]
    pending = autograd.pending_backward(grads)
    assert pending is not None  # (else the test tests nothing)
    olds = [p.data().asnumpy() for p in params]
    thread = threading.Thread(target=loss.asnumpy)
    thread.start()
    thread.join(60)
    opt = mx.optimizer.SGD(learning_rate=0.1)
    n = len(params)
    new_weights, _ = opt.update_all([p.data().to_jax() for p in params], grads, [None] * n,
                                    [0.1] * n, [0.0] * n, pending=pending)
    for old, grad, new in zip(olds, grads, new_weights):
        onp.testing.assert_allclose(onp.asarray(new), old - 0.1 * grad.asnumpy(), rtol=1e-5, atol=1e-6)
