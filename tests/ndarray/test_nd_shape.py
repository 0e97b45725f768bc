"""mx.nd legacy slicing, joining, reshaping, indexing and broadcasting ops against NumPy."""
import numpy as onp
import pytest

import mxjax.ndarray as nd
from mxjax._ndarray import NDArray
from mxjax.operator import get_op

RNG = onp.random.default_rng(1)


def _arr(*shape, dtype="float32"):
    return RNG.uniform(-3, 3, size=shape).astype(dtype)


def _check(got, want, dtype=None):
    assert type(got) is NDArray
    want = onp.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert onp.dtype(got.dtype) == onp.dtype(dtype or want.dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6, atol=1e-6)


X = _arr(2, 3, 4)

# (function, kwargs, NumPy reference of X)
CASES = [
    (nd.slice, dict(begin=(0, 1), end=(2, 3)), X[0:2, 1:3]),
    (nd.slice, dict(begin=(None, -1), end=(None, 0), step=(1, -1)), X[:, -1:0:-1]),
    (nd.crop, dict(begin=(1,), end=(None,)), X[1:]),
    (nd.slice_axis, dict(axis=2, begin=1, end=None), X[:, :, 1:]),
    (nd.slice_axis, dict(axis=-2, begin=-2, end=-1), X[:, -2:-1]),
    (nd.Flatten, {}, X.reshape(2, 12)),
    (nd.flatten, {}, X.reshape(2, 12)),
    (nd.swapaxes, dict(dim1=0, dim2=2), X.swapaxes(0, 2)),
    (nd.SwapAxis, {}, X),
    (nd.flip, dict(axis=1), X[:, ::-1]),
    (nd.reverse, dict(axis=(0, 2)), X[::-1, :, ::-1]),
    (nd.reshape, dict(shape=(0, -1)), X.reshape(2, 12)),
    (nd.Reshape, dict(shape=(-3, 0), reverse=False), X.reshape(6, 4)),
    (nd.transpose, dict(axes=(1, 0, 2)), X.transpose(1, 0, 2)),
    (nd.expand_dims, dict(axis=1), X[:, None]),
    (nd.squeeze, dict(axis=None), X),
    (nd.tile, dict(reps=(1, 2, 1)), onp.tile(X, (1, 2, 1))),
    (nd.repeat, dict(repeats=2, axis=0), onp.repeat(X, 2, axis=0)),
    (nd.pad, dict(mode="constant", pad_width=(0, 0, 1, 2, 0, 1), constant_value=5.0),
     onp.pad(X, ((0, 0), (1, 2), (0, 1)), constant_values=5)),
    (nd.Pad, dict(mode="edge", pad_width=(0, 0, 0, 0, 2, 1)), onp.pad(X, ((0, 0), (0, 0), (2, 1)), mode="edge")),
    (nd.pad, dict(mode="reflect", pad_width=(1, 0, 0, 0, 1, 1)),
     onp.pad(X, ((1, 0), (0, 0), (1, 1)), mode="reflect")),
    (nd.broadcast_to, dict(shape=(0, 0, 4)), X),
    (nd.broadcast_axis, dict(axis=(0, 2), size=(3, 5)), onp.broadcast_to(X[:1, :, :1], (3, 3, 5))),
    (nd.broadcast_axes, dict(axis=1, size=4), onp.broadcast_to(X[:, :1], (2, 4, 4))),
    (nd.diag, {}, onp.diagonal(X, 0, 0, 1)),
    (nd.diag, dict(k=1, axis1=1, axis2=2), onp.diagonal(X, 1, 1, 2)),
    (nd.shape_array, {}, onp.array([2, 3, 4], "int64")),
    (nd.size_array, {}, onp.array([24], "int64")),
]


@pytest.mark.parametrize("fn,kwargs,want", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_shape_ops(fn, kwargs, want):
    source = X[:1, :, :1] if fn in (nd.broadcast_axis,) else X[:, :1] if fn is nd.broadcast_axes else X
    _check(fn(nd.array(source), **kwargs), want)


def test_positional_legacy_arguments():
    x = nd.array(X)
    _check(nd.slice_axis(x, 1, 0, 2), X[:, 0:2])
    _check(nd.sum(x, 1, True), X.sum(axis=1, keepdims=True))
    _check(nd.swapaxes(x, 1, 2), X.swapaxes(1, 2))
    _check(nd.diag(nd.array([1.0, 2.0]), 1), onp.diag([1.0, 2.0], 1).astype("float32"))


def test_slice_like_and_reshape_like():
    x, like = nd.array(X), nd.zeros((1, 2, 3))
    _check(nd.slice_like(x, like), X[:1, :2, :3])
    _check(nd.slice_like(x, like, axes=(2,)), X[:, :, :3])
    _check(nd.slice_like(x, nd.zeros((4, 2)), axes=(-1,)), X[:, :, :2])
    _check(nd.reshape_like(x, nd.zeros((6, 4))), X.reshape(6, 4))
    _check(nd.reshape_like(x, nd.zeros((3, 2, 7)), lhs_begin=0, lhs_end=2, rhs_begin=0, rhs_end=2),
           X.reshape(3, 2, 4))
    with pytest.raises(ValueError, match="slice_like"):
        nd.slice_like(x, nd.zeros((1, 2)))
    with pytest.raises(ValueError, match="reshape_like"):
        nd.reshape_like(x, nd.zeros((5,)))


def test_split_and_slice_channel():
    x = nd.array(X)
    parts = nd.split(x, 3, axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    for got, want in zip(parts, onp.split(X, 3, axis=1)):
        _check(got, want)
    squeezed = nd.split(x, num_outputs=2, axis=0, squeeze_axis=True)
    _check(squeezed[1], X[1])
    _check(nd.split(x, 1, axis=2), X)
    _check(nd.SliceChannel(x, num_outputs=4, axis=-1)[3], X[:, :, 3:])
    with pytest.raises(ValueError, match="cannot be split into 5"):
        nd.split(x, 5, axis=2)
    with pytest.raises(ValueError, match="squeeze_axis"):
        nd.split(x, 2, axis=2, squeeze_axis=True)


def test_concat_stack_concatenate():
    a, b = _arr(2, 3), _arr(2, 2)
    _check(nd.concat(nd.array(a), nd.array(b), dim=1), onp.concatenate([a, b], 1))
    _check(nd.Concat(nd.array(a), nd.array(a), nd.array(a), dim=0), onp.concatenate([a] * 3, 0))
    _check(nd.concatenate([nd.array(a), nd.array(a)], axis=1), onp.concatenate([a, a], 1))
    _check(nd.stack(nd.array(a), nd.array(a), axis=-1), onp.stack([a, a], -1))
    _check(nd.stack(nd.array(a), nd.array(a), axis=1, num_args=2), onp.stack([a, a], 1))
    _check(nd.moveaxis(nd.array(X), 0, -1), onp.moveaxis(X, 0, -1))
    with pytest.raises(ValueError, match="Concat"):
        nd.concat(nd.array(a), nd.array(b), dim=0)
    with pytest.raises(ValueError, match="stack: all inputs must have the same shape"):
        nd.stack(nd.array(a), nd.array(b))
    with pytest.raises(ValueError, match="Concat: needs at least one"):
        nd.concat()


def test_take_modes():
    a = _arr(4, 3)
    idx = onp.array([[0, 5], [-1, 2]], "float32")
    _check(nd.take(nd.array(a), nd.array(idx)), a[onp.clip(idx.astype(int), 0, 3)])
    _check(nd.take(nd.array(a), nd.array(idx), mode="wrap"), a[idx.astype(int) % 4])
    _check(nd.take(nd.array(a), nd.array([2.0, 0.0]), axis=1), a[:, [2, 0]])
    _check(nd.take(nd.array(a), nd.array([1, -1], dtype="int32"), mode="raise"), a[[1, -1]])
    with pytest.raises(IndexError, match="take: indices out of range"):
        nd.take(nd.array(a), nd.array([4.0]), mode="raise")
    with pytest.raises(ValueError, match="mode"):
        nd.take(nd.array(a), nd.array([0.0]), mode="bad")


def test_where():
    c, x, y = (RNG.integers(0, 2, (3, 2)).astype("float32"), _arr(3, 2), _arr(3, 2))
    _check(nd.where(nd.array(c), nd.array(x), nd.array(y)), onp.where(c != 0, x, y))
    row = onp.array([1.0, 0.0, 1.0], "float32")
    _check(nd.where(nd.array(row), nd.array(x), nd.array(y)), onp.where(row[:, None] != 0, x, y))
    with pytest.raises(ValueError, match="where: condition of shape"):
        nd.where(nd.array(row[:2]), nd.array(x), nd.array(y))
    with pytest.raises(ValueError, match="x and y must have the same shape"):
        nd.where(nd.array(c), nd.array(x), nd.array(y[:2]))


def test_broadcast_like():
    a, b = _arr(1, 3), _arr(4, 3)
    _check(nd.broadcast_like(nd.array(a), nd.array(b)), onp.broadcast_to(a, (4, 3)))
    _check(nd.broadcast_like(nd.array(a), nd.zeros((5, 2)), lhs_axes=(0,), rhs_axes=(0,)),
           onp.broadcast_to(a, (5, 3)))
    with pytest.raises(ValueError, match="broadcast_like: cannot broadcast"):
        nd.broadcast_like(nd.array(b), nd.zeros((5, 3)))


def test_depth_space_round_trip():
    x = _arr(1, 8, 2, 3)
    d2s = nd.depth_to_space(nd.array(x), 2)
    n, c, h, w = x.shape
    want = x.reshape(n, 2, 2, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, h * 2, w * 2)
    _check(d2s, want)
    _check(nd.space_to_depth(d2s, block_size=2), x)
    with pytest.raises(ValueError, match="depth_to_space: channels 8 not divisible"):
        nd.depth_to_space(nd.array(x), 3)
    with pytest.raises(ValueError, match="4-D"):
        nd.space_to_depth(nd.array(x[0]), 2)


def test_dot():
    a, b = _arr(2, 3), _arr(3, 4)
    _check(nd.dot(nd.array(a), nd.array(b)), a @ b)
    _check(nd.dot(nd.array(a.T), nd.array(b), transpose_a=True), a @ b)
    _check(nd.dot(nd.array(a), nd.array(b.T), transpose_b=True), a @ b)
    _check(nd.dot(nd.array(a[0]), nd.array(a[1])), [a[0] @ a[1]])  # 1.x: shape (1,)
    c = _arr(2, 3, 3)
    _check(nd.dot(nd.array(c), nd.array(b)), onp.tensordot(c, b, 1))
    _check(nd.dot(nd.array(b), nd.array(c), transpose_a=True, transpose_b=True),
           onp.tensordot(b, c, axes=([0], [2])))
    with pytest.raises(ValueError, match="dot: shapes"):
        nd.dot(nd.array(a), nd.array(a))


def test_shape_op_bad_input():
    x = nd.array(X)
    with pytest.raises(ValueError, match="slice: begin"):
        nd.slice(x, begin=(0,), end=(1, 2))
    with pytest.raises(ValueError, match="step cannot be 0"):
        nd.slice(x, begin=(0,), end=(1,), step=(0,))
    with pytest.raises(ValueError, match="slice_axis: invalid slice"):
        nd.slice_axis(x, axis=1, begin=2, end=1)
    with pytest.raises(ValueError, match="SwapAxis: axis 3"):
        nd.swapaxes(x, 0, 3)
    with pytest.raises(ValueError, match="Pad: pad_width"):
        nd.pad(x, pad_width=(1, 1))
    with pytest.raises(ValueError, match="broadcast_to: cannot broadcast"):
        nd.broadcast_to(x, shape=(4, 3, 4))
    with pytest.raises(ValueError, match="broadcast_axis: axis 1"):
        nd.broadcast_axis(x, axis=1, size=5)
    with pytest.raises(ValueError, match="Flatten"):
        nd.flatten(nd.array(1.0))


def test_shape_ops_decode_json_attrs():
    assert get_op("slice").decode_params({"begin": "(0, None)", "end": "(2, -1)", "step": "()"}) == \
        {"begin": (0, None), "end": (2, -1), "step": ()}
    assert get_op("SliceChannel").decode_params({"num_outputs": "3", "axis": "1", "squeeze_axis": "0"}) == \
        {"num_outputs": 3, "axis": 1, "squeeze_axis": False}
    assert get_op("Concat").decode_params({"dim": "1", "num_args": "2"}) == {"dim": 1, "num_args": 2}
    assert get_op("Pad").decode_params({"mode": "constant", "pad_width": "(0, 0, 0, 0, 1, 1, 1, 1)",
                                        "constant_value": "0"})["pad_width"] == (0, 0, 0, 0, 1, 1, 1, 1)
