"""Which mx.np functions give several arrays as a list and which as a tuple: MXNet 2.0's choice
(checked in 2.0.0b1), where it differs from NumPy 2's tuples."""
import numpy as onp

import mxjax as mx

np = mx.np


def test_lists_where_mxnet_gives_lists():
    a, b = np.ones((2, 1)), np.arange(3)
    for got, want in ((np.meshgrid(a[:, 0], b), onp.meshgrid(onp.ones(2), onp.arange(3))),
                      (np.broadcast_arrays(a, b), onp.broadcast_arrays(onp.ones((2, 1)), onp.arange(3))),
                      (np.atleast_2d(b, a), onp.atleast_2d(onp.arange(3), onp.ones((2, 1)))),
                      (np.split(b, 3), onp.split(onp.arange(3), 3))):
        assert type(got) is list and len(got) == len(want)
        for g, w in zip(got, want):
            onp.testing.assert_array_equal(g.asnumpy(), w)
    assert type(np.atleast_1d(b)) is np.ndarray  # one input: the array itself


def test_tuples_where_mxnet_gives_tuples():
    x = np.array([[0.0, 1.0], [2.0, 0.0]])
    assert type(np.nonzero(x)) is tuple and type(np.unique(x, return_counts=True)) is tuple
