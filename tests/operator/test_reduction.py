"""Reductions, statistics and products against NumPy: values, shapes, MXNet's dtypes, bad input."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError, MXNetTypeError, MXNetValueError
from mxjax._ndarray import invoke
from mxjax.operator import get_op

np = mx.np
RNG = onp.random.default_rng(0)


def _make(spec, dtype):
    """An input: a shape filled with random values of dtype ('float32nan' adds NaNs), or a given array."""
    if not isinstance(spec, tuple):
        return onp.asarray(spec)
    nan = dtype.endswith("nan")
    dtype = onp.dtype(dtype[:-3] if nan else dtype)
    if dtype == onp.bool_:
        return RNG.random(spec) > 0.5
    if dtype.kind in "iu":
        return RNG.integers(0, 5, size=spec).astype(dtype)
    x = RNG.uniform(-3, 3, size=spec).astype(dtype)
    if nan and x.size:
        x.reshape(-1)[:: 3] = onp.nan
    return x


def _check(got, want, dtype):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w, d in zip(got, want, dtype if isinstance(dtype, tuple) else (dtype,) * len(want)):
            _check(g, w, d)
        return
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == onp.dtype(dtype), (got.dtype, dtype)
    g = got.asnumpy()
    if want.dtype.kind in "fc" or g.dtype.kind in "fc":
        onp.testing.assert_allclose(g.astype(onp.float64), want.astype(onp.float64), rtol=2e-5, atol=2e-5)
    else:
        onp.testing.assert_array_equal(g, want)


F, I, B, FN = "float32", "int32", "bool", "float32nan"
V = onp.array([0.5, 1.5, 2.0, 3.5])          # a sorted 1-D float32-valued array
P = onp.array([1.0, -2.0, 0.5], onp.float32)  # polynomial coefficients

# (mx.np name, NumPy reference, inputs (shapes or arrays), input dtype, kwargs, dtype MXNet gives)
CASES = [
    ("sum", onp.sum, [(2, 3, 4)], F, dict(axis=1), "float32"),
    ("sum", onp.sum, [(2, 3, 4)], F, dict(axis=(0, 2), keepdims=True), "float32"),
    ("sum", onp.sum, [(2, 3)], I, dict(), "int32"),                 # MXNet keeps int32 (NumPy: int64)
    ("sum", onp.sum, [(2, 3)], B, dict(axis=0), "int64"),
    ("sum", onp.sum, [(2, 3)], I, dict(axis=-1, dtype="float64"), "float64"),
    ("sum", onp.sum, [(0, 3)], F, dict(axis=0, initial=1.5), "float32"),
    ("prod", onp.prod, [(2, 3)], F, dict(axis=0), "float32"),
    ("prod", onp.prod, [(2, 3)], I, dict(), "int32"),
    ("max", onp.max, [(2, 3, 4)], F, dict(axis=(1, 2)), "float32"),
    ("amax", onp.amax, [(2, 3)], I, dict(axis=1, keepdims=True), "int32"),
    ("min", onp.min, [(2, 3)], F, dict(), "float32"),
    ("amin", onp.amin, [(0, 3)], F, dict(axis=0, initial=0.0), "float32"),
    ("ptp", onp.ptp, [(3, 4)], F, dict(axis=0), "float32"),
    ("mean", onp.mean, [(2, 3)], F, dict(axis=0), "float32"),
    ("mean", onp.mean, [(2, 3)], I, dict(), "float32"),             # integer mean: default float32
    ("mean", onp.mean, [(2, 3)], F, dict(axis=1, dtype="float64", keepdims=True), "float64"),
    ("std", onp.std, [(3, 4)], F, dict(axis=1, ddof=1), "float32"),
    ("std", onp.std, [(3, 4)], I, dict(), "float32"),
    ("var", onp.var, [(3, 4)], F, dict(axis=(0, 1), keepdims=True), "float32"),
    ("var", onp.var, [(3, 4)], I, dict(axis=0, ddof=2), "float32"),
    ("argmax", onp.argmax, [(3, 4)], F, dict(), "int64"),
    ("argmax", onp.argmax, [(3, 4)], I, dict(axis=0), "int64"),
    ("argmin", onp.argmin, [(3, 4)], F, dict(axis=1, keepdims=True), "int64"),
    ("nanargmax", onp.nanargmax, [(3, 4)], FN, dict(axis=1), "int64"),
    ("nanargmin", onp.nanargmin, [(3, 4)], FN, dict(), "int64"),
    ("all", onp.all, [(3, 4)], B, dict(axis=0), "bool"),
    ("all", onp.all, [(3, 4)], F, dict(), "bool"),
    ("any", onp.any, [(3, 4)], B, dict(axis=(0, 1), keepdims=True), "bool"),
    ("any", onp.any, [(3, 4)], I, dict(axis=1), "bool"),
    ("count_nonzero", onp.count_nonzero, [(3, 4)], I, dict(axis=0), "int64"),
    ("count_nonzero", onp.count_nonzero, [(3, 4)], B, dict(), "int64"),
    ("cumsum", onp.cumsum, [(3, 4)], F, dict(), "float32"),
    ("cumsum", onp.cumsum, [(3, 4)], I, dict(axis=0), "int32"),
    ("cumsum", onp.cumsum, [(3, 4)], B, dict(axis=1), "int64"),
    ("cumprod", onp.cumprod, [(3, 4)], F, dict(axis=1), "float32"),
    ("cumprod", onp.cumprod, [(3, 4)], I, dict(dtype="float64"), "float64"),
    ("nansum", onp.nansum, [(3, 4)], FN, dict(axis=0), "float32"),
    ("nanprod", onp.nanprod, [(3, 4)], FN, dict(), "float32"),
    ("nanmax", onp.nanmax, [(3, 4)], FN, dict(axis=1), "float32"),
    ("nanmin", onp.nanmin, [(3, 4)], FN, dict(axis=0, keepdims=True), "float32"),
    ("nanmean", onp.nanmean, [(3, 4)], FN, dict(axis=1), "float32"),
    ("nanmean", onp.nanmean, [(3, 4)], I, dict(), "float32"),
    ("nanstd", onp.nanstd, [(3, 4)], FN, dict(axis=0, ddof=1), "float32"),
    ("nanvar", onp.nanvar, [(3, 4)], FN, dict(), "float32"),
    ("nancumsum", onp.nancumsum, [(3, 4)], FN, dict(axis=1), "float32"),
    ("nancumprod", onp.nancumprod, [(3, 4)], FN, dict(), "float32"),
    ("median", onp.median, [(3, 4)], F, dict(axis=1), "float32"),
    ("median", onp.median, [(3, 5)], I, dict(), "float32"),
    ("nanmedian", onp.nanmedian, [(3, 4)], FN, dict(axis=0, keepdims=True), "float32"),
    ("percentile", onp.percentile, [(3, 4), onp.array([10.0, 50.0, 90.0])], F, dict(axis=1), "float32"),
    ("percentile", onp.percentile, [(3, 4)], I, dict(q=25.0, method="lower"), "float32"),
    ("quantile", onp.quantile, [(3, 4)], F, dict(q=0.3, axis=0, keepdims=True), "float32"),
    ("quantile", onp.quantile, [(3, 4), onp.array([0.0, 0.5, 1.0])], F, dict(method="midpoint"), "float32"),
    ("nanpercentile", onp.nanpercentile, [(3, 4)], FN, dict(q=40.0, axis=1), "float32"),
    ("nanquantile", onp.nanquantile, [(3, 4)], FN, dict(q=0.75), "float32"),
    ("average", onp.average, [(3, 4)], F, dict(axis=1), "float32"),
    ("average", onp.average, [(3, 4)], I, dict(), "float32"),
    ("average", onp.average, [(3, 4)], F, dict(axis=0, weights=onp.array([1.0, 2.0, 3.0], onp.float32),
                                                returned=True), ("float32", "float32")),
    ("bincount", onp.bincount, [onp.array([0, 1, 1, 4], onp.int64)], None, dict(), "int64"),
    ("bincount", onp.bincount, [onp.array([2, 1, 2], onp.int32)], None,
     dict(weights=onp.array([0.5, 1.0, 2.0], onp.float32), minlength=5), "float32"),
    ("diff", onp.diff, [(3, 5)], F, dict(), "float32"),
    ("diff", onp.diff, [(3, 5)], I, dict(n=2, axis=0), "int32"),
    ("diff", onp.diff, [(4,)], F, dict(prepend=0.0, append=onp.array([1.0, 2.0], onp.float32)), "float32"),
    ("ediff1d", onp.ediff1d, [(2, 3)], F, dict(), "float32"),
    ("ediff1d", onp.ediff1d, [(4,)], F, dict(to_begin=onp.array([-1.0], onp.float32),
                                           to_end=onp.array([9.0, 8.0], onp.float32)), "float32"),
    ("interp", onp.interp, [onp.array([0.0, 1.0, 2.5, 4.0], onp.float32), V.astype(onp.float32),
                            onp.array([1.0, 2.0, 0.0, 5.0], onp.float32)], None, dict(), "float32"),
    ("interp", onp.interp, [onp.array([-1.0, 1.0, 9.0], onp.float32), V.astype(onp.float32),
                            onp.array([1.0, 2.0, 0.0, 5.0], onp.float32)], None,
     dict(left=-5.0, right=7.0), "float32"),
    ("polyval", onp.polyval, [P, (3, 2)], F, dict(), "float32"),
    ("polyval", onp.polyval, [onp.array([1, 2, 3], onp.int32), (4,)], I, dict(), "int32"),
    ("convolve", onp.convolve, [(5,), (3,)], F, dict(), "float32"),
    ("convolve", onp.convolve, [(5,), (3,)], F, dict(mode="same"), "float32"),
    ("correlate", onp.correlate, [(5,), (3,)], F, dict(), "float32"),
    ("correlate", onp.correlate, [(5,), (2,)], F, dict(mode="full"), "float32"),
    ("trapezoid", onp.trapezoid, [(3, 4)], F, dict(axis=0), "float32"),
    ("trapezoid", onp.trapezoid, [(4,), V.astype(onp.float32)], F, dict(), "float32"),
    ("trapezoid", onp.trapezoid, [(3, 4)], I, dict(dx=0.5), "float32"),
    ("matmul", onp.matmul, [(2, 1, 3, 4), (5, 4, 2)], F, dict(), "float32"),
    ("dot", onp.dot, [(3, 4), (4,)], F, dict(), "float32"),
    ("inner", onp.inner, [(2, 3), (4, 3)], F, dict(), "float32"),
    ("inner", onp.inner, [(3,), (3,)], I, dict(), "int32"),
    ("outer", onp.outer, [(3,), (2, 2)], F, dict(), "float32"),
    ("kron", onp.kron, [(2, 2), (3, 1)], F, dict(), "float32"),
    ("vdot", onp.vdot, [(2, 3), (3, 2)], F, dict(), "float32"),
    ("cross", onp.cross, [(4, 3), (3,)], F, dict(), "float32"),
    ("cross", onp.cross, [(3, 2), (3, 2)], F, dict(axisa=0, axisb=0), "float32"),
    ("cross", onp.cross, [(2, 3, 5), (2, 3, 5)], F, dict(axis=1), "float32"),
    ("tensordot", onp.tensordot, [(2, 3, 4), (3, 4, 5)], F, dict(), "float32"),
    ("tensordot", onp.tensordot, [(2, 3, 4), (4, 2)], F, dict(axes=[[0, 2], [1, 0]]), "float32"),
    ("tensordot", onp.tensordot, [(2, 3), (4,)], F, dict(axes=0), "float32"),
    ("allclose", onp.allclose, [(3, 4), (3, 4)], F, dict(), "bool"),
    ("isclose", onp.isclose, [(3, 4), (4,)], F, dict(rtol=0.5, atol=0.5), "bool"),
    ("array_equal", onp.array_equal, [(3, 4), (3, 4)], I, dict(), "bool"),
    ("array_equal", onp.array_equal, [(3, 4), (4, 3)], F, dict(), "bool"),
    ("array_equiv", onp.array_equiv, [(3, 4), (4,)], B, dict(), "bool"),
]


def _ids(case):
    return f"{case[0]}-{case[3]}-{'-'.join(f'{k}' for k in case[4])}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_against_numpy(case):
    name, ref, specs, dtype, kwargs, mx_dtype = case
    arrays = [_make(s, dtype) for s in specs]
    want = ref(*arrays, **kwargs)
    mx_kwargs = {k: mx.np.array(v, dtype=v.dtype) if isinstance(v, onp.ndarray) else v for k, v in kwargs.items()}
    got = getattr(np, name)(*(mx.np.array(a, dtype=a.dtype) for a in arrays), **mx_kwargs)
    _check(got, want, mx_dtype)


def test_allclose_and_equal_are_true_when_equal():
    x = _make((3, 4), F)
    assert bool(np.allclose(np.array(x), np.array(x + 1e-7)))
    assert np.allclose(np.array(x), np.array(x)).shape == ()  # a 0-d bool array, as in MXNet
    assert bool(np.array_equal(np.array(x), np.array(x)))
    assert bool(np.allclose(np.array([onp.nan]), np.array([onp.nan]), equal_nan=True))


def test_positional_arguments_follow_numpy():
    x = _make((2, 3, 4), F)
    a = np.array(x)
    _check(np.sum(a, 1), onp.sum(x, 1), "float32")
    _check(np.sum(a, (0, 2), "float64"), onp.sum(x, (0, 2), "float64"), "float64")
    _check(np.max(a, 2), onp.max(x, 2), "float32")
    _check(np.std(a, 0, None), onp.std(x, 0, None), "float32")
    _check(np.argmin(a, -1), onp.argmin(x, -1), "int64")
    _check(np.cumsum(a, 0), onp.cumsum(x, 0), "float32")
    _check(np.percentile(a, 30, 1), onp.percentile(x, 30, 1), "float32")
    _check(np.quantile(a, [0.25, 0.75], 2), onp.quantile(x, [0.25, 0.75], 2), "float32")
    _check(np.average(a, 0, None, True), onp.average(x, 0, None, True), ("float32", "float32"))
    _check(np.diff(a, 1, 0), onp.diff(x, 1, 0), "float32")


def test_positional_out_slot():
    x = _make((2, 3, 4), F)
    a, o = np.array(x), np.zeros((3, 4))
    assert np.sum(a, 0, None, o) is o
    _check(o, x.sum(0), "float32")
    _check(np.max(a, 2, None, True), onp.max(x, 2, None, True), "float32")
    _check(np.std(a, 0, None, None, 1, True), onp.std(x, 0, None, None, 1, True), "float32")


def test_out_and_einsum():
    x, y = _make((2, 3), F), _make((3, 4), F)
    out = np.zeros((2, 4))
    res = np.einsum("ij,jk->ik", np.array(x), np.array(y), out=out)
    assert res is out
    _check(out, onp.einsum("ij,jk->ik", x, y), "float32")
    _check(np.einsum("ii", np.array(x[:, :2])), onp.einsum("ii", x[:, :2]), "float32")
    _check(np.einsum("ij,ij->i", np.array(x), np.array(x), optimize=True), onp.einsum("ij,ij->i", x, x),
           "float32")
    _check(np.einsum("...j,j", np.array(y), np.array(y[0])), onp.einsum("...j,j", y, y[0]), "float32")
    s = np.zeros((3,))
    np.sum(np.array(x), axis=0, out=s)
    _check(s, x.sum(0), "float32")


def test_histogram():
    x = RNG.uniform(0, 10, size=20).astype(onp.float32)
    w = RNG.uniform(0, 1, size=20).astype(onp.float32)
    _check(np.histogram(np.array(x), bins=3, range=(2, 8)), onp.histogram(x, bins=3, range=(2, 8)),
           ("int64", "float32"))
    edges = onp.array([0.0, 1.0, 5.0, 10.0], onp.float32)
    _check(np.histogram(np.array(x), np.array(edges), weights=np.array(w)),
           onp.histogram(x, edges, weights=w), ("float32", "float32"))
    xi = RNG.integers(0, 9, size=10)
    _check(np.histogram(np.array(xi), 4, density=True), onp.histogram(xi, 4, density=True),
           ("float32", "float32"))


def test_mxnet_aliases_and_json_params():
    x = _make((2, 3), F)
    op = get_op("_np_sum")
    assert op is get_op("sum") is get_op("_npi_sum")
    params = op.decode_params({"axis": "(1,)", "dtype": "None", "keepdims": "True", "initial": "None"})
    _check(invoke(op, [np.array(x)], params, np.ndarray), x.sum(1, keepdims=True), "float32")
    for alias, name in [("_np_max", "max"), ("_npi_mean", "mean"), ("_npi_std", "std"), ("_npi_var", "var"),
                        ("_npi_argmax", "argmax"), ("_npi_argmin", "argmin"), ("_np_all", "all"),
                        ("_np_any", "any"), ("_np_cumsum", "cumsum"), ("_np_prod", "prod"), ("_np_min", "min"),
                        ("_npi_average", "average"), ("_npi_percentile", "percentile"), ("_npi_einsum", "einsum"),
                        ("_npi_histogram", "histogram"), ("_npi_bincount", "bincount"), ("_npi_diff", "diff"),
                        ("_npi_cross", "cross"), ("_npi_kron", "kron"), ("_npi_polyval", "polyval"),
                        ("_npi_tensordot_int_axes", "tensordot"), ("_np_sometrue", "any")]:
        assert get_op(alias) is get_op(name)
    # MXNet's percentile stores a scalar q as a parameter
    pct = get_op("_npi_percentile")
    p = pct.decode_params({"axis": "None", "interpolation": "linear", "keepdims": "False", "q_scalar": "25"})
    _check(invoke(pct, [np.array(x), None], p, np.ndarray), onp.percentile(x, 25), "float32")
    # MXNet's _npi_average has two outputs: the average and the sum of weights
    assert get_op("average").num_outputs == 2


def test_default_float_follows_dtype_mode():
    from mxjax import _config
    x = onp.arange(6, dtype=onp.int32).reshape(2, 3)
    _config.set_np_default_dtype(True)
    try:
        assert np.mean(np.array(x), axis=0).dtype == onp.float64
        assert np.median(np.array(x), axis=0).dtype == onp.float64
        assert np.average(np.array(x), axis=1).dtype == onp.float64
    finally:
        _config.set_np_default_dtype(False)
    assert np.mean(np.array(x), axis=0).dtype == onp.float32


BAD = [
    (lambda: np.sum(np.ones((2, 3)), axis=2), MXNetValueError, r"sum: axis 2 is out of bounds .*dimension 2"),
    (lambda: np.mean(np.ones((2, 3)), axis=(0, 0)), MXNetValueError, "mean: repeated axis"),
    (lambda: np.argmax(np.ones((2, 3)), axis=-3), MXNetValueError, r"argmax: axis -3 is out of bounds"),
    (lambda: np.cumsum(np.ones(()), axis=0), MXNetValueError, "cumsum: axis 0 is out of bounds"),
    (lambda: np.max(np.ones((0, 3))), MXNetValueError, "max: zero-size array"),
    (lambda: np.argmin(np.ones((0, 3)), axis=0), MXNetValueError, "argmin: attempt to get argmin of an empty"),
    (lambda: np.std(np.ones((2, 3)), axis=1.5), MXNetValueError, "std: axis must be an int"),
    (lambda: np.allclose(np.ones((2, 3)), np.ones((4,))), MXNetValueError, r"allclose: .*\(2, 3\)"),
    (lambda: np.percentile(np.ones(3), 150), MXNetValueError, r"percentile: q must be in the range \[0, 100\]"),
    (lambda: np.quantile(np.ones(3), [0.5, 2]), MXNetValueError, r"quantile: q must be in the range \[0, 1\]"),
    (lambda: np.average(np.ones((2, 3)), weights=np.ones(3)), MXNetValueError, "average: Axis must be specified"),
    (lambda: np.bincount(np.array([1, -1], dtype="int32")), MXNetValueError, "bincount: x must contain only non-n"),
    (lambda: np.bincount(np.array([1.0, 2.0])), MXNetTypeError, "bincount: expected an integer array"),
    (lambda: np.bincount(np.ones((2, 2), dtype="int32")), MXNetValueError, r"bincount: expected a 1-D .*\(2, 2\)"),
    (lambda: np.diff(np.ones(3), n=-1), MXNetValueError, "diff: order n must be non-negative"),
    (lambda: np.interp(np.ones(2), np.ones(3), np.ones(4)), MXNetValueError, "interp: xp and fp must be 1-D"),
    (lambda: np.polyval(np.ones((2, 2)), np.ones(3)), MXNetValueError, "polyval: coefficients must be 1-D"),
    (lambda: np.convolve(np.ones((2, 2)), np.ones(3)), MXNetValueError, "convolve: expected two 1-D arrays"),
    (lambda: np.correlate(np.ones(0), np.ones(3)), MXNetValueError, "correlate: inputs cannot be empty"),
    (lambda: np.histogram(np.ones(3), bins=0), MXNetValueError, "histogram: the number of bins must be positive"),
    (lambda: np.histogram(np.ones(3), bins="auto"), MXNetValueError, "histogram: bin estimators"),
    (lambda: np.histogram(np.ones(3), range=(2, 1)), MXNetValueError, "histogram: range must be"),
    (lambda: np.einsum("ij,jk", np.ones((2, 3))), MXNetValueError, "einsum: subscripts 'ij,jk' name 2 operand"),
    (lambda: np.einsum(np.ones(2), [0]), MXNetTypeError, "einsum: the first argument must be a subscripts"),
    (lambda: np.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 2))), MXNetValueError, "einsum: "),
    (lambda: np.tensordot(np.ones((2, 3)), np.ones((2, 3)), axes=3), MXNetValueError, r"tensordot: axes=3"),
    (lambda: np.tensordot(np.ones((2, 3)), np.ones((2, 3)), axes=([1], [0])), MXNetValueError,
     r"tensordot: shape-mismatch .*\(2, 3\)"),
    (lambda: np.cross(np.ones(4), np.ones(3)), MXNetValueError, "cross: incompatible dimensions"),
    (lambda: np.vdot(np.ones(4), np.ones(3)), MXNetValueError, "vdot: arrays of shapes"),
    (lambda: np.matmul(np.ones((2, 3)), np.ones((2, 3))), MXNetValueError, r"matmul: .*\(2, 3\)"),
    (lambda: np.mean(np.ones(3), initial=1.0), MXNetValueError, "mean: initial= is not supported"),
    (lambda: np.sum(np.ones(3), 0, None, None, False, 0.0, 1), TypeError, "at most"),
]


@pytest.mark.parametrize("call,error,match", BAD, ids=[m[:30] for _, _, m in BAD])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
    assert issubclass(error, (MXNetError, TypeError))
