"""``mx.np.linalg`` against NumPy: values, shapes, dtypes (float32 default, float64 kept), bad input."""
import numpy as onp
import pytest

import mxjax as mx
from oracle import keep

la = mx.np.linalg
RNG = onp.random.default_rng(0)


def _general(*shape):
    """Well-conditioned square matrices: a random matrix plus a multiple of the identity."""
    a = RNG.standard_normal(shape)
    return a + shape[-1] * onp.eye(shape[-1]) if shape[-1] == shape[-2] else a


def _spd(*shape):
    a = RNG.standard_normal(shape)
    return a @ onp.swapaxes(a, -1, -2) + shape[-1] * onp.eye(shape[-1])


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == onp.float32 else dict(rtol=1e-9, atol=1e-9)


def _check(got, want, dtype, real_dtype=None):
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = onp.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        expected = real_dtype or (dtype if w.dtype.kind == "f" else w.dtype)
        assert g.dtype == expected, (g.dtype, expected)
        onp.testing.assert_allclose(g.asnumpy(), w, **_tol(dtype))


# name, input builders, kwargs: results compared directly with NumPy's
DIRECT = [
    ("det", [lambda: _general(3, 3)], {}),
    ("det", [lambda: _general(2, 4, 4)], {}),
    ("slogdet", [lambda: _general(2, 3, 3)], {}),
    ("inv", [lambda: _general(4, 4)], {}),
    ("inv", [lambda: _general(2, 3, 3)], {}),
    ("pinv", [lambda: RNG.standard_normal((4, 3))], {}),
    ("pinv", [lambda: RNG.standard_normal((2, 3, 5))], {"rcond": 1e-3}),
    ("pinv", [lambda: _spd(3, 3)], {"hermitian": True}),
    ("solve", [lambda: _general(3, 3), lambda: RNG.standard_normal(3)], {}),
    ("solve", [lambda: _general(3, 3), lambda: RNG.standard_normal((3, 2))], {}),
    ("solve", [lambda: _general(2, 3, 3), lambda: RNG.standard_normal((2, 3, 4))], {}),
    ("tensorinv", [lambda: _general(24, 24).reshape(4, 6, 8, 3)], {"ind": 2}),
    ("tensorsolve", [lambda: _general(24, 24).reshape(6, 4, 2, 3, 4), lambda: RNG.standard_normal((6, 4))], {}),
    ("tensorsolve", [lambda: _general(6, 6).reshape(6, 3, 2).transpose(1, 0, 2), lambda: RNG.standard_normal(6)],
     {"axes": (0,)}),
    ("matrix_power", [lambda: _general(3, 3) / 3], {"n": 3}),
    ("matrix_power", [lambda: _general(2, 3, 3) / 3], {"n": -2}),
    ("matrix_power", [lambda: _general(3, 3)], {"n": 0}),
    ("cholesky", [lambda: _spd(4, 4)], {}),
    ("cholesky", [lambda: _spd(2, 3, 3)], {"upper": True}),
    ("eigvalsh", [lambda: _spd(4, 4)], {}),
    ("eigvalsh", [lambda: RNG.standard_normal((2, 3, 3))], {"UPLO": "U"}),
    ("svdvals", [lambda: RNG.standard_normal((2, 4, 3))], {}),
    ("cond", [lambda: _general(3, 3)], {}),
    ("cond", [lambda: _general(3, 3)], {"p": "fro"}),
    ("cond", [lambda: _general(2, 3, 3)], {"p": onp.inf}),
    ("cond", [lambda: RNG.standard_normal((3, 5))], {"p": -2}),
    ("matrix_rank", [lambda: _general(4, 4)], {}),
    ("matrix_rank", [lambda: RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 5))], {}),
    ("matrix_rank", [lambda: onp.diag([1.0, 1e-3, 1e-9])], {"tol": 1e-4}),
    ("matrix_rank", [lambda: onp.stack([_spd(3, 3), onp.zeros((3, 3))])], {"hermitian": True}),
    ("matrix_rank", [lambda: onp.array([0.0, 1.0])], {}),
]


# float64 stays float64: checked on the first record of each op (compiles are the test suite's cost)
F64 = {"det", "slogdet", "inv", "solve", "cholesky", "eigvalsh", "svdvals", "pinv", "matrix_rank"}
CASES = [(*c, onp.float32) for c in DIRECT] + \
    [(*c, onp.float64) for i, c in enumerate(DIRECT) if c[0] in F64 and c[0] not in [d[0] for d in DIRECT[:i]]]


@pytest.mark.parametrize("name,builders,kwargs,dtype", CASES,
                         ids=[f"{c[0]}-{i}-{onp.dtype(c[3]).name}" for i, c in enumerate(CASES)])
def test_against_numpy(name, builders, kwargs, dtype):
    inputs = [b().astype(dtype) for b in builders]
    want = getattr(onp.linalg, name)(*inputs, **kwargs)
    got = getattr(la, name)(*(keep(x, dtype=dtype) for x in inputs), **kwargs)
    if isinstance(want, tuple):
        want = tuple(want)
    _check(got, want, dtype)


NORMS = [
    ((5,), {}), ((5,), {"ord": 1}), ((5,), {"ord": onp.inf}), ((5,), {"ord": -onp.inf}),
    ((5,), {"ord": 0}), ((5,), {"ord": 3}), ((5,), {"ord": -1}),
    ((3, 4), {}), ((3, 4), {"ord": "fro"}), ((3, 4), {"ord": "nuc"}), ((3, 4), {"ord": 1}),
    ((3, 4), {"ord": -1}), ((3, 4), {"ord": 2}), ((3, 4), {"ord": -2}), ((3, 4), {"ord": onp.inf}),
    ((3, 4), {"ord": -onp.inf}), ((2, 3, 4), {}), ((2, 3, 4), {"axis": 1}),
    ((2, 3, 4), {"axis": -1, "ord": 1, "keepdims": True}), ((2, 3, 4), {"axis": (0, 2), "ord": "nuc"}),
    ((2, 3, 4), {"axis": (1, 2), "ord": 2, "keepdims": True}),
]


@pytest.mark.parametrize("shape,kwargs", NORMS, ids=[f"{s}-{k}" for s, k in NORMS])
def test_norm(shape, kwargs):
    x = RNG.standard_normal(shape).astype(onp.float32)
    _check(la.norm(keep(x), **kwargs), onp.linalg.norm(x, **kwargs), onp.float32)


def test_norm_positional_and_float64():
    x = RNG.standard_normal((3, 4))
    got = la.norm(keep(x), 1, 0, True)
    _check(got, onp.linalg.norm(x, 1, 0, True), onp.float64)


def test_norm_mxnet_flag_attribute():
    # MXNet's symbol JSON encodes ord='nuc' as flag=2
    x = RNG.standard_normal((3, 4)).astype(onp.float32)
    op = mx.operator.get_op("_npi_norm")
    got = mx._invoke.invoke(op, (keep(x),), op.decode_params({"axis": "(0, 1)", "flag": "2"}),
                            mx.np.ndarray)
    onp.testing.assert_allclose(got.asnumpy(), onp.linalg.norm(x, "nuc"), rtol=1e-5)


@pytest.mark.parametrize("name,builder", [
    ("det", lambda: RNG.integers(-3, 4, (3, 3))), ("inv", lambda: onp.array([[2, 1], [1, 3]])),
    ("norm", lambda: RNG.integers(-3, 4, (4,))), ("eigvalsh", lambda: onp.array([[2, 1], [1, 3]])),
])
def test_integer_input_gives_float32(name, builder):
    x = builder()
    got = getattr(la, name)(keep(x))
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), getattr(onp.linalg, name)(x), rtol=1e-5, atol=1e-5)


def test_matrix_power_keeps_integers():
    x = onp.array([[1, 2], [3, 4]], dtype=onp.int64)
    got = la.matrix_power(keep(x), 3)
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), onp.linalg.matrix_power(x, 3))


def test_multi_dot():
    shapes = [(3,), (3, 4), (4, 2), (2, 5), (5,)]
    xs = [RNG.standard_normal(s).astype(onp.float32) for s in shapes]
    _check(la.multi_dot([keep(x) for x in xs]), onp.linalg.multi_dot(xs), onp.float32)
    ys = [RNG.standard_normal(s) for s in [(2, 3), (3, 4), (4, 2)]]
    _check(la.multi_dot([keep(y) for y in ys]), onp.linalg.multi_dot(ys), onp.float64)


@pytest.mark.parametrize("dtype", [onp.float32, onp.float64])
@pytest.mark.parametrize("shape,kwargs", [((4, 3), {}), ((2, 3, 5), {}), ((2, 3, 5), {"full_matrices": True}),
                                          ((3, 3), {"hermitian": True})])
def test_svd(shape, kwargs, dtype):
    a = (_spd(*shape) if kwargs.get("hermitian") else RNG.standard_normal(shape)).astype(dtype)
    u, s, vh = la.svd(keep(a), **kwargs)
    wu, ws, wvh = onp.linalg.svd(a, **{"full_matrices": False, **kwargs})  # MXNet 2.0's svd(a) is reduced
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    assert u.dtype == s.dtype == vh.dtype == dtype
    onp.testing.assert_allclose(s.asnumpy(), ws, **_tol(dtype))
    k = min(shape[-2:])  # singular vectors are defined up to sign: compare the reconstruction
    recon = (u.asnumpy()[..., :k] * s.asnumpy()[..., None, :]) @ vh.asnumpy()[..., :k, :]
    onp.testing.assert_allclose(recon, a, **_tol(dtype))
    only_s = la.svd(keep(a), compute_uv=False)
    onp.testing.assert_allclose(only_s.asnumpy(), onp.linalg.svd(a, compute_uv=False), **_tol(dtype))


@pytest.mark.parametrize("mode", ["reduced", "complete", "r", "raw"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_qr(mode, shape):
    a = RNG.standard_normal(shape)
    got, want = la.qr(keep(a), mode=mode), onp.linalg.qr(a, mode=mode)
    if mode == "r":
        assert got.shape == want.shape
        onp.testing.assert_allclose(onp.abs(got.asnumpy()), onp.abs(want), atol=1e-9)
        return
    (q, r), (wq, wr) = got, want
    assert (q.shape, r.shape) == (wq.shape, wr.shape) and q.dtype == onp.float64
    if mode == "raw":
        onp.testing.assert_allclose(q.asnumpy(), wq, atol=1e-9)
        onp.testing.assert_allclose(r.asnumpy(), wr, atol=1e-9)
    else:
        onp.testing.assert_allclose(q.asnumpy() @ r.asnumpy(), a, atol=1e-9)
        onp.testing.assert_allclose(onp.triu(r.asnumpy()), r.asnumpy())


@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_reads_one_triangle(UPLO):
    a = RNG.standard_normal((2, 3, 3)).astype(onp.float32)  # not symmetric: only UPLO's triangle counts
    w, v = la.eigh(keep(a), UPLO=UPLO)
    ww, wv = onp.linalg.eigh(a, UPLO=UPLO)
    assert w.dtype == v.dtype == onp.float32
    onp.testing.assert_allclose(w.asnumpy(), ww, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(onp.abs(onp.sum(v.asnumpy() * wv, axis=-2)), 1.0, atol=1e-4)


def test_eig_real_and_complex():
    sym = _spd(3, 3)
    w, v = la.eig(keep(sym))
    assert w.dtype == v.dtype == onp.float64  # all eigenvalues real: real results, as NumPy
    onp.testing.assert_allclose(sym @ v.asnumpy(), v.asnumpy() * w.asnumpy(), atol=1e-9)
    rot = onp.array([[0.0, -1.0], [1.0, 0.0]], dtype=onp.float32)
    w = la.eigvals(keep(rot))
    assert w.dtype == onp.complex64
    onp.testing.assert_allclose(onp.sort_complex(w.asnumpy()), onp.sort_complex(onp.linalg.eigvals(rot)),
                                atol=1e-6)
    w, v = la.eig(keep(rot))
    onp.testing.assert_allclose(rot @ v.asnumpy(), v.asnumpy() * w.asnumpy(), atol=1e-5)


@pytest.mark.parametrize("shape_a,shape_b", [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3,))])
def test_lstsq(shape_a, shape_b):
    a, b = RNG.standard_normal(shape_a), RNG.standard_normal(shape_b)
    got, want = la.lstsq(keep(a), keep(b)), onp.linalg.lstsq(a, b)
    for g, w in zip(got, want):
        assert g.shape == onp.shape(w)
        onp.testing.assert_allclose(g.asnumpy(), w, atol=1e-9)
    assert got[2].dtype == onp.int32


def test_lstsq_rank_deficient_has_empty_residuals():
    a = onp.ones((4, 2), dtype=onp.float32)
    x, resid, rank, s = la.lstsq(keep(a), keep(onp.arange(4.0, dtype=onp.float32)), rcond=None)
    assert resid.shape == (0,) and int(rank) == 1 and x.dtype == onp.float32


BAD = [
    ("inv", [(2, 3)], "inv: expected square matrices in the last two dimensions, got shape \\(2, 3\\)"),
    ("det", [(4,)], "det: expected a matrix"),
    ("cholesky", [(3, 4)], "cholesky: expected square"),
    ("slogdet", [(2, 2, 3)], "slogdet: expected square"),
    ("eigh", [(3, 2)], "eigh: expected square"),
    ("eig", [(3, 2)], "eig: expected square"),
    ("solve", [(3, 3), (4,)], r"solve: a of shape \(3, 3\) needs b of shape \(3,\) or \(\.\.\., 3, K\), got \(4,\)"),
    ("solve", [(3, 3), (2, 4)], "solve: a of shape"),
    ("solve", [(2, 3), (2,)], "solve: expected square"),
    ("lstsq", [(3, 2), (4,)], "lstsq: expected a of shape"),
    ("tensorinv", [(2, 3, 4)], "tensorinv: the first 2 dimensions"),
    ("tensorsolve", [(2, 3, 4), (2,)], "tensorsolve: a of shape"),
    ("matrix_power", [(2, 3)], "matrix_power: expected square"),
    ("svd", [(3,)], "svd: expected a matrix"),
]


@pytest.mark.parametrize("name,shapes,message", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_shapes(name, shapes, message):
    args = [keep(RNG.standard_normal(s).astype(onp.float32)) for s in shapes]
    with pytest.raises(ValueError, match=message):
        getattr(la, name)(*args)


def test_bad_parameters():
    a = keep(_spd(3, 3))
    with pytest.raises(ValueError, match="eigh: UPLO must be 'L' or 'U'"):
        la.eigh(a, UPLO="X")
    with pytest.raises(ValueError, match="qr: mode must be"):
        la.qr(a, mode="full")
    with pytest.raises(ValueError, match="multi_dot: expected at least two arrays"):
        la.multi_dot([a])
    with pytest.raises(ValueError, match="multi_dot: the first and last arrays"):
        la.multi_dot([a, keep(onp.ones((3, 3, 3))), a])
    with pytest.raises(ValueError, match="tensorinv: ind must be a positive"):
        la.tensorinv(a, ind=0)
    with pytest.raises(mx.MXNetError):
        la.norm(keep(onp.ones(3)), ord="fro")


def test_out_and_symbol_names():
    a = _general(3, 3).astype(onp.float32)
    out = keep(onp.zeros((3, 3), onp.float32))
    assert la.inv(keep(a), out=out) is out
    onp.testing.assert_allclose(out.asnumpy(), onp.linalg.inv(a), rtol=1e-4, atol=1e-5)
    for name in ("_npi_norm", "_npi_svd", "_npi_cholesky", "_npi_qr", "_npi_inv", "_npi_det", "_npi_slogdet",
                 "_npi_solve", "_npi_lstsq", "_npi_pinv", "_npi_eig", "_npi_eigh", "_npi_eigvals",
                 "_npi_eigvalsh", "_npi_matrix_rank", "_npi_tensorinv", "_npi_tensorsolve"):
        assert mx.operator.get_op(name).name == name
