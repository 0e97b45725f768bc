"""gluon.data.DataLoader: batches, ordering and sampling against NumPy-built expectations;
worker processes and threads; errors, dead workers, timeouts and clean-up."""
import gc
import os
import signal
import threading
import time

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon import data as gdata
from mxjax.gluon.data import _worker_pool, _zygote
from mxjax.gluon.data import dataloader as dl_module

N, D = 23, 3
X = onp.arange(N * D, dtype=onp.float32).reshape(N, D) / 7.0
Y = onp.arange(N, dtype=onp.int64) * 10


def _expected(order, batch_size, last_batch='keep'):
    order = list(order)
    stop = len(order) if last_batch == 'keep' else len(order) // batch_size * batch_size
    return [order[i:i + batch_size] for i in range(0, stop, batch_size)]


def _check_batches(batches, index_batches):
    assert len(batches) == len(index_batches)
    for batch, idx in zip(batches, index_batches):
        assert isinstance(batch, list) and len(batch) == 2
        data, label = batch
        assert isinstance(data, mx.np.ndarray) and isinstance(label, mx.np.ndarray)
        assert data.dtype == onp.float32 and label.dtype == onp.int64
        onp.testing.assert_array_equal(data.asnumpy(), X[idx])
        onp.testing.assert_array_equal(label.asnumpy(), Y[idx])


def _shm_entries():
    return set(os.listdir('/dev/shm')) if os.path.isdir('/dev/shm') else set()


def _open_fds():
    return len(os.listdir('/proc/self/fd'))


def _alive(pid):
    return _worker_pool._pid_alive(pid)


# datasets whose items misbehave on purpose (top-level: they are pickled by reference or value)
class _Failing(gdata.Dataset):
    def __init__(self, bad, action):
        self.bad, self.action = bad, action

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.bad:
            if self.action == 'raise':
                raise ValueError(f"broken sample {i}")
            if self.action == 'exit':
                os._exit(3)
            if self.action == 'kill':
                os.kill(os.getpid(), signal.SIGKILL)
            if self.action == 'sleep':
                time.sleep(30)
        return onp.full((2,), i, dtype=onp.float32)


@pytest.fixture(scope='module')
def dataset():
    return gdata.ArrayDataset(X, Y)


@pytest.mark.parametrize('workers,threads', [(0, False), (2, False), (4, False), (2, True), (4, True)])
def test_batches_match_numpy_in_order(dataset, workers, threads):
    loader = gdata.DataLoader(dataset, batch_size=5, num_workers=workers, thread_pool=threads)
    assert len(loader) == 5
    for _ in range(2):  # a second epoch reuses the workers
        _check_batches(list(loader), _expected(range(N), 5))
    loader.close()
    if threads:  # closed loaders start new workers when iterated again
        _check_batches(list(loader), _expected(range(N), 5))
        loader.close()


def test_order_kept_when_workers_finish_out_of_order():
    # early samples are slow, so later batches finish first; sampler order must still win
    ds = gdata.SimpleDataset(list(range(16))).transform(
        lambda i: (time.sleep(0.05 * (i < 4)), i)[1])
    loader = gdata.DataLoader(ds, batch_size=2, num_workers=3, prefetch=6)
    got = [b.asnumpy().tolist() for b in loader]
    assert got == _expected(range(16), 2)
    loader.close()


@pytest.mark.parametrize('last_batch,sizes', [('keep', [5, 5, 5, 5, 3]), ('discard', [5, 5, 5, 5])])
def test_last_batch_keep_discard(dataset, last_batch, sizes):
    for workers in (0, 2):
        loader = gdata.DataLoader(dataset, batch_size=5, last_batch=last_batch, num_workers=workers)
        batches = list(loader)
        assert [b[0].shape[0] for b in batches] == sizes and len(loader) == len(sizes)
        _check_batches(batches, _expected(range(N), 5, last_batch))
        loader.close()


def test_last_batch_rollover(dataset):
    loader = gdata.DataLoader(dataset, batch_size=5, last_batch='rollover', num_workers=2)
    first = list(loader)
    _check_batches(first, _expected(range(N), 5, 'discard'))
    second = list(loader)  # the 3 leftovers (20, 21, 22) open the next epoch
    order = [20, 21, 22] + list(range(N))
    _check_batches(second, _expected(order, 5, 'discard')[:len(second)])
    assert len(second) == (3 + N) // 5
    loader.close()
    expected_len = len(loader)  # (1 leftover + 23) // 5
    third = list(loader)  # after close(), a fresh set of worker processes
    assert len(third) == expected_len == 4
    _check_batches(third, _expected([22] + list(range(N)), 5, 'discard'))


@pytest.mark.parametrize('workers', [0, 2])
def test_shuffle_follows_numpy_rng(dataset, workers):
    loader = gdata.DataLoader(dataset, batch_size=4, shuffle=True, num_workers=workers)
    onp.random.seed(123)
    got = list(loader)
    onp.random.seed(123)
    order = onp.arange(N)
    onp.random.shuffle(order)
    _check_batches(got, _expected(order, 4))
    onp.random.seed(123)
    again = list(loader)
    for a, b in zip(got, again):
        onp.testing.assert_array_equal(a[0].asnumpy(), b[0].asnumpy())
    loader.close()


@pytest.mark.parametrize('workers,threads', [(0, False), (2, False), (2, True)])
def test_custom_batchify_fn(workers, threads):
    def batchify(samples):
        data = onp.stack([s[0] for s in samples])
        return {'sum': mx.np.array(data.sum(axis=1)), 'labels': [int(s[1]) for s in samples],
                'raw': data}

    loader = gdata.DataLoader(gdata.ArrayDataset(X, Y), batch_size=6, batchify_fn=batchify,
                              num_workers=workers, thread_pool=threads)
    for batch, idx in zip(loader, _expected(range(N), 6)):
        assert isinstance(batch['sum'], mx.np.ndarray)
        onp.testing.assert_allclose(batch['sum'].asnumpy(), X[idx].sum(axis=1), rtol=1e-6)
        assert batch['labels'] == Y[idx].tolist()
        assert isinstance(batch['raw'], onp.ndarray)
        onp.testing.assert_array_equal(batch['raw'], X[idx])
    loader.close()


def test_batch_sampler_and_argument_checks(dataset):
    index_batches = [[3, 1], [0, 7, 8], [22]]
    for workers in (0, 2):
        loader = gdata.DataLoader(dataset, batch_sampler=index_batches, num_workers=workers)
        assert len(loader) == 3
        _check_batches(list(loader), index_batches)
        loader.close()
    with pytest.raises(ValueError, match='batch_sampler'):
        gdata.DataLoader(dataset, batch_size=2, batch_sampler=index_batches)
    with pytest.raises(ValueError, match='batch_sampler'):
        gdata.DataLoader(dataset, batch_sampler=index_batches, last_batch='keep')
    with pytest.raises(ValueError, match='batch_size must be specified'):
        gdata.DataLoader(dataset)
    with pytest.raises(ValueError, match='shuffle'):
        gdata.DataLoader(dataset, batch_size=2, shuffle=True, sampler=gdata.SequentialSampler(N))
    with pytest.raises(AssertionError, match='timeout'):
        gdata.DataLoader(dataset, batch_size=2, timeout=0)


def test_defaults_pin_memory_and_nopython(dataset):
    loader = gdata.DataLoader(dataset, batch_size=4, num_workers=3, pin_memory=True,
                              try_nopython=True, thread_pool=True)
    assert loader._prefetch == 6
    assert gdata.DataLoader(dataset, batch_size=4, num_workers=-2)._num_workers == 0
    _check_batches(list(loader), _expected(range(N), 4))
    plain = gdata.DataLoader(dataset, batch_size=4, pin_memory=True)
    _check_batches(list(plain), _expected(range(N), 4))
    assert dl_module.default_batchify_fn is gdata.batchify.default_batchify_fn
    assert dl_module.default_mp_batchify_fn is gdata.batchify.default_mp_batchify_fn
    assert dl_module.__all__ == ['DataLoader']
    loader.close()


def test_python_scalars_and_legacy_nd_arrays():
    samples = [(float(i) / 2, i) for i in range(7)]
    with mx.util.np_array(False), mx.util.np_shape(False):
        for workers, threads in ((0, False), (2, False), (2, True)):
            loader = gdata.DataLoader(gdata.SimpleDataset(samples), batch_size=3, num_workers=workers,
                                      thread_pool=threads)
            batches = list(loader)
            assert [type(b[0]) for b in batches] == [mx.nd.NDArray] * 3
            onp.testing.assert_array_equal(batches[2][0].asnumpy(), onp.array([3.0]))
            assert batches[0][0].dtype == onp.float64 and batches[0][1].dtype == onp.int64
            onp.testing.assert_array_equal(batches[1][1].asnumpy(), onp.array([3, 4, 5]))
            loader.close()


def test_worker_runs_mx_ops_and_lambdas():
    # a transform that calls mx.np ops and an mx HybridBlock-style op inside the worker
    ds = gdata.SimpleDataset([onp.full((4, 4, 3), i, dtype=onp.uint8) for i in range(8)])
    ds = ds.transform(lambda img: mx.np.array(img, dtype='float32').transpose(2, 0, 1) * 2 + 1)
    loader = gdata.DataLoader(ds, batch_size=4, num_workers=2)
    batches = list(loader)
    assert [b.shape for b in batches] == [(4, 3, 4, 4)] * 2
    expected = onp.arange(8, dtype=onp.float32)[:, None, None, None] * 2 + 1
    onp.testing.assert_array_equal(onp.concatenate([b.asnumpy() for b in batches]),
                                   onp.broadcast_to(expected, (8, 3, 4, 4)))
    loader.close()


@pytest.mark.parametrize('threads', [False, True])
def test_worker_exception_reaches_consumer_with_traceback(threads):
    loader = gdata.DataLoader(_Failing(5, 'raise'), batch_size=2, num_workers=2, thread_pool=threads)
    with pytest.raises(ValueError, match='broken sample 5') as info:
        list(loader)
    text = ''.join(__import__('traceback').format_exception(info.value))
    assert '__getitem__' in text and 'raise ValueError' in text
    if not threads:
        assert 'DataLoader worker' in text
    loader.close()


@pytest.mark.parametrize('action', ['exit', 'kill'])
def test_dead_worker_reported_not_hung(action):
    loader = gdata.DataLoader(_Failing(7, action), batch_size=2, num_workers=2, timeout=20)
    start = time.monotonic()
    with pytest.raises(MXNetError, match=r'DataLoader worker \d \(pid \d+\) exited unexpectedly') as info:
        list(loader)
    assert time.monotonic() - start < 15
    assert ('exit code 3' if action == 'exit' else 'SIGKILL') in str(info.value)
    loader.close()


def test_timeout_raises_and_stops_workers():
    loader = gdata.DataLoader(_Failing(3, 'sleep'), batch_size=2, num_workers=2, timeout=1.5)
    start = time.monotonic()
    with pytest.raises(TimeoutError, match='timeout=1.5') as info:
        list(loader)
    assert isinstance(info.value, MXNetError)
    assert time.monotonic() - start < 10
    pids = loader._pool_box[0].pids
    assert len(pids) == 2
    loader.close()
    assert not any(_alive(p) for p in pids)


def test_thread_timeout():
    loader = gdata.DataLoader(
        gdata.SimpleDataset([0, 1]).transform(lambda i: (time.sleep(1.0), i)[1]),
        batch_size=1, num_workers=1, thread_pool=True, timeout=0.2)
    with pytest.raises(TimeoutError):
        list(loader)
    loader.close()


def test_early_break_and_delete_leave_nothing_behind(dataset):
    _zygote.server()  # the per-process fork server (and its socket) is not per loader
    shm_before, fds_before = _shm_entries(), _open_fds()
    loader = gdata.DataLoader(dataset, batch_size=2, num_workers=2, prefetch=6)
    for i, _ in enumerate(loader):
        if i == 1:
            break
    gc.collect()
    assert _shm_entries() == shm_before
    pids = loader._pool_box[0].pids
    assert all(_alive(p) for p in pids)
    _check_batches(list(loader), _expected(range(N), 2))  # the next epoch is unaffected
    del loader
    gc.collect()
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
    assert _shm_entries() == shm_before
    assert _open_fds() <= fds_before


def _receiver_threads():
    return sum(t.name == 'mxjax-ThreadedIter' for t in threading.enumerate())


@pytest.mark.parametrize('threads', [False, True])
def test_abandoned_iterator_stops_its_receiving_thread(dataset, threads):
    before = _receiver_threads()
    loader = gdata.DataLoader(dataset, batch_size=2, num_workers=2, thread_pool=threads)
    it = iter(loader)
    next(it)
    assert _receiver_threads() == before + 1
    del it
    gc.collect()
    deadline = time.monotonic() + 5
    while _receiver_threads() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _receiver_threads() == before
    _check_batches(list(loader), _expected(range(N), 2))
    assert _receiver_threads() == before  # an epoch run to its end leaves no thread either
    loader.close()


class _RecordingSampler(gdata.BatchSampler):
    """Notes the thread that draws each index list."""

    def __init__(self, *args):
        super().__init__(*args)
        self.threads = []

    def __iter__(self):
        for indices in super().__iter__():
            self.threads.append(threading.current_thread())
            yield indices


def test_sampler_runs_on_the_training_thread(dataset):
    sampler = _RecordingSampler(gdata.RandomSampler(N), 4, 'keep')
    onp.random.seed(5)
    loader = gdata.DataLoader(dataset, batch_sampler=sampler, num_workers=2)
    batches = list(loader)
    assert set(sampler.threads) == {threading.current_thread()}
    onp.random.seed(5)
    order = [i for idx in gdata.BatchSampler(gdata.RandomSampler(N), 4, 'keep') for i in idx]
    _check_batches(batches, _expected(order, 4))
    loader.close()


def test_two_iterators_over_one_pool_interleave(dataset):
    loader = gdata.DataLoader(dataset, batch_size=3, num_workers=2)
    first, second = iter(loader), iter(loader)
    got_first, got_second = [], []
    for a, b in zip(first, second):
        got_first.append(a)
        got_second.append(b)
    _check_batches(got_first, _expected(range(N), 3))
    _check_batches(got_second, _expected(range(N), 3))
    loader.close()


def test_close_during_an_epoch_raises_instead_of_hanging(dataset):
    loader = gdata.DataLoader(dataset, batch_size=2, num_workers=2, prefetch=2)
    it = iter(loader)
    next(it)
    loader.close()
    start = time.monotonic()
    with pytest.raises(MXNetError, match='worker pool'):
        for _ in it:
            pass
    assert time.monotonic() - start < 10
    _check_batches(list(loader), _expected(range(N), 2))  # the next epoch starts new workers
    loader.close()


class _NoUnpickle(gdata.Dataset):
    def __init__(self):
        self.size = 4

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i

    def __setstate__(self, state):
        raise RuntimeError("this dataset refuses to load in a worker")


def test_dataset_that_fails_to_load_in_worker():
    with pytest.raises(MXNetError, match='could not rebuild the dataset.*refuses to load'):
        list(gdata.DataLoader(_NoUnpickle(), batch_size=2, num_workers=2))


def test_gluon_transforms_in_workers_of_a_temporary_loader():
    from mxjax.gluon.data.vision import transforms
    chain = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
    images = [onp.full((4, 5, 3), 10 * i, dtype=onp.uint8) for i in range(6)]
    ds = gdata.SimpleDataset(images).transform(lambda img: chain(mx.np.array(img)))
    # the loader is a temporary: its workers must live as long as the iteration
    got = [b.asnumpy() for b in gdata.DataLoader(ds, batch_size=3, num_workers=2)]
    expected = (onp.stack(images).transpose(0, 3, 1, 2).astype(onp.float32) / 255 - 0.5) / 0.25
    onp.testing.assert_allclose(onp.concatenate(got), expected, rtol=1e-5, atol=1e-6)


def test_unpicklable_dataset_error_is_clear():
    import threading

    class Holder(gdata.Dataset):
        def __init__(self):
            self.lock = threading.Lock()

        def __len__(self):
            return 2

        def __getitem__(self, i):
            return i

    with pytest.raises(MXNetError, match='cannot send the dataset Holder'):
        gdata.DataLoader(Holder(), batch_size=1, num_workers=2)
    assert len(list(gdata.DataLoader(Holder(), batch_size=1, num_workers=2, thread_pool=True))) == 2
