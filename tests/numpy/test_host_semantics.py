"""mx.np functions MXNet 2.0 runs on host NumPy, here real ops: choose, i0, unwrap, trapz, the polynomial
family, packbits/unpackbits, msort, in1d, tril/triu_indices_from, product, sometrue -- values and dtypes
against NumPy, gradients, hybridize, bad input."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, np
from mxjax.base import MXNetError
from oracle import check_hybrid

RNG = onp.random.default_rng(5)
F32 = RNG.normal(size=(3, 5)).astype(onp.float32)
I64 = RNG.integers(-5, 5, size=(6,)).astype(onp.int64)
I32 = I64.astype(onp.int32)


def _same(got, want, rtol=1e-5, atol=1e-6):
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=rtol, atol=atol)


def test_choose_modes_and_sequences():
    a = onp.array([[0, 1, 2, 1], [2, 0, 1, 0]], onp.int64)
    choices = RNG.normal(size=(3, 2, 4)).astype(onp.float32)
    _same(np.choose(np.array(a), np.array(choices)), onp.choose(a, choices))
    _same(np.choose(np.array(a), [np.array(c) for c in choices]), onp.choose(a, list(choices)))
    big = a + 2
    for mode in ("wrap", "clip"):
        _same(np.choose(np.array(big), np.array(choices), mode=mode), onp.choose(big, choices, mode=mode))
    mixed = [choices[0, 0], onp.arange(4, dtype=onp.int32)]                 # NumPy promotes to float64
    _same(np.choose(np.array([1, 0, 1, 1], dtype="int64"), [np.array(c) for c in mixed]),
          onp.choose([1, 0, 1, 1], mixed))
    ints = onp.arange(12, dtype=onp.int32).reshape(3, 4)
    _same(np.choose(np.array([2, 0, 1, 0], dtype="int64"), np.array(ints)), onp.choose([2, 0, 1, 0], ints))


def test_choose_errors():
    choices = np.array(onp.ones((3, 4), onp.float32))
    with pytest.raises(ValueError, match=r"choose: invalid entry in choice array.*\[0, 3\)"):
        np.choose(np.array([0, 3, 1, 1], dtype="int64"), choices)
    with pytest.raises(TypeError, match="choose: index array a must be of an integer dtype, got float32"):
        np.choose(np.array([0.0, 1.0]), choices)
    with pytest.raises(ValueError, match="choose: mode must be"):
        np.choose(np.array([0, 1], dtype="int64"), choices, mode="bogus")


@pytest.mark.parametrize("x", [F32, I64, I32, onp.abs(F32).astype(onp.float64)], ids=lambda x: str(x.dtype))
def test_i0_unwrap_trapz_dtypes(x):
    _same(np.i0(_keep(x)), onp.i0(x), rtol=1e-5)
    _same(np.unwrap(_keep(x * 3)), onp.unwrap(x * 3), rtol=1e-5, atol=1e-5)
    _same(np.trapz(_keep(x)), onp.trapezoid(x))
    if x.ndim == 2:
        _same(np.unwrap(_keep(x * 3), axis=0, period=4.0), onp.unwrap(x * 3, axis=0, period=4.0),
              atol=1e-5)
        _same(np.trapz(_keep(x), dx=0.5, axis=0), onp.trapezoid(x, dx=0.5, axis=0))
        points = onp.array([0.0, 0.5, 2.0], onp.float32)
        _same(np.trapz(_keep(x), np.array(points), axis=0), onp.trapezoid(x, points, axis=0))


def test_i0_unwrap_trapz_errors():
    with pytest.raises(TypeError, match="i0: complex input"):
        np.i0(np.array(onp.ones(2, onp.complex64)))
    with pytest.raises(ValueError, match=r"unwrap: axis 3 is out of bounds for an array of shape \(3, 5\)"):
        np.unwrap(np.array(F32), axis=3)
    with pytest.raises(ValueError, match="trapz: axis 2 is out of bounds"):
        np.trapz(np.array(F32), axis=2)


def _keep(a):
    """``a`` as an mx.np array of its own dtype (``np.array`` makes float64 NumPy data float32)."""
    return np.array(a, dtype=a.dtype)


POLYS = [onp.array([1.0, -2.0, 0.5], onp.float32), onp.array([3, 0, -1, 2], onp.int64),
         onp.array([2, 1], onp.int32), onp.array([0.25, 4.0], onp.float64)]


@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul"])
@pytest.mark.parametrize("i,j", [(0, 1), (1, 2), (2, 3), (3, 0)])
def test_poly_arithmetic(name, i, j):
    a, b = POLYS[i], POLYS[j]
    _same(getattr(np, name)(_keep(a), _keep(b)), getattr(onp, name)(a, b))


@pytest.mark.parametrize("p", POLYS, ids=lambda p: str(p.dtype))
def test_polyint_poly(p):
    _same(np.polyint(_keep(p)), onp.polyint(p))
    _same(np.polyint(_keep(p), 2, [1.0, -3.0]), onp.polyint(p, 2, [1.0, -3.0]))
    _same(np.polyint(_keep(p), m=3, k=2.0), onp.polyint(p, m=3, k=2.0))
    _same(np.poly(_keep(p)), onp.poly(p), rtol=1e-5, atol=1e-5)


def test_poly_of_matrix_and_errors():
    m = onp.array([[1.0, 2.0], [3.0, 4.0]], onp.float32)
    _same(np.poly(np.array(m)), onp.poly(m), rtol=1e-5)
    with pytest.raises(ValueError, match=r"poly: input must be 1-D or a non-empty square 2-D array"):
        np.poly(np.array(onp.ones((2, 3))))
    with pytest.raises(ValueError, match="polyadd: expected 1-D polynomial coefficients"):
        np.polyadd(np.array(onp.ones((2, 2))), np.array([1.0]))
    with pytest.raises(ValueError, match="polyint: order of integral m must be non-negative"):
        np.polyint(np.array([1.0, 2.0]), -1)
    with pytest.raises(ValueError, match="polyint: k must be a scalar or have m=2 elements"):
        np.polyint(np.array([1.0, 2.0]), 2, [1.0, 2.0, 3.0])


def test_packbits_unpackbits():
    bits = RNG.integers(0, 2, size=(3, 11)).astype(onp.uint8)
    _same(np.packbits(np.array(bits)), onp.packbits(bits))
    _same(np.packbits(np.array(bits), axis=1, bitorder="little"), onp.packbits(bits, axis=1, bitorder="little"))
    _same(np.packbits(np.array(bits > 0)), onp.packbits(bits > 0))
    packed = onp.packbits(bits, axis=1)
    _same(np.unpackbits(np.array(packed), axis=1), onp.unpackbits(packed, axis=1))
    _same(np.unpackbits(np.array(packed), axis=1, count=11), onp.unpackbits(packed, axis=1, count=11))
    _same(np.unpackbits(np.array(packed), bitorder="little"), onp.unpackbits(packed, bitorder="little"))
    with pytest.raises(TypeError, match="packbits: expected an input array of integer or boolean data type, "
                                        "got float32"):
        np.packbits(np.array([1.0, 0.0]))
    with pytest.raises(TypeError, match="unpackbits: expected an input array of unsigned byte data type"):
        np.unpackbits(np.array([1, 2], dtype="int32"))
    with pytest.raises(ValueError, match="packbits: bitorder must be 'big' or 'little'"):
        np.packbits(np.array(bits), bitorder="middle")


def test_msort_in1d_indices_from():
    a = RNG.integers(0, 4, size=(4, 3)).astype(onp.int32)
    _same(np.msort(np.array(a)), onp.sort(a, axis=0))
    _same(np.in1d(np.array(a), np.array([1, 3], dtype="int32")), onp.isin(a.ravel(), [1, 3]))
    _same(np.in1d(np.array(a), np.array([1, 3], dtype="int32"), invert=True),
          onp.isin(a.ravel(), [1, 3], invert=True))
    square = onp.zeros((4, 5), onp.float32)
    for name in ("tril_indices_from", "triu_indices_from"):
        for k in (0, 1, -2):
            got, want = getattr(np, name)(np.array(square), k), getattr(onp, name)(square, k)
            assert isinstance(got, tuple) and len(got) == 2
            for g, w in zip(got, want):
                _same(g, w.astype(onp.int64))
        with pytest.raises(ValueError, match=f"{name}: input array must be 2-d, got shape"):
            getattr(np, name)(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="msort: axis 0 is out of bounds"):
        np.msort(np.array(1.0))


def test_product_sometrue():
    x = onp.array([[1, 2], [3, 4]], onp.int32)
    _same(np.product(np.array(x)), onp.prod(x, dtype=onp.int32))   # MXNet keeps int32 (NumPy: int64)
    _same(np.product(np.array(F32), axis=1, keepdims=True), onp.prod(F32, axis=1, keepdims=True), rtol=1e-5)
    _same(np.sometrue(np.array(x > 3), axis=0), onp.any(x > 3, axis=0))
    _same(np.sometrue(np.array(F32 > 5)), onp.any(F32 > 5))


def test_gradients():
    x = np.array(F32[0])
    x.attach_grad()
    with autograd.record():
        y = (np.trapz(x) + np.polyadd(x, np.array([1.0, 2.0])).sum() + np.i0(x).sum()
             + (np.polyint(x) * 2).sum())
    y.backward()
    n = F32.shape[1]
    trapz_grad = onp.full(n, 1.0)
    trapz_grad[[0, -1]] = 0.5
    polyint_grad = 2.0 / onp.arange(n, 0, -1)
    i1 = onp.array([onp.i0(v + 1e-3) - onp.i0(v - 1e-3) for v in F32[0].astype(onp.float64)]) / 2e-3
    onp.testing.assert_allclose(x.grad.asnumpy(), trapz_grad + 1.0 + i1 + polyint_grad, rtol=1e-3)


class _PolyBlock(mx.gluon.HybridBlock):
    def forward(self, x):
        flat = x.reshape(-1)
        picks = np.choose((x[0] > 0).astype("int64"), np.stack([x[0], x[1]]))
        return np.polymul(flat[:3], flat[3:6]) + np.trapz(x, axis=0).sum() + np.unwrap(flat[:5]) * picks


def test_hybridize_matches_imperative():
    check_hybrid(_PolyBlock(), F32[:2], rtol=1e-4, atol=1e-5)


def test_symbol_front_end():
    data = mx.sym.var("data")
    out = mx.sym.np.polyadd(data, data)
    got = out.eval(data=np.array([1.0, 2.0]))[0]
    _same(got, onp.array([2.0, 4.0], onp.float32))
    with pytest.raises(MXNetError):
        np.i0(np.array(onp.ones(2, onp.complex64)))
