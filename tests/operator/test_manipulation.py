"""Manipulation ops against NumPy: values, shapes, dtypes, list/tuple returns, in-place writes, bad input."""
import jax
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError

np = mx.np
F32 = "float32"


def check(got, want, dtype=None, rtol=1e-6, atol=1e-6):
    """``got`` (mx) matches ``want`` (NumPy) in shape and values; its dtype is ``dtype`` (default: NumPy's)."""
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == onp.dtype(dtype or want.dtype), (got.dtype, dtype or want.dtype)
    onp.testing.assert_allclose(got.asnumpy().astype(float), want.astype(float), rtol=rtol, atol=atol)


def _data(shape, dtype="float32", seed=0):
    rng = onp.random.default_rng(seed)
    if onp.dtype(dtype).kind in "iu":
        return rng.integers(-4, 5, size=shape).astype(dtype)
    if onp.dtype(dtype).kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    return rng.uniform(-2, 2, size=shape).astype(dtype)


def X(shape, dtype="float32", seed=0):
    return _data(shape, dtype, seed)


def IDX(values):
    return onp.asarray(values, dtype="int64")


# (id, call(namespace, *inputs), NumPy inputs, the dtype MXNet gives or None for NumPy's own)
CASES = [
    ("reshape", lambda m, a: m.reshape(a, (3, -1)), [X((2, 3))], None),
    ("reshape-order-F", lambda m, a: m.reshape(a, 6, order="F"), [X((2, 3))], None),
    ("transpose", lambda m, a: m.transpose(a), [X((2, 3, 4))], None),
    ("transpose-axes", lambda m, a: m.transpose(a, (1, 0, 2)), [X((2, 3, 4), "int32")], None),
    ("copy", lambda m, a: m.copy(a), [X((2, 3), "int64")], None),
    ("ravel", lambda m, a: m.ravel(a), [X((2, 3))], None),
    ("ravel-F", lambda m, a: m.ravel(a, order="F"), [X((2, 3), "int32")], None),
    ("squeeze", lambda m, a: m.squeeze(a), [X((1, 3, 1))], None),
    ("squeeze-axis", lambda m, a: m.squeeze(a, axis=0), [X((1, 3, 1))], None),
    ("expand_dims", lambda m, a: m.expand_dims(a, 1), [X((2, 3))], None),
    ("expand_dims-tuple", lambda m, a: m.expand_dims(a, (0, 3)), [X((2, 3))], None),
    ("swapaxes", lambda m, a: m.swapaxes(a, 0, 2), [X((2, 3, 4))], None),
    ("moveaxis", lambda m, a: m.moveaxis(a, 0, -1), [X((2, 3, 4))], None),
    ("moveaxis-tuple", lambda m, a: m.moveaxis(a, (0, 1), (2, 0)), [X((2, 3, 4))], None),
    ("rollaxis", lambda m, a: m.rollaxis(a, 2, 0), [X((2, 3, 4))], None),
    ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 3)), [X((3,))], None),
    ("broadcast_to-int", lambda m, a: m.broadcast_to(a, (4, 2, 3)), [X((2, 1), "int32")], None),
    ("resize-grow", lambda m, a: m.resize(a, (4, 4)), [X((2, 3))], None),
    ("resize-1d", lambda m, a: m.resize(a, (2, 2)), [X((3,), "int64")], None),
    ("concatenate", lambda m, a, b: m.concatenate((a, b)), [X((2, 3)), X((1, 3), seed=1)], None),
    ("concatenate-axis1", lambda m, a, b: m.concatenate([a, b], axis=1), [X((2, 3)), X((2, 2), seed=1)], None),
    ("concatenate-None", lambda m, a, b: m.concatenate([a, b], axis=None), [X((2, 3)), X((4,), seed=1)], None),
    ("concatenate-dtype", lambda m, a, b: m.concatenate([a, b], dtype="float64"), [X((2,)), X((1,))], None),
    ("stack", lambda m, a, b: m.stack([a, b], axis=1), [X((2, 3)), X((2, 3), seed=1)], None),
    ("stack-last", lambda m, a, b: m.stack((a, b), -1), [X((2,), "int32"), X((2,), "int32", 1)], None),
    ("vstack-1d", lambda m, a, b: m.vstack([a, b]), [X((3,)), X((3,), seed=1)], None),
    ("vstack-2d", lambda m, a, b: m.vstack([a, b]), [X((2, 3)), X((1, 3), seed=1)], None),
    ("hstack-1d", lambda m, a, b: m.hstack([a, b]), [X((2,)), X((3,), seed=1)], None),
    ("hstack-2d", lambda m, a, b: m.hstack([a, b]), [X((2, 1)), X((2, 3), seed=1)], None),
    ("dstack", lambda m, a, b: m.dstack([a, b]), [X((2, 3)), X((2, 3), seed=1)], None),
    ("column_stack", lambda m, a, b: m.column_stack([a, b]), [X((3,)), X((3,), seed=1)], None),
    ("column_stack-2d", lambda m, a, b: m.column_stack([a, b]), [X((3, 2)), X((3,), seed=1)], None),
    ("append-axis0", lambda m, a, b: m.append(a, b, axis=0), [X((2, 3)), X((1, 3), seed=1)], None),
    ("append-flat", lambda m, a, b: m.append(a, b), [X((3,), "int32"), X((2, 2), "int32", 1)], None),
    ("tile", lambda m, a: m.tile(a, 2), [X((2, 3))], None),
    ("tile-tuple", lambda m, a: m.tile(a, (2, 3)), [X((2,), "int64")], None),
    ("repeat", lambda m, a: m.repeat(a, 2), [X((2, 3))], None),
    ("repeat-counts", lambda m, a: m.repeat(a, (1, 2), axis=0), [X((2, 3), "int32")], None),
    ("repeat-axis1", lambda m, a: m.repeat(a, 3, axis=1), [X((2, 3))], None),
    ("flip", lambda m, a: m.flip(a), [X((2, 3, 4))], None),
    ("flip-axis", lambda m, a: m.flip(a, axis=1), [X((2, 3, 4))], None),
    ("flip-axes", lambda m, a: m.flip(a, (0, 2)), [X((2, 3, 4), "int32")], None),
    ("fliplr", lambda m, a: m.fliplr(a), [X((2, 3))], None),
    ("flipud", lambda m, a: m.flipud(a), [X((3, 2))], None),
    ("roll", lambda m, a: m.roll(a, 1), [X((2, 3))], None),
    ("roll-axis", lambda m, a: m.roll(a, -1, axis=1), [X((2, 3))], None),
    ("roll-tuple", lambda m, a: m.roll(a, (1, 2), axis=(0, 2)), [X((2, 3, 4))], None),
    ("rot90", lambda m, a: m.rot90(a), [X((2, 3))], None),
    ("rot90-k2", lambda m, a: m.rot90(a, 2), [X((2, 3), "int32")], None),
    ("rot90-axes", lambda m, a: m.rot90(a, -1, axes=(1, 0)), [X((2, 3, 2))], None),
    ("pad-int", lambda m, a: m.pad(a, 1), [X((2, 3))], None),
    ("pad-constant", lambda m, a: m.pad(a, ((1, 0), (0, 2)), constant_values=5), [X((2, 3))], None),
    ("pad-edge", lambda m, a: m.pad(a, (1, 2), mode="edge"), [X((2, 3))], None),
    ("pad-reflect", lambda m, a: m.pad(a, 2, mode="reflect"), [X((3, 4))], None),
    ("pad-reflect-odd", lambda m, a: m.pad(a, 2, mode="reflect", reflect_type="odd"), [X((4,))], None),
    ("pad-symmetric", lambda m, a: m.pad(a, [[1, 2], [2, 1]], mode="symmetric"), [X((3, 4))], None),
    ("pad-wrap", lambda m, a: m.pad(a, 2, mode="wrap"), [X((3, 3), "int32")], None),
    ("pad-linear_ramp", lambda m, a: m.pad(a, 2, mode="linear_ramp", end_values=(1, -1)), [X((3,))], None),
    ("pad-maximum", lambda m, a: m.pad(a, 2, mode="maximum", stat_length=2), [X((4,))], None),
    ("pad-mean", lambda m, a: m.pad(a, 1, mode="mean"), [X((3, 3))], None),
    ("pad-median", lambda m, a: m.pad(a, 1, mode="median"), [X((5,))], None),
    ("pad-minimum", lambda m, a: m.pad(a, (0, 2), mode="minimum"), [X((4,), "int32")], None),
    ("atleast_1d", lambda m, a: m.atleast_1d(a), [onp.asarray(3.0, "float32")], None),
    ("atleast_2d", lambda m, a: m.atleast_2d(a), [X((3,))], None),
    ("atleast_3d", lambda m, a: m.atleast_3d(a), [X((2, 3))], None),
    ("diagonal", lambda m, a: m.diagonal(a, 1), [X((3, 4))], None),
    ("diagonal-axes", lambda m, a: m.diagonal(a, 0, 1, 2), [X((2, 3, 3), "int32")], None),
    ("trace", lambda m, a: m.trace(a), [X((3, 3))], None),
    ("trace-axes", lambda m, a: m.trace(a, 1, axis1=1, axis2=2), [X((2, 3, 3))], None),
    ("trace-int", lambda m, a: m.trace(a), [X((3, 3), "int32")], None),
    ("where", lambda m, c, a, b: m.where(c, a, b), [X((2, 3), "bool"), X((2, 3)), X((2, 3), seed=1)], None),
    ("where-broadcast", lambda m, c, a: m.where(c, a, 0.5), [X((2, 1), "bool"), X((1, 3))], None),
    ("where-int-scalar", lambda m, c, a: m.where(c, a, 0.5), [X((3,), "bool"), X((3,), "int32")], F32),
    ("where-promote", lambda m, c, a, b: m.where(c, a, b), [X((3,), "bool"), X((3,), "int32"), X((3,))], F32),
    ("take-axis", lambda m, a, i: m.take(a, i, axis=1), [X((3, 4)), IDX([0, 2, -1])], None),
    ("take-flat", lambda m, a, i: m.take(a, i), [X((3, 4)), IDX([[0, 11], [5, 3]])], None),
    ("take-wrap", lambda m, a, i: m.take(a, i, axis=0, mode="wrap"), [X((3, 2)), IDX([4, -5])], None),
    ("take-clip", lambda m, a, i: m.take(a, i, axis=0, mode="clip"), [X((3, 2)), IDX([7, -2])], None),
    ("take_along_axis", lambda m, a, i: m.take_along_axis(a, i, axis=1),
     [X((3, 4)), IDX([[0, 3], [1, 1], [2, -1]])], None),
    ("take_along_axis-None", lambda m, a, i: m.take_along_axis(a, i, axis=None), [X((3, 4)), IDX([0, 11])], None),
    ("delete", lambda m, a: m.delete(a, 1, axis=0), [X((3, 4))], None),
    ("delete-slice", lambda m, a: m.delete(a, slice(0, 4, 2), axis=1), [X((3, 4))], None),
    ("delete-list", lambda m, a: m.delete(a, [0, -1], axis=1), [X((3, 4), "int32")], None),
    ("delete-flat", lambda m, a: m.delete(a, [1, 5]), [X((2, 3))], None),
    ("delete-mask", lambda m, a: m.delete(a, [True, False, True]), [X((3,))], None),
    ("insert-scalar", lambda m, a: m.insert(a, 1, 5, axis=0), [X((3, 4))], None),
    ("insert-seq", lambda m, a: m.insert(a, [1, 3], [7, 8], axis=1), [X((2, 3), "int32")], None),
    ("insert-flat-end", lambda m, a: m.insert(a, 6, 2.5), [X((2, 3))], None),
    ("insert-array-values", lambda m, a, v: m.insert(a, 0, v, axis=1), [X((2, 3)), X((2,), seed=1)], None),
]


def _call(call, namespace, inputs):
    if namespace is onp:
        return call(onp, *inputs)
    return call(np, *[np.array(x) for x in inputs])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy(case):
    _, call, inputs, dtype = case
    check(_call(call, np, inputs), _call(call, onp, inputs), dtype)


def test_float_indices_are_truncated_as_mxnet():
    a = X((3, 4))
    check(np.take(np.array(a), np.array([0, 2]), axis=1), onp.take(a, [0, 2], axis=1))  # float32 indices


SPLITS = [
    ("split", lambda m, a: m.split(a, 2, axis=1), X((3, 4))),
    ("split-indices", lambda m, a: m.split(a, [1, 3]), X((5, 2))),
    ("array_split", lambda m, a: m.array_split(a, 3), X((7,))),
    ("array_split-indices", lambda m, a: m.array_split(a, (2,), axis=1), X((2, 5), "int32")),
    ("hsplit", lambda m, a: m.hsplit(a, 2), X((2, 4))),
    ("hsplit-1d", lambda m, a: m.hsplit(a, [1]), X((3,))),
    ("vsplit", lambda m, a: m.vsplit(a, 2), X((4, 2))),
    ("dsplit", lambda m, a: m.dsplit(a, [1]), X((2, 2, 3))),
    ("broadcast_arrays", lambda m, a, b=None: m.broadcast_arrays(a, a[:, :1]), X((2, 3))),
    ("meshgrid-ij", lambda m, a: m.meshgrid(a, a[:2], indexing="ij"), X((3,))),
    ("atleast_2d-many", lambda m, a: m.atleast_2d(a, a[0]), X((3,))),
    ("unravel_index", lambda m, a: m.unravel_index(m.asarray(onp.array([1, 5, 11])), (3, 4)), X((1,))),
    ("unravel_index-F", lambda m, a: m.unravel_index(m.asarray(onp.array([1, 5, 11])), (3, 4), order="F"), X((1,))),
]


@pytest.mark.parametrize("case", SPLITS, ids=[c[0] for c in SPLITS])
def test_multi_output(case):
    _, call, x = case
    got, want = call(np, np.array(x)), call(onp, x)
    assert type(got) is type(want) or (isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        check(g, w)


def test_linspace_retstep_and_select():
    conds = [X((4,), "bool"), X((4,), "bool", 1)]
    choices = [X((4,)), X((4,), seed=1)]
    got = np.select([np.array(c) for c in conds], [np.array(c) for c in choices], default=-1.0)
    check(got, onp.select(conds, choices, default=-1.0))


def test_ravel_multi_index():
    rows, cols = IDX([0, 2, 1]), IDX([3, 0, 2])
    got = np.ravel_multi_index((np.array(rows), np.array(cols)), (3, 4))
    check(got, onp.ravel_multi_index((rows, cols), (3, 4)))
    got = np.ravel_multi_index([np.array(rows), np.array(cols + 4)], (3, 4), mode="wrap", order="F")
    check(got, onp.ravel_multi_index((rows, cols + 4), (3, 4), mode="wrap", order="F"))


def test_in_place_writers():
    a, want = np.array(X((3, 3))), X((3, 3))
    assert np.fill_diagonal(a, 7.0) is None
    onp.fill_diagonal(want, 7.0)
    check(a, want)

    a, want = np.array(X((2, 3), "int32")), X((2, 3), "int32")
    idx = IDX([[0], [2]])
    assert np.put_along_axis(a, np.array(idx), 9, axis=1) is None
    onp.put_along_axis(want, idx, 9, axis=1)
    check(a, want)

    dst, want = np.zeros((2, 3), dtype="float32"), onp.zeros((2, 3), "float32")
    src = X((3,))
    np.copyto(dst, np.array(src))
    onp.copyto(want, src)
    check(dst, want)
    mask = X((2, 3), "bool")
    np.copyto(dst, 5, where=np.array(mask))
    onp.copyto(want, 5, where=mask)
    check(dst, want)
    ints = np.zeros((2,), dtype="int32")
    np.copyto(ints, 3)
    check(ints, onp.full(2, 3, "int32"))


def test_plain_helpers():
    a = np.zeros((2, 3))
    assert np.shape(a) == (2, 3) and np.shape([[1, 2]]) == (1, 2)
    assert np.ndim(a) == 2 and np.ndim(3.0) == 0
    assert np.size(a) == 6 and np.size(a, 1) == 3 and np.size([1, 2, 3]) == 3
    assert np.shares_memory(a, a) and not np.shares_memory(a, a.copy())
    assert not np.may_share_memory(a, np.zeros((2, 3)))


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")  # a 32-bit user jit: JAX truncates
def test_take_raise_inside_a_trace_reports_at_the_read():
    a, idx = np.array(onp.arange(4.0, dtype="float32")), np.array(IDX([1, 9, -1]))
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        np.take(a, idx)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        # compiled: the check reports at the next read (here: the result's, when jax.jit returns)
        np.array(jax.jit(lambda x, i: np.take(x, i))(a, idx)).asnumpy()
    good = jax.jit(lambda x, i: np.take(x, i))(a, np.array(IDX([1, 3, -1])))
    check(good, onp.array([1.0, 3.0, 3.0], "float32"))


def _split_bad():
    return np.split(np.zeros(5), 2)


BAD = [
    (lambda: np.squeeze(np.zeros((2, 3)), axis=0), ValueError, "squeeze"),
    (lambda: np.concatenate([np.zeros(3), np.zeros((2, 2))]), ValueError, "same number of dimensions"),
    (lambda: np.concatenate([np.zeros((2, 3)), np.zeros((2, 2))]), ValueError, "must match exactly"),
    (lambda: np.concatenate([]), ValueError, "at least one array"),
    (lambda: np.stack([np.zeros(2), np.zeros(3)]), ValueError, "same shape"),
    (lambda: np.broadcast_to(np.zeros(3), (2, 4)), ValueError, "broadcast_to"),
    (_split_bad, ValueError, "equal division"),
    (lambda: np.array_split(np.zeros(3), 0), ValueError, "larger than 0"),
    (lambda: np.hsplit(np.array(1.0), 1), ValueError, "1 or more dimensions"),
    (lambda: np.vsplit(np.zeros(4), 2), ValueError, "2 or more dimensions"),
    (lambda: np.dsplit(np.zeros((2, 2)), 2), ValueError, "3 or more dimensions"),
    (lambda: np.tile(np.zeros(2), (-1,)), ValueError, "non-negative"),
    (lambda: np.repeat(np.zeros(2), -1), ValueError, "non-negative"),
    (lambda: np.repeat(np.zeros((2, 2)), (1, 2, 3), axis=0), ValueError, "3 repeat counts"),
    (lambda: np.resize(np.zeros(2), (-1,)), ValueError, "non-negative"),
    (lambda: np.fliplr(np.zeros(3)), ValueError, ">= 2-d"),
    (lambda: np.rot90(np.zeros((2, 2)), axes=(0,)), ValueError, "exactly 2 axes"),
    (lambda: np.pad(np.zeros(2), 1, mode="nope"), ValueError, "mode must be one of"),
    (lambda: np.pad(np.zeros(2), 1, mode="edge", constant_values=3), ValueError, "unsupported keyword"),
    (lambda: np.pad(np.zeros(2), -1), ValueError, "non-negative"),
    (lambda: np.pad(np.zeros((2, 2)), ((1, 2, 3),)), ValueError, "cannot be broadcast"),
    (lambda: np.take(np.zeros(3), np.array(IDX([3]))), IndexError, "index 3 is out of bounds"),
    (lambda: np.take(np.zeros((2, 3)), np.array(IDX([-4])), axis=1), IndexError, "index -4 is out of bounds"),
    (lambda: np.take(np.zeros(3), np.array(IDX([0])), mode="bogus"), ValueError, "mode must be one of"),
    (lambda: np.take(np.zeros(3), np.array(IDX([0])), axis=2), IndexError, "axis 2 is out of bounds"),
    (lambda: np.take_along_axis(np.zeros((2, 2)), np.array(IDX([[2]])), 1), IndexError, "out of bounds"),
    (lambda: np.take_along_axis(np.zeros((2, 2)), np.array(IDX([0])), 1), ValueError, "same number"),
    (lambda: np.delete(np.zeros(3), 3), IndexError, "index 3 is out of bounds"),
    (lambda: np.delete(np.zeros(3), [True, False]), ValueError, "match the axis length"),
    (lambda: np.insert(np.zeros(3), 5, 1.0), IndexError, "index 5 is out of bounds"),
    (lambda: np.unravel_index(np.array(IDX([12])), (3, 4)), ValueError, "out of bounds for array with size 12"),
    (lambda: np.ravel_multi_index((np.array(IDX([3])), np.array(IDX([0]))), (3, 4)), ValueError, "invalid entry"),
    (lambda: np.ravel_multi_index((np.array(IDX([0])),), (3, 4)), ValueError, "length 2"),
    (lambda: np.select([np.array([True])], []), ValueError, "same length"),
    (lambda: np.select([np.array(IDX([1]))], [np.zeros(1)]), TypeError, "should be boolean"),
    (lambda: np.where(np.array([True]), np.zeros(1)), ValueError, "both or neither"),
    (lambda: np.copyto(np.zeros((2,), dtype="int32"), np.array([1.5, 2.5])), TypeError, "same_kind"),
    (lambda: np.copyto(np.zeros((2,)), np.zeros((3,))), ValueError, "copyto: could not broadcast"),
    (lambda: np.copyto([0, 0], np.zeros(2)), TypeError, "must be an mx.np.ndarray"),
    (lambda: np.fill_diagonal(np.zeros(3), 1.0), ValueError, "at least 2-d"),
    (lambda: np.diagonal(np.zeros(3)), ValueError, "at least two dimensions"),
    (lambda: np.swapaxes(np.zeros(3), 0, 2), IndexError, "out of bounds"),
    (lambda: np.reshape(np.zeros(6), (4, -1)), ValueError, "cannot reshape"),
]


@pytest.mark.parametrize("call,error,match", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_errors_name_the_op():
    with pytest.raises(MXNetError, match="repeat"):
        np.repeat(np.zeros(2), -2)
