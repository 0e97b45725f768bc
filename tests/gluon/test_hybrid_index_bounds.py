"""Inside a hybridized block an out-of-range index is reported as MXNetIndexError at the call or at
the first read of the result -- never a clamped value, never a raw XLA runtime error."""
from __future__ import annotations

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetIndexError

X = onp.arange(12, dtype=onp.float32).reshape(3, 4)


class _Apply(mx.gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, x, idx):
        return self._fn(x, idx)


CASES = {
    "getitem": (lambda x, i: x[i], lambda i: X[i], [0, 2], [0, 3]),
    "getitem_mixed": (lambda x, i: x[1:, i], lambda i: X[1:, i], [3, -4], [1, 4]),
    "gather_nd": (lambda x, i: mx.npx.gather_nd(x, i.reshape(1, -1)), lambda i: X[i], [2, -3], [1, -4]),
    "take": (lambda x, i: mx.np.take(x, i, axis=1), lambda i: onp.take(X, i, axis=1), [3, -4], [0, 4]),
    "take_flat": (lambda x, i: mx.np.take(x, i), lambda i: onp.take(X, i), [11, -12], [12]),
    "index_add": (lambda x, i: mx.npx.index_add(x, i.reshape(1, -1), 1.0),
                  lambda i: _np_add(i), [0, 2], [1, 3]),
}


def _np_add(i):
    out = X.copy()
    onp.add.at(out, (onp.asarray(i),), 1.0)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_hybridized_bounds(name):
    fn, oracle, good, bad = CASES[name]
    block = _Apply(fn)
    block.hybridize()
    x = mx.np.array(X)
    onp.testing.assert_array_equal(block(x, mx.np.array(good, dtype="int64")).asnumpy(), oracle(good))
    with pytest.raises(IndexError):
        oracle(bad)
    with pytest.raises(MXNetIndexError, match=r"index -?\d+ is out of bounds for axis \d with size \d") as info:
        block(x, mx.np.array(bad, dtype="int64")).asnumpy()
    assert "shape (3, 4)" in str(info.value)
    # the failure is reported once; the compiled program keeps working for valid indices
    onp.testing.assert_array_equal(block(x, mx.np.array(good, dtype="int64")).asnumpy(), oracle(good))


def test_hybridized_legacy_take_raise_mode():
    class Take(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, idx):
            return F.take(x, idx, axis=0, mode="raise")

    block = Take()
    block.hybridize()
    x = mx.nd.array(X)
    onp.testing.assert_array_equal(block(x, mx.nd.array([2, -1])).asnumpy(), X[[2, -1]])
    with pytest.raises(MXNetIndexError, match="take: index 3 is out of bounds for axis 0 with size 3"):
        block(x, mx.nd.array([0, 3])).asnumpy()
