"""gluon.data.batchify: values against NumPy, dtypes and result classes as MXNet 2.0 gives them."""
import warnings

import numpy as np
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon.data import batchify
from mxjax.gluon.data.batchify import default_batchify_fn, default_mp_batchify_fn


def _check(out, expected, dtype=None, cls=mx.np.ndarray):
    expected = np.asarray(expected)
    assert type(out) is cls
    assert out.shape == expected.shape
    assert out.dtype == (expected.dtype if dtype is None else np.dtype(dtype))
    np.testing.assert_array_equal(out.asnumpy(), expected)


def test_public_names_match_mxnet():
    assert sorted(batchify.__all__) == ['Append', 'AsList', 'Group', 'Pad', 'Stack']


def test_stack_numbers_lists_and_numpy():
    # dtypes as MXNet 2.0.0b1 gives them: NumPy's inference is kept (int64 / float64).
    _check(batchify.Stack()([1, 2, 3]), np.array([1, 2, 3]), 'int64')
    _check(batchify.Stack()([1.0, 2.5]), np.array([1.0, 2.5]), 'float64')
    a = np.arange(6, dtype=np.uint8).reshape(2, 3)
    _check(batchify.Stack()([a, a + 1]), np.stack([a, a + 1]), 'uint8')


def test_stack_splits_tuple_and_list_samples_into_fields():
    out = batchify.Stack()([(1, 2.0), (3, 4.0)])
    assert isinstance(out, list) and len(out) == 2
    _check(out[0], [1, 3], 'int64')
    _check(out[1], [2.0, 4.0], 'float64')
    out = batchify.Stack()([[1, 2], [3, 4]])
    _check(out[0], [1, 3], 'int64')
    _check(out[1], [2, 4], 'int64')


def test_stack_mx_arrays_keep_dtype():
    a = mx.np.array([[1, 2]], dtype='float16')
    b = mx.np.array([[3, 4]], dtype='float16')
    _check(batchify.Stack()([a, b]), [[[1, 2]], [[3, 4]]], 'float16')
    # MXNet 2.0 fails on legacy arrays in NumPy mode; they are stacked here.
    _check(batchify.Stack(use_shared_mem=True)([mx.nd.ones((2,)), mx.nd.zeros((2,))]),
           [[1, 1], [0, 0]], 'float32')


def test_pad_lists_and_arrays():
    _check(batchify.Pad()([[1, 2, 3], [4, 5]]), [[1, 2, 3], [4, 5, 0]], 'int64')
    _check(batchify.Pad(val=-1)([[1.5, 2, 3], [4, 5]]), [[1.5, 2, 3], [4, 5, -1]], 'float64')
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(5, dtype=np.int32).reshape(1, 5)
    expected = np.full((2, 4, 8), -1, dtype=np.int32)
    expected[0, :2, :3] = a
    expected[1, :1, :5] = b
    _check(batchify.Pad(val=-1, round_to=4)([a, b]), expected, 'int32')
    expected16 = np.zeros((2, 2, 5), dtype=np.float16)
    expected16[0, :2, :3] = a
    expected16[1, :1, :5] = b
    _check(batchify.Pad(dtype='float16')([a, b]), expected16, 'float16')


def test_pad_mx_arrays_warns_once_and_keeps_dtype():
    pad = batchify.Pad(val=7)
    a = mx.np.array([1, 2, 3], dtype='int32')
    b = mx.np.array([4], dtype='int32')
    with pytest.warns(UserWarning, match='Pad copies MXNet arrays to NumPy'):
        out = pad([a, b])
    _check(out, [[1, 2, 3], [4, 7, 7]], 'int32')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        pad([a, b])


def test_pad_zero_length_sample_is_all_padding():
    _check(batchify.Pad(val=9)([np.array([1, 2]), np.array([], dtype=np.int64)]),
           [[1, 2], [9, 9]], 'int64')


def test_pad_errors():
    with pytest.raises(NotImplementedError, match=r'use Group\(Pad\(\), Pad\(\), ...\)'):
        batchify.Pad()([1, 2])
    with pytest.raises(ValueError, match=r'same number of dimensions, got shapes \(2,\) and \(1, 2\)'):
        batchify.Pad()([np.ones(2), np.ones((1, 2))])
    with pytest.raises(ValueError, match='round_to must be a positive int'):
        batchify.Pad(round_to=0)
    with pytest.raises(IndexError, match='Pad: got an empty list of samples'):
        batchify.Pad()([])


def test_append():
    out = batchify.Append()([[1, 2, 3], [4, 5]])
    assert isinstance(out, list) and len(out) == 2
    _check(out[0], [[1, 2, 3]], 'float32')
    _check(out[1], [[4, 5]], 'float32')
    out = batchify.Append(expand=False)([np.array([1, 2, 3]), np.array([4.0, 5.0])])
    _check(out[0], [1, 2, 3], 'int64')
    _check(out[1], [4.0, 5.0], 'float32')  # float64 NumPy data becomes float32, as mx.np.array makes it
    x = mx.np.ones((2, 3))
    out = batchify.Append(batch_axis=1, use_shared_mem=True)([x, mx.np.zeros((2, 2))])
    _check(out[0], np.ones((2, 1, 3)), 'float32')
    _check(out[1], np.zeros((2, 1, 2)), 'float32')


def test_group_and_aslist():
    data, label = batchify.Group(batchify.Pad(), batchify.Stack())([([1, 2, 3], 0), ([4, 5], 1)])
    _check(data, [[1, 2, 3], [4, 5, 0]], 'int64')
    _check(label, [0, 1], 'int64')
    out = batchify.Group([batchify.Stack(), batchify.AsList()])([(np.array([1, 2]), 'a'),
                                                                 (np.array([3, 4]), 'b')])
    assert isinstance(out, tuple) and out[1] == ['a', 'b']
    _check(out[0], [[1, 2], [3, 4]], 'int64')
    assert batchify.AsList()(('x', 'y')) == ['x', 'y']
    pair = batchify.Tuple(batchify.Stack(), batchify.Stack())([(np.array([1, 2]), 5), (np.array([3, 4]), 6)])
    _check(pair[0], [[1, 2], [3, 4]], 'int64')
    _check(pair[1], [5, 6], 'int64')


def test_group_errors():
    with pytest.raises(AssertionError, match=r'must be callable! type\(fn\[1\]\)'):
        batchify.Group(batchify.Stack(), 3)
    with pytest.raises(MXNetError, match='input pattern is not understood'):
        batchify.Group([batchify.Stack()], batchify.Stack())
    with pytest.raises(AssertionError, match='should contains 2 elements, got 1'):
        batchify.Group(batchify.Stack(), batchify.Stack())([(1,), (2,)])


@pytest.mark.parametrize('fn', [default_batchify_fn, default_mp_batchify_fn])
def test_default_batchify_fns(fn):
    _check(fn([1, 2, 3]), [1, 2, 3], 'int64')
    _check(fn([[1, 2], [3, 4]]), [[1, 2], [3, 4]], 'int64')  # lists are not split, only tuples
    out = fn([(np.ones(2, np.uint8), 1.5), (np.zeros(2, np.uint8), 2.5)])
    assert isinstance(out, list)
    _check(out[0], [[1, 1], [0, 0]], 'uint8')
    _check(out[1], [1.5, 2.5], 'float64')
    _check(fn([mx.np.ones(2), mx.np.zeros(2)]), [[1, 1], [0, 0]], 'float32')


def test_legacy_mode_returns_nd_arrays(nd_mode):
    _check(batchify.Stack()([1, 2, 3]), [1, 2, 3], 'int64', cls=mx.nd.NDArray)
    _check(batchify.Stack()([mx.nd.ones((2,)), mx.nd.zeros((2,))]), [[1, 1], [0, 0]], 'float32',
           cls=mx.nd.NDArray)
    _check(batchify.Pad()([[1, 2, 3], [4, 5]]), [[1, 2, 3], [4, 5, 0]], 'int64', cls=mx.nd.NDArray)
    out = batchify.Append()([[1, 2, 3], [4, 5]])
    _check(out[0], [[1, 2, 3]], 'float32', cls=mx.nd.NDArray)
    out = default_batchify_fn([(1, 2.0), (3, 4.0)])
    _check(out[0], [1, 3], 'int64', cls=mx.nd.NDArray)
    _check(out[1], [2.0, 4.0], 'float64', cls=mx.nd.NDArray)
