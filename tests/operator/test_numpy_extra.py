"""Window functions, index generators, divmod/modf/frexp, cov/corrcoef/digitize/gradient, compress/extract."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import np

RNG = onp.random.default_rng(1)
M = RNG.normal(size=(3, 5)).astype(onp.float32)


def _same(got, want, rtol=1e-5):
    got = got.asnumpy() if hasattr(got, "asnumpy") else got
    onp.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman", "bartlett"])
def test_windows(name):
    got = getattr(np, name)(7)
    assert got.dtype == onp.float32
    _same(got, getattr(onp, name)(7))
    with pytest.raises(ValueError, match=f"{name}: M must be non-negative"):
        getattr(np, name)(-1)


def test_kaiser():
    _same(np.kaiser(6, 5.0), onp.kaiser(6, 5.0))


def test_index_generators():
    for got, want in zip(np.tril_indices(4, -1), onp.tril_indices(4, -1)):
        assert got.dtype == onp.int64
        _same(got, want)
    for got, want in zip(np.triu_indices(3, 1, 5), onp.triu_indices(3, 1, 5)):
        _same(got, want)
    for got, want in zip(np.diag_indices_from(np.zeros((3, 3))), onp.diag_indices_from(onp.zeros((3, 3)))):
        _same(got, want)
    with pytest.raises(ValueError, match="square array"):
        np.diag_indices_from(np.zeros((2, 3)))


def test_multi_output_elementwise():
    a = onp.array([5.5, -7.25, 3.0], dtype=onp.float32)
    q, r = np.divmod(np.array(a), 2)
    _same(q, onp.divmod(a, 2)[0])
    _same(r, onp.divmod(a, 2)[1])
    frac, whole = np.modf(np.array(a))
    _same(frac, onp.modf(a)[0])
    _same(whole, onp.modf(a)[1])
    m, e = np.frexp(np.array(a))
    _same(m, onp.frexp(a)[0])
    _same(e, onp.frexp(a)[1])
    assert np.modf(np.array(onp.array([3], onp.int32)))[0].dtype == onp.float32


def test_cov_corrcoef_digitize_gradient():
    _same(np.cov(np.array(M)), onp.cov(M), rtol=1e-4)
    _same(np.cov(np.array(M), rowvar=False, bias=True), onp.cov(M, rowvar=False, bias=True), rtol=1e-4)
    _same(np.corrcoef(np.array(M)), onp.corrcoef(M), rtol=1e-4)
    x = onp.array([0.2, 6.4, 3.0, 1.6], dtype=onp.float32)
    bins = onp.array([0.0, 1.0, 2.5, 4.0, 10.0], dtype=onp.float32)
    got = np.digitize(np.array(x), np.array(bins))
    assert got.dtype == onp.int64
    _same(got, onp.digitize(x, bins))
    _same(np.digitize(np.array(x), np.array(bins), right=True), onp.digitize(x, bins, right=True))
    f = onp.array([1.0, 2.0, 4.0, 7.0, 11.0], dtype=onp.float32)
    _same(np.gradient(np.array(f)), onp.gradient(f))
    _same(np.gradient(np.array(f), 2.0), onp.gradient(f, 2.0))
    for got, want in zip(np.gradient(np.array(M)), onp.gradient(M)):
        _same(got, want)
    with pytest.raises(ValueError, match="bins must be 1-D"):
        np.digitize(np.array(x), np.zeros((2, 2)))


def test_compress_extract_are_value_dependent():
    cond = onp.array([True, False, True])
    _same(np.compress(np.array(cond), np.array(M), axis=0), onp.compress(cond, M, axis=0))
    _same(np.extract(np.array(M > 0), np.array(M)), onp.extract(M > 0, M))
    with pytest.raises(ValueError, match="condition must be 1-D"):
        np.compress(np.array(onp.ones((2, 2), bool)), np.array(M))


def test_array_api_spellings_and_utilities():
    x = onp.array([0.1, 0.5], dtype=onp.float32)
    _same(np.acos(np.array(x)), onp.arccos(x))
    _same(np.atan2(np.array(x), np.array(x + 1)), onp.arctan2(x, x + 1))
    _same(np.pow(np.array(x), 2), x ** 2)
    _same(np.concat([np.array(x), np.array(x)]), onp.concatenate([x, x]))
    assert np.permute_dims(np.zeros((2, 3, 4)), (2, 0, 1)).shape == (4, 2, 3)
    _same(np.vecdot(np.array(M), np.array(M)), (M * M).sum(-1), rtol=1e-4)
    assert np.matrix_transpose(np.zeros((2, 3, 4))).shape == (2, 4, 3)
    assert np.isscalar(3.0) and not np.isscalar(np.array([1.0]))
    assert np.result_type(np.ones(2), onp.int32) == onp.float64  # NumPy's rule for float32 with int32
    assert np.result_type(np.ones(2), onp.float16) == onp.float32
    assert np.broadcast_shapes((2, 1), (3,)) == (2, 3)


def test_np_save_load(tmp_path):
    x = np.array([1.0, 2.0])
    np.save(str(tmp_path / "x.npy"), x)
    assert np.load(str(tmp_path / "x.npy")).tolist() == [1.0, 2.0]
    np.savez(str(tmp_path / "x.npz"), a=x)
    assert np.load(str(tmp_path / "x.npz"))["a"].tolist() == [1.0, 2.0]
