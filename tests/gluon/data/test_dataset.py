"""gluon.data datasets: views, ArrayDataset element types and RecordFileDataset over RecordIO."""
import os
import pickle

import numpy as np
import pytest

import mxjax as mx
import mxjax.recordio as recordio
from mxjax.base import MXNetError
from mxjax.gluon import data as gdata


def test_public_names_match_mxnet():
    assert gdata.dataset.__all__ == ['Dataset', 'SimpleDataset', 'ArrayDataset', 'RecordFileDataset']
    for name in gdata.dataset.__all__:
        assert getattr(gdata, name) is getattr(gdata.dataset, name)


def test_simple_dataset_and_base_class():
    d = gdata.SimpleDataset([3, 1, 4])
    assert len(d) == 3 and d[2] == 4 and list(d) == [3, 1, 4]
    with pytest.raises(NotImplementedError):
        gdata.Dataset()[0]
    with pytest.raises(NotImplementedError):
        len(gdata.Dataset())


def test_transform_and_transform_first():
    pairs = gdata.SimpleDataset([(1, 2), (3, 4)])
    assert list(pairs.transform(lambda a, b: a + b)) == [3, 7]
    assert list(pairs.transform_first(lambda a: a * 10)) == [(10, 2), (30, 4)]
    assert list(gdata.SimpleDataset([1, 2]).transform_first(lambda a: -a)) == [-1, -2]
    calls = []

    def fn(x):
        calls.append(x)
        return x * 2
    lazy = gdata.SimpleDataset([1, 2, 3]).transform(fn)
    assert calls == [] and lazy[1] == 4 and calls == [2]
    eager = gdata.SimpleDataset([1, 2, 3]).transform(fn, lazy=False)
    assert type(eager) is gdata.SimpleDataset and list(eager) == [2, 4, 6]
    eager_first = pairs.transform_first(lambda a: a + 1, lazy=False)
    assert type(eager_first) is gdata.SimpleDataset and list(eager_first) == [(2, 2), (4, 4)]


def _negate(x):
    return -x


def test_transform_first_pickles():
    d = gdata.SimpleDataset([(1, 'a'), (2, 'b')]).transform_first(_negate)
    back = pickle.loads(pickle.dumps(d))
    assert list(back) == [(-1, 'a'), (-2, 'b')]


def test_filter_take_sample():
    d = gdata.SimpleDataset(list(range(10, 20)))
    odd = d.filter(lambda x: x % 2)
    assert list(odd) == [11, 13, 15, 17, 19] and len(odd) == 5
    assert list(d.take(3)) == [10, 11, 12]
    assert list(d.take(None)) == list(range(10, 20)) and len(d.take(100)) == 10
    assert list(d.take(0)) == []
    with pytest.raises(ValueError, match='count must be >= 0'):
        d.take(-1)
    # Order printed by MXNet 2.0.0b1 for IntervalSampler(10, 4).
    assert list(d.sample(gdata.IntervalSampler(10, 4))) == [10, 14, 18, 11, 15, 19, 12, 16, 13, 17]
    with pytest.raises(TypeError, match='Expected gluon.data.Sampler'):
        d.sample([1, 2])


def test_views_compose_after_transform():
    d = gdata.SimpleDataset(list(range(6))).transform(lambda x: x * x)
    assert list(d.filter(lambda v: v > 5)) == [9, 16, 25]
    assert list(d.shard(2, 1)) == [9, 16, 25]


@pytest.mark.parametrize('length, shards', [(7, 3), (10, 4), (3, 5), (8, 2)])
def test_shard_splits_like_mxnet(length, shards):
    d = gdata.SimpleDataset(list(range(length)))
    parts = [list(d.shard(shards, i)) for i in range(shards)]
    # Oracle: the first length % shards parts get one extra sample, parts are contiguous.
    base, extra = divmod(length, shards)
    sizes = [base + (i < extra) for i in range(shards)]
    assert [len(p) for p in parts] == sizes
    assert sum(parts, []) == list(range(length))


def test_shard_bad_arguments():
    d = gdata.SimpleDataset([1, 2, 3])
    with pytest.raises(AssertionError, match='Shard index of out bound: 3 out of 3'):
        d.shard(3, 3)
    with pytest.raises(MXNetError, match='out of 0'):
        d.shard(0, 0)
    with pytest.raises(AssertionError, match='Index must be non-negative'):
        d.shard(3, -1)


def test_array_dataset_element_types():
    d = gdata.ArrayDataset(mx.np.arange(4), mx.nd.arange(4), np.arange(4), [5, 6, 7, 8],
                           mx.np.ones((4, 2)))
    assert len(d) == 4
    a, b, c, e, f = d[1]
    # MXNet turns 1-d MXNet arrays into NumPy, so those elements are NumPy scalars.
    assert type(a) is np.float32 and a == 1.0
    assert type(b) is np.float32 and b == 1.0
    assert type(c) is np.int64 and c == 1
    assert type(e) is int and e == 6
    assert isinstance(f, mx.np.ndarray) and f.shape == (2,)
    single = gdata.ArrayDataset(mx.np.arange(3))
    assert type(single[2]) is np.float32 and single[2] == 2.0


def test_array_dataset_errors():
    with pytest.raises(AssertionError, match=r'array\[0\] has length 2 while array\[1\] has 3'):
        gdata.ArrayDataset([1, 2], [1, 2, 3])
    with pytest.raises(AssertionError, match='Needs at least 1 arrays'):
        gdata.ArrayDataset()


def _write_records(tmp_path, payloads):
    rec, idx = str(tmp_path / 'd.rec'), str(tmp_path / 'd.idx')
    writer = recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i, p in enumerate(payloads):
        writer.write_idx(i, p)
    writer.close()
    return rec


def _read_all(dataset):
    return [dataset[i] for i in range(len(dataset))]


def test_record_file_dataset(tmp_path):
    payloads = [b'alpha', b'', b'\x00\x01' * 50, b'z' * 7]
    rec = _write_records(tmp_path, payloads)
    d = gdata.RecordFileDataset(rec)
    assert d.idx_file == str(tmp_path / 'd.idx') and d.filename == rec
    assert len(d) == 4 and [d[i] for i in (3, 0, 2, 1)] == [payloads[i] for i in (3, 0, 2, 1)]
    back = pickle.loads(pickle.dumps(d))
    assert back._record is not d._record and _read_all(back) == payloads


def test_record_file_dataset_reopens_in_a_forked_child(tmp_path, monkeypatch):
    payloads = [b'one', b'two', b'three']
    d = gdata.RecordFileDataset(_write_records(tmp_path, payloads))
    parent_reader = d._record
    # A forked worker sees a new pid: the dataset must not share the parent's file position.
    monkeypatch.setattr(os, 'getpid', lambda: -12345)
    assert d[2] == b'three' and d._record is not parent_reader
    assert _read_all(d) == payloads


def test_record_file_dataset_missing_index(tmp_path):
    rec = tmp_path / 'x.rec'
    rec.write_bytes(b'')
    with pytest.raises(FileNotFoundError, match='x.idx'):
        gdata.RecordFileDataset(str(rec))
