"""Out-of-range indices raise IndexError (MXNetIndexError) as NumPy does, instead of the
clamped or dropped values XLA would give; in-range results equal NumPy's."""
from __future__ import annotations

import jax
import numpy as onp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mxjax as mx
from mxjax.base import MXNetError, MXNetIndexError

X = onp.arange(6, dtype=onp.float32).reshape(2, 3)


def _int(values, dtype="int32"):
    return mx.np.array(onp.asarray(values), dtype=dtype)


def _raises_like_numpy(numpy_call, mx_call, match=None):
    """Both calls fail with IndexError; mxjax's is an MXNetIndexError (read forces async errors)."""
    with pytest.raises(IndexError):
        numpy_call()
    with pytest.raises(MXNetIndexError, match=match) as info:
        out = mx_call()
        for o in out if isinstance(out, tuple) else (out,):
            o.asnumpy()
    assert isinstance(info.value, IndexError) and isinstance(info.value, MXNetError)
    return str(info.value)


# ----------------------------------------------------------------------------- getitem / setitem

@pytest.mark.parametrize("key", [[0, 5], [-3], [2]])
def test_getitem_list_out_of_range(key):
    x = mx.np.array(X)
    text = _raises_like_numpy(lambda: X[key], lambda: x[key])
    assert "__getitem__" in text and "axis 0 with size 2" in text and str(max(key, key=abs)) in text


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_getitem_index_array_out_of_range(dtype):
    x = mx.np.array(X)
    idx = onp.array([0, 5], dtype=dtype)
    _raises_like_numpy(lambda: X[idx], lambda: x[_int(idx, dtype)], match="index 5 .*axis 0 with size 2")


def test_getitem_mixed_basic_and_advanced_names_the_axis():
    x = mx.np.array(X)
    _raises_like_numpy(lambda: X[1, [0, 3]], lambda: x[1, _int([0, 3])], match="index 3 .*axis 1 with size 3")
    _raises_like_numpy(lambda: X[..., [3]], lambda: x[..., _int([3])], match="axis 1 with size 3")
    _raises_like_numpy(lambda: X[:, None, [-4]], lambda: x[:, None, _int([-4])], match="index -4")


@pytest.mark.parametrize("key", [[1, -2, 0], ([1, 0], [2, -3]), (slice(None), [2, 0])])
def test_getitem_in_range_matches_numpy(key):
    x = mx.np.array(X)
    onp.testing.assert_array_equal(x[key].asnumpy(), X[key])


@pytest.mark.parametrize("kind", ["list", "array"])
def test_setitem_out_of_range_raises_and_leaves_array_unchanged(kind):
    """Raised at the assignment (the write does not land: the array keeps its values)."""
    y = mx.np.array(X)
    expected = X.copy()
    with pytest.raises(IndexError):
        expected[[0, 5]] = 1
    key = [0, 5] if kind == "list" else _int([0, 5])
    with pytest.raises(MXNetIndexError, match="__setitem__: index 5 .*axis 0 with size 2"):
        y[key] = 1
    onp.testing.assert_array_equal(y.asnumpy(), X)
    y[[1, -2]] = 7
    expected[[1, -2]] = 7
    onp.testing.assert_array_equal(y.asnumpy(), expected)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), data=st.data())
def test_getitem_hypothesis_in_and_out_of_range(rows, cols, data):
    base = onp.arange(rows * cols, dtype=onp.float32).reshape(rows, cols)
    idx = onp.array(data.draw(st.lists(st.integers(-rows - 2, rows + 1), min_size=1, max_size=4)))
    x = mx.np.array(base)
    try:
        expected = base[idx]
    except IndexError:
        with pytest.raises(MXNetIndexError):
            x[_int(idx)].asnumpy()
    else:
        onp.testing.assert_array_equal(x[_int(idx)].asnumpy(), expected)


# ----------------------------------------------------------------------------- gather_nd / scatter_nd

def _gather_nd(data, idx):  # the NumPy oracle: out[y] = data[idx[0, y], ..., idx[M-1, y]]
    return data[tuple(idx)]


@pytest.mark.parametrize("front", [mx.npx.gather_nd, mx.nd.gather_nd])
def test_gather_nd_out_of_range_raises(front):
    make = mx.np.array if front is mx.npx.gather_nd else mx.nd.array
    idx = onp.array([[0, 5]])
    with pytest.raises(MXNetIndexError, match="gather_nd: index 5 is out of bounds for axis 0 with size 2"):
        front(make(X), make(idx, dtype="int32")).asnumpy()
    with pytest.raises(MXNetIndexError, match="index -4 .*axis 1 with size 3"):
        front(make(X), make([[0], [-4]], dtype="int32")).asnumpy()


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_gather_nd_hypothesis_matches_numpy(data):
    rows, cols = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    base = onp.arange(rows * cols, dtype=onp.float32).reshape(rows, cols)
    n = data.draw(st.integers(1, 3))
    idx = onp.array([data.draw(st.lists(st.integers(-rows - 1, rows), min_size=n, max_size=n)),
                     data.draw(st.lists(st.integers(-cols - 1, cols), min_size=n, max_size=n))])
    try:
        expected = _gather_nd(base, idx)
    except IndexError:
        with pytest.raises(MXNetIndexError):
            mx.npx.gather_nd(mx.np.array(base), _int(idx)).asnumpy()
    else:
        onp.testing.assert_array_equal(mx.npx.gather_nd(mx.np.array(base), _int(idx)).asnumpy(), expected)


@pytest.mark.parametrize("front", ["nd", "npx"])
def test_scatter_nd_out_of_range_raises_instead_of_dropping(front):
    make, op = (mx.nd.array, mx.nd.scatter_nd) if front == "nd" else (mx.np.array, mx.npx.scatter_nd)
    with pytest.raises(MXNetIndexError, match="scatter_nd: index 5 is out of bounds for axis 0 with size 2"):
        op(make([1.0, 2.0]), make([[0, 5]], dtype="int32"), shape=(2,)).asnumpy()
    out = op(make([1.0, 2.0]), make([[0, -1]], dtype="int32"), shape=(3,)).asnumpy()
    onp.testing.assert_array_equal(out, [1.0, 0.0, 2.0])


# ----------------------------------------------------------------------------- index_add / index_update

@pytest.mark.parametrize("front, combine", [(mx.npx.index_update, "set"), (mx.npx.index_add, "add")])
def test_index_scatter_out_of_range(front, combine):
    a = mx.np.array(X)
    name = "index_update" if combine == "set" else "index_add"
    with pytest.raises(MXNetIndexError, match=f"{name}: index 5 is out of bounds for axis 0 with size 2"):
        front(a, _int([[5]], "int64"), mx.np.array([1.0])).asnumpy()
    with pytest.raises(MXNetIndexError, match="index 3 .*axis 1 with size 3"):
        front(a, _int([[0], [3]], "int64"), mx.np.array([1.0])).asnumpy()
    expected = X.copy()
    if combine == "set":
        expected[[1, 0], [-1, 0]] = 9
    else:
        expected[[1, 0], [-1, 0]] += 9
    out = front(a, _int([[1, 0], [-1, 0]], "int64"), mx.np.array([9.0])).asnumpy()
    onp.testing.assert_array_equal(out, expected)


# ----------------------------------------------------------------------------- take and friends

def test_np_take_modes():
    x = mx.np.array(X)
    idx = onp.array([0, 9, -8])
    _raises_like_numpy(lambda: onp.take(X, idx), lambda: mx.np.take(x, _int(idx)), match="take: index 9")
    for mode in ("clip", "wrap"):
        onp.testing.assert_array_equal(mx.np.take(x, _int(idx), mode=mode).asnumpy(), onp.take(X, idx, mode=mode))
    onp.testing.assert_array_equal(mx.np.take(x, _int([2, -3]), axis=1).asnumpy(), onp.take(X, [2, -3], axis=1))


def test_nd_take_modes():
    x = mx.nd.array(X)
    with pytest.raises(MXNetIndexError, match="take"):
        mx.nd.take(x, mx.nd.array([0, 9]), mode="raise").asnumpy()
    onp.testing.assert_array_equal(mx.nd.take(x, mx.nd.array([0, 9])).asnumpy(), X[[0, 1]])  # default 'clip'
    onp.testing.assert_array_equal(mx.nd.take(x, mx.nd.array([3, -1]), mode="wrap").asnumpy(), X[[1, 1]])
    onp.testing.assert_array_equal(mx.nd.take(x, mx.nd.array([-2]), mode="raise").asnumpy(), X[[0]])


def test_take_along_axis_and_put_along_axis():
    x = mx.np.array(X)
    idx = onp.array([[2], [3]])
    _raises_like_numpy(lambda: onp.take_along_axis(X, idx, 1),
                       lambda: mx.np.take_along_axis(x, _int(idx, "int64"), 1), match="index 3 .*size 3")
    good = onp.array([[2], [-1]])
    onp.testing.assert_array_equal(mx.np.take_along_axis(x, _int(good, "int64"), 1).asnumpy(),
                                   onp.take_along_axis(X, good, 1))


def test_pick_keeps_clip_and_wrap_and_has_no_raise_mode():
    x = mx.np.array(X)
    idx = mx.np.array([0, 9])
    onp.testing.assert_array_equal(mx.npx.pick(x, idx).asnumpy(), [0.0, 5.0])  # 'clip' by default
    onp.testing.assert_array_equal(mx.npx.pick(x, idx, mode="wrap").asnumpy(), [0.0, 3.0])
    with pytest.raises(MXNetError, match="raise"):  # MXNet's pick knows only 'clip' and 'wrap'
        mx.npx.pick(x, idx, mode="raise").asnumpy()


# ----------------------------------------------------------------------------- user jax.jit

def test_user_jax_jit_reports_at_the_next_read():
    def fn(data, idx):
        return mx.npx.gather_nd(mx.np.array(data), mx.np.array(idx)).to_jax()

    compiled = jax.jit(fn)
    good = compiled(X, onp.array([[1, 0]], onp.int32))
    onp.testing.assert_array_equal(onp.asarray(good), X[[1, 0]])
    jax.block_until_ready(compiled(X, onp.array([[0, 2]], onp.int32)))
    with pytest.raises(MXNetIndexError, match="gather_nd: index 2 .*axis 0 with size 2"):
        mx.np.array([1.0]).asnumpy()
    onp.testing.assert_array_equal(mx.np.array([1.0]).asnumpy(), [1.0])  # reported once
