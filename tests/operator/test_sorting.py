"""Sorting, searching and set operations against NumPy: values, shapes, int64 indices, dynamic shapes, bad input."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError, MXNetValueError
from mxjax.operator import get_op

np = mx.np
RNG = onp.random.default_rng(1)

X = RNG.uniform(-3, 3, size=(3, 4)).astype(onp.float32)          # distinct values
T = onp.array([[3, 1, 3, 0], [1, 1, 2, 0], [3, 1, 3, 0]], onp.int32)  # ties, a repeated row
S = onp.array([0.5, 1.0, 1.0, 2.5, 4.0], onp.float32)               # sorted, with a repeat
M = onp.array([[0, 2, 0], [1, 0, 0]], onp.int64)                    # a few non-zeros


def _mx(a):
    return np.array(a, dtype=onp.asarray(a).dtype)


def _check(got, want, dtype=None):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            _check(g, w, dtype[i] if isinstance(dtype, tuple) else dtype)
        return
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == onp.dtype(dtype if dtype is not None else want.dtype), (got.dtype, dtype)
    onp.testing.assert_array_equal(got.asnumpy(), want)


def _stable_argsort(a, axis=-1):
    return onp.argsort(a, axis=axis, kind="stable")


# (mx.np name, NumPy reference, inputs, kwargs, MXNet dtype(s); None: NumPy's dtype)
CASES = [
    ("sort", onp.sort, [X], dict(), None),
    ("sort", onp.sort, [X], dict(axis=0), None),
    ("sort", onp.sort, [T], dict(axis=None), None),
    ("sort", lambda a, axis, descending: -onp.sort(-a, axis=axis), [X], dict(axis=1, descending=True), None),
    ("argsort", _stable_argsort, [X], dict(), "int64"),
    ("argsort", _stable_argsort, [T], dict(axis=0), "int64"),           # ties: NumPy's stable order
    ("argsort", _stable_argsort, [T], dict(axis=None), "int64"),
    ("argsort", lambda a, axis, descending: onp.argsort(-a, axis=axis), [X], dict(axis=0, descending=True), "int64"),
    ("lexsort", lambda keys: onp.lexsort(keys), [(T[0], T[1])], dict(), "int64"),
    ("lexsort", lambda keys: onp.lexsort(keys), [T], dict(), "int64"),  # a 2-D array: one key per row
    ("searchsorted", onp.searchsorted, [S, X], dict(), "int64"),
    ("searchsorted", onp.searchsorted, [S, onp.array([1.0, 4.0, 9.0], onp.float32)], dict(side="right"), "int64"),
    ("searchsorted", onp.searchsorted, [S[::-1].copy(), onp.float32(1.0)],
     dict(sorter=onp.arange(5)[::-1].copy()), "int64"),
    ("nonzero", onp.nonzero, [M], dict(), ("int64", "int64")),
    ("nonzero", onp.nonzero, [onp.zeros(3, onp.float32)], dict(), ("int64",)),
    ("flatnonzero", onp.flatnonzero, [M], dict(), "int64"),
    ("argwhere", onp.argwhere, [M], dict(), "int64"),
    ("argwhere", onp.argwhere, [T > 1], dict(), "int64"),
    ("unique", onp.unique, [T], dict(), None),
    ("unique", onp.unique, [X], dict(), None),
    ("unique", onp.unique, [T], dict(return_index=True, return_inverse=True, return_counts=True),
     (None, "int64", "int64", "int64")),
    ("unique", onp.unique, [T], dict(axis=0, return_counts=True), (None, "int64")),
    ("unique", onp.unique, [T], dict(axis=1, return_inverse=True), (None, "int64")),
    ("unique", onp.unique, [onp.array([1.0, onp.nan, 2.0, onp.nan], onp.float32)], dict(), None),
    ("unique", onp.unique, [onp.array([True, False, True])], dict(return_inverse=True), (None, "int64")),
    ("searchsorted", onp.searchsorted, [onp.array([1, 3, 5], onp.int32), onp.array([[0, 3], [6, 5]], onp.int32)],
     dict(side="right"), "int64"),
    ("isin", onp.isin, [X, X[1]], dict(), "bool"),
    ("isin", onp.isin, [T, onp.array([1, 3], onp.int32)], dict(), "bool"),
    ("isin", onp.isin, [T, onp.array([0, 2], onp.int64)], dict(invert=True), "bool"),
    ("intersect1d", onp.intersect1d, [T[0], T[1]], dict(), None),
    ("intersect1d", onp.intersect1d, [T[1], onp.array([2, 0, 7], onp.int32)], dict(return_indices=True),
     (None, "int64", "int64")),
    ("union1d", onp.union1d, [T[0], onp.array([7, 1], onp.int32)], dict(), None),
    ("setdiff1d", onp.setdiff1d, [T.ravel(), onp.array([1, 9], onp.int32)], dict(), None),
    ("setdiff1d", onp.setdiff1d, [onp.array([5, 1, 3], onp.int32), onp.array([3], onp.int32)],
     dict(assume_unique=True), None),
    ("setxor1d", onp.setxor1d, [T[0], T[1]], dict(), None),
]


def _ids(case):
    return f"{case[0]}-{'-'.join(case[3])}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_against_numpy(case):
    name, ref, inputs, kwargs, dtype = case
    want = ref(*inputs, **kwargs)
    mx_inputs = [tuple(_mx(k) for k in a) if isinstance(a, tuple) else _mx(a) for a in inputs]
    mx_kwargs = {k: _mx(v) if isinstance(v, onp.ndarray) else v for k, v in kwargs.items()}
    got = getattr(np, name)(*mx_inputs, **mx_kwargs)
    if isinstance(want, tuple) and isinstance(dtype, tuple):
        dtype = tuple(d if d is not None else onp.asarray(w).dtype for d, w in zip(dtype, want))
    _check(got, want, dtype)


@pytest.mark.parametrize("name", ["partition", "argpartition"])
@pytest.mark.parametrize("kth,axis", [(1, -1), (-1, 0), ((0, 2), 1)])
def test_partition(name, kth, axis):
    """NumPy leaves the order within each side unspecified: check the partition property and the pivots."""
    got = getattr(np, name)(_mx(X), kth, axis=axis)
    assert got.shape == X.shape
    values = onp.take_along_axis(X, got.asnumpy(), axis) if name == "argpartition" else got.asnumpy()
    if name == "argpartition":
        assert got.dtype == onp.int64
    want = onp.sort(X, axis=axis)
    n = X.shape[axis]
    for k in (kth if isinstance(kth, tuple) else (kth,)):
        k = k % n
        pivot = onp.take(values, [k], axis)
        onp.testing.assert_array_equal(pivot, onp.take(want, [k], axis))
        assert (onp.take(values, range(k), axis) <= pivot).all()
        assert (onp.take(values, range(k + 1, n), axis) >= pivot).all()
    onp.testing.assert_array_equal(onp.sort(values, axis=axis), want)


def test_nonzero_results_index_the_array():
    a = _mx(M)
    rows, cols = np.nonzero(a)
    onp.testing.assert_array_equal(a.asnumpy()[rows.asnumpy(), cols.asnumpy()], [2, 1])
    assert isinstance(np.nonzero(a), tuple)
    assert np.argwhere(np.array(onp.float32(2.5))).shape == (1, 0)


def test_dynamic_shape_flags_and_aliases():
    for name in ("nonzero", "flatnonzero", "argwhere", "unique", "intersect1d", "union1d", "setdiff1d",
                 "setxor1d", "bincount"):
        assert get_op(name).dynamic_shape, name
    for name in ("sort", "argsort", "searchsorted", "isin", "partition", "lexsort"):
        assert not get_op(name).dynamic_shape, name
    assert get_op("_npi_nonzero") is get_op("argwhere")  # MXNet's op gives the (N, ndim) index matrix
    assert get_op("_npi_unique") is get_op("unique")


def test_positional_arguments_follow_numpy():
    _check(np.sort(_mx(X), 0), onp.sort(X, 0))
    _check(np.argsort(_mx(X), None), onp.argsort(X, None), "int64")
    _check(np.searchsorted(_mx(S), _mx(X), "right"), onp.searchsorted(S, X, "right"), "int64")
    _check(np.unique(_mx(T), True, False, True),
           tuple(onp.unique(T, True, False, True)), ("int32", "int64", "int64"))
    _check(np.isin(_mx(T), _mx(onp.array([3], onp.int32)), False, True), onp.isin(T, [3], False, True), "bool")
    _check(np.lexsort([_mx(T[0]), _mx(T[1])], 0), onp.lexsort([T[0], T[1]], 0), "int64")


def test_json_params_decode():
    """Parameters arrive from symbol JSON as strings; the op reads them with its annotations."""
    from mxjax._ndarray import invoke
    op = get_op("unique")
    params = op.decode_params({"return_index": "False", "return_inverse": "True", "return_counts": "1",
                               "axis": "None"})
    assert params == {"return_index": False, "return_inverse": True, "return_counts": True, "axis": None}
    _check(invoke(op, [_mx(T)], params, np.ndarray), tuple(onp.unique(T, return_inverse=True, return_counts=True)),
           ("int32", "int64", "int64"))
    sort = get_op("sort")
    _check(invoke(sort, [_mx(X)], sort.decode_params({"axis": "0", "descending": "True"}), np.ndarray),
           -onp.sort(-X, axis=0))


def test_empty_inputs():
    e = onp.zeros((0,), onp.float32)
    _check(np.sort(_mx(e)), e)
    _check(np.unique(_mx(e)), onp.unique(e))
    _check(np.flatnonzero(_mx(e)), onp.flatnonzero(e), "int64")
    _check(np.union1d(_mx(e), _mx(e)), onp.union1d(e, e))


BAD = [
    (lambda: np.sort(_mx(X), axis=2), MXNetValueError, r"sort: axis 2 is out of bounds .*\(3, 4\)"),
    (lambda: np.argsort(_mx(X), axis=-3), MXNetValueError, "argsort: axis -3 is out of bounds"),
    (lambda: np.sort(np.array(onp.float32(1.0))), MXNetValueError, "sort: axis -1 is out of bounds"),
    (lambda: np.sort(_mx(X), order="x"), MXNetValueError, "sort: order= needs structured dtypes"),
    (lambda: np.argsort(_mx(X), kind="bogo"), MXNetValueError, "argsort: unknown sort kind"),
    (lambda: np.lexsort([_mx(T[0]), _mx(S)]), MXNetValueError, "lexsort: all keys need the same shape"),
    (lambda: np.lexsort([]), MXNetValueError, "lexsort: need at least one key"),
    (lambda: np.partition(_mx(X), 4), MXNetValueError, r"partition: kth\(=4\) out of bounds \(4\)"),
    (lambda: np.argpartition(_mx(X), (0, -5), axis=1), MXNetValueError, r"argpartition: kth\(=-5\)"),
    (lambda: np.partition(_mx(X), 1, axis=5), MXNetValueError, "partition: axis 5 is out of bounds"),
    (lambda: np.searchsorted(_mx(X), _mx(S)), MXNetValueError, r"searchsorted: a must be 1-D, got shape \(3, 4\)"),
    (lambda: np.searchsorted(_mx(S), _mx(S), side="middle"), MXNetValueError, "searchsorted: side must be"),
    (lambda: np.nonzero(np.array(onp.float32(1.0))), MXNetValueError, "nonzero: calling nonzero on 0d arrays"),
    (lambda: np.unique(_mx(T), axis=2), MXNetValueError, "unique: axis 2 is out of bounds"),
    (lambda: np.unique(_mx(T), return_idx=True), TypeError, "unexpected keyword argument 'return_idx'"),
    (lambda: np.isin(_mx(T)), TypeError, "missing required argument 'test_elements'"),
]


@pytest.mark.parametrize("call,error,match", BAD, ids=[m[:30] for _, _, m in BAD])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
    assert issubclass(error, (MXNetError, TypeError))
