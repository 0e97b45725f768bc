"""mx.np.fallback / fallback_linalg and the mx.np names bound to them: host NumPy runs, mx arrays come back
with NumPy's dtypes, autograd recording is refused; the financial functions NumPy removed."""
import logging

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, np

RNG = onp.random.default_rng(7)
X = RNG.normal(size=(6,)).astype(onp.float32)
Y = RNG.normal(size=(6,)).astype(onp.float32)


def _same(got, want, rtol=1e-6):
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol)


def test_every_mxnet_fallback_name_is_there():
    assert len(np.fallback.__all__) == 85
    for name in np.fallback.__all__:
        assert callable(getattr(np.fallback, name)), name
    assert np.fallback_linalg.__all__ == ["cond", "matrix_power", "multi_dot"]


def test_arrays_in_and_out():
    hist, xe, ye = np.histogram2d(np.array(X), np.array(Y), bins=3)
    want = onp.histogram2d(X, Y, bins=3)
    for got, w in zip((hist, xe, ye), want):
        _same(got, w)
    h, edges = np.histogramdd(np.array(onp.stack([X, Y], 1)), bins=2)
    want_h, want_edges = onp.histogramdd(onp.stack([X, Y], 1), bins=2)
    _same(h, want_h)
    assert isinstance(edges, list) and len(edges) == 2
    _same(edges[1], want_edges[1])
    _same(np.histogram_bin_edges(np.array(X), bins=4), onp.histogram_bin_edges(X, bins=4))
    rows, cols = np.ix_(np.array([0, 2], dtype="int64"), np.array([1, 3], dtype="int64"))
    _same(rows, onp.ix_([0, 2], [1, 3])[0])
    _same(np.polyfit(np.array(X), np.array(Y), 2), onp.polyfit(X, Y, 2), rtol=1e-4)
    q, r = np.polydiv(np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]))
    _same(q, onp.array([1.0, -2.0], onp.float32))
    _same(np.roots(np.array([1.0, -3.0, 2.0])), onp.roots(onp.array([1.0, -3.0, 2.0], onp.float32)))
    _same(np.trim_zeros(np.array([0, 0, 1, 2, 0], dtype="int32")), onp.array([1, 2], onp.int32))
    _same(np.piecewise(np.array(X), [np.array(X < 0), np.array(X >= 0)], [-1.0, lambda v: v * 2]),
          onp.piecewise(X, [X < 0, X >= 0], [-1.0, lambda v: v * 2]))
    square = X[:4].reshape(2, 2)
    _same(np.apply_along_axis(onp.cumsum, 1, np.array(square)), onp.apply_along_axis(onp.cumsum, 1, square))
    _same(np.apply_over_axes(onp.sum, np.array(square), [0]), onp.apply_over_axes(onp.sum, square, [0]))


def test_scalars_and_dtypes_pass_through():
    assert np.min_scalar_type(300) == onp.uint16
    assert np.min_scalar_type(np.array([1.5], dtype="float64")) == onp.float64
    assert np.alltrue(np.array([1.0, 2.0])) is onp.True_
    assert not np.alltrue(np.array([1.0, 0.0]), axis=0)
    assert np.fallback.size(np.ones((2, 3))) == 6


def test_removed_numpy_functions_in_fallback():
    _same(np.fallback.msort(np.array([[3, 1], [1, 2]], dtype="int32")), onp.array([[1, 1], [3, 2]], onp.int32))
    assert onp.isclose(np.fallback.trapz(np.array([1.0, 2.0, 3.0])), 4.0)
    _same(np.fallback.in1d(np.array([[1, 2], [3, 4]], dtype="int64"), np.array([2, 4], dtype="int64")),
          onp.array([False, True, False, True]))


def test_fallback_linalg():
    a = RNG.normal(size=(3, 3)).astype(onp.float32)
    _same(np.fallback_linalg.matrix_power(np.array(a), 3), onp.linalg.matrix_power(a, 3), rtol=1e-5)
    _same(np.fallback_linalg.multi_dot([np.array(a), np.array(a)]), a @ a, rtol=1e-5)
    assert onp.isclose(np.fallback_linalg.cond(np.array(a)), onp.linalg.cond(a), rtol=1e-4)


def test_refused_under_autograd():
    x = np.array(X)
    x.attach_grad()
    with autograd.record():
        with pytest.raises(ValueError, match=r"np\.histogram_bin_edges: falling back to the NumPy operator "
                                             "with autograd active is not supported"):
            np.histogram_bin_edges(x)
        with pytest.raises(ValueError, match=r"np\.linalg\.cond: falling back"):
            np.fallback_linalg.cond(x.reshape(2, 3))


def test_refused_in_hybridized_block():
    class Block(mx.gluon.HybridBlock):
        def forward(self, x):
            return np.histogram_bin_edges(x, bins=2)

    block = Block()
    _same(block(np.array(X)), onp.histogram_bin_edges(X, bins=2))
    block.hybridize()
    with pytest.raises(mx.base.MXNetError, match="np.histogram_bin_edges: a fallback operator runs on host "
                                                 "NumPy and cannot be part of a hybridized graph"):
        block(np.array(X))


def test_warns_once(caplog):
    with caplog.at_level(logging.WARNING):
        np.fallback.vander(np.array([1.0, 2.0]))
        np.fallback.vander(np.array([1.0, 2.0]))
    assert sum("np.vander is a fallback operator" in r.message for r in caplog.records) <= 1


def test_numpy_errors_propagate():
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        np.polyfit(np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]), 1)


# -- financial functions (NumPy's former numpy.lib.financial; values from its documentation) -------------

def test_financial_documented_values():
    assert onp.isclose(np.npv(0.281, [-100, 39, 59, 55, 20]), -0.0084785916384548798)
    assert onp.isclose(np.npv(0.281, np.array([-100.0, 39, 59, 55, 20])), -0.0084785916384548798, rtol=1e-6)
    assert onp.isclose(np.pmt(0.075 / 12, 12 * 15, 200000), -1854.0247200054619)
    assert onp.isclose(np.pv(0.05 / 12, 10 * 12, -100, 15692.93), -100.00067131625819)
    assert onp.isclose(np.rate(10, 0, -3500, 10000), 0.1106908537142689)
    periods = onp.arange(1, 13)
    principal = np.ppmt(0.0824 / 12, periods, 12, 2500)
    onp.testing.assert_allclose(principal[:2], [-200.58192369, -201.95925290], rtol=1e-8)


@pytest.mark.parametrize("when", ["end", "begin"])
def test_financial_identities(when):
    payment = np.pmt(0.01, 24, 1000, when=when)
    assert onp.isclose(np.pv(0.01, 24, payment, when=when), 1000)
    assert onp.isclose(np.rate(24, payment, 1000, 0, when=when), 0.01)
    assert onp.isclose(onp.sum(np.ppmt(0.01, onp.arange(1, 25), 24, 1000, when=when)), -1000)
    assert onp.isclose(np.pmt(0.0, 10, 1000, when=when), -100)


def test_mirr():
    assert onp.isclose(np.mirr([-100, 110], 0.05, 0.05), 0.10)
    assert onp.isclose(np.mirr([-100, 50, 60], 0.1, 0.1), (110 * 1.1 ** 0 * 0 + (50 * 1.1 + 60) / 100) ** 0.5 - 1)
    assert onp.isnan(np.mirr([100, 50], 0.1, 0.1))
    with pytest.raises(ValueError, match="when must be"):
        np.pmt(0.1, 10, 100, when="sometime")
