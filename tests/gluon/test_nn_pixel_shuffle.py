"""gluon.nn.PixelShuffle1D/2D/3D against a loop-based NumPy oracle, and nn's Block re-exports."""
from __future__ import annotations

import itertools

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon import nn


def _oracle(x: onp.ndarray, factors: tuple) -> onp.ndarray:
    """out[n, c, s1*f1+k1, ...] = x[n, c*prod(f) + flat(k), s1, ...], written with explicit loops."""
    n, cin, *spatial = x.shape
    group = int(onp.prod(factors))
    out = onp.zeros((n, cin // group, *(s * f for s, f in zip(spatial, factors))), x.dtype)
    for b, c in itertools.product(range(n), range(cin // group)):
        for ks in itertools.product(*(range(f) for f in factors)):
            k_flat = int(onp.ravel_multi_index(ks, factors))
            for ss in itertools.product(*(range(s) for s in spatial)):
                pos = tuple(s * f + k for s, f, k in zip(ss, factors, ks))
                out[(b, c, *pos)] = x[(b, c * group + k_flat, *ss)]
    return out


@pytest.mark.parametrize("cls,factor,shape", [
    (nn.PixelShuffle1D, 3, (2, 6, 4)),
    (nn.PixelShuffle2D, (2, 3), (2, 12, 2, 3)),
    (nn.PixelShuffle2D, 2, (1, 8, 3, 2)),
    (nn.PixelShuffle3D, (2, 1, 2), (1, 8, 2, 3, 2)),
])
@pytest.mark.parametrize("hybridize", [False, True])
def test_pixel_shuffle_matches_oracle(cls, factor, shape, hybridize):
    x = onp.random.RandomState(0).rand(*shape).astype("float32")
    layer = cls(factor)
    if hybridize:
        layer.hybridize()
    out = layer(mx.np.array(x))
    factors = (factor,) * (len(shape) - 2) if isinstance(factor, int) else factor
    onp.testing.assert_array_equal(out.asnumpy(), _oracle(x, factors))


def test_pixel_shuffle_bad_input():
    with pytest.raises(MXNetError):
        nn.PixelShuffle2D((2, 2, 2))
    with pytest.raises(MXNetError, match="divisible"):
        nn.PixelShuffle2D(2)(mx.np.zeros((1, 6, 2, 2)))
    with pytest.raises(MXNetError, match="4-d"):
        nn.PixelShuffle2D(2)(mx.np.zeros((1, 8, 2)))


def test_nn_reexports_blocks():
    assert nn.Block is mx.gluon.Block
    assert nn.HybridBlock is mx.gluon.HybridBlock
    assert nn.SymbolBlock is mx.gluon.SymbolBlock
    assert repr(nn.PixelShuffle2D((2, 3))) == "PixelShuffle2D((2, 3))"
