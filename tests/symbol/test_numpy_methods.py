"""Methods and indexing of a NumPy-semantics symbol (``mx.sym.np._Symbol``): NumPy's, as MXNet 2.0's,
checked by binding the symbol and comparing with NumPy on the same values."""
import numpy as onp
import pytest

import mxjax as mx

VALUES = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)


def run(symbol, **extra):
    """The symbol's first output on ``a`` = VALUES (and ``extra`` inputs)."""
    args = {"a": mx.np.array(VALUES), **{k: mx.np.array(v) for k, v in extra.items()}}
    out = symbol.bind(mx.cpu(), args).forward()[0]
    assert isinstance(out, mx.np.ndarray)
    return out.asnumpy()


@pytest.fixture
def a():
    return mx.sym.var("a").as_np_ndarray()


CASES = [
    ("sum", lambda s: s.sum(), lambda x: x.sum()),
    ("sum_axis_keepdims", lambda s: s.sum(axis=1, keepdims=True), lambda x: x.sum(axis=1, keepdims=True)),
    ("mean", lambda s: s.mean(axis=(0, 2)), lambda x: x.mean(axis=(0, 2))),
    ("max", lambda s: s.max(axis=2), lambda x: x.max(axis=2)),
    ("min", lambda s: s.min(), lambda x: x.min()),
    ("prod", lambda s: s.prod(axis=0), lambda x: x.prod(axis=0)),
    ("std", lambda s: s.std(axis=1), lambda x: x.std(axis=1)),
    ("var", lambda s: s.var(), lambda x: x.var()),
    ("argmax", lambda s: s.argmax(axis=1), lambda x: x.argmax(axis=1)),
    ("argmin", lambda s: s.argmin(), lambda x: x.argmin()),
    ("argsort", lambda s: (-s).argsort(axis=2), lambda x: (-x).argsort(axis=2)),
    ("sort", lambda s: (-s).sort(axis=1), lambda x: onp.sort(-x, axis=1)),
    ("cumsum", lambda s: s.cumsum(), lambda x: x.cumsum()),
    ("reshape_args", lambda s: s.reshape(4, -1), lambda x: x.reshape(4, -1)),
    ("reshape_tuple", lambda s: s.reshape((-1, 2)), lambda x: x.reshape((-1, 2))),
    ("flatten", lambda s: s.flatten(), lambda x: x.flatten()),
    ("transpose", lambda s: s.transpose(), lambda x: x.transpose()),
    ("transpose_axes", lambda s: s.transpose(1, 0, 2), lambda x: x.transpose(1, 0, 2)),
    ("T", lambda s: s.T, lambda x: x.T),
    ("swapaxes", lambda s: s.swapaxes(0, 2), lambda x: x.swapaxes(0, 2)),
    ("squeeze", lambda s: s.reshape(1, 24).squeeze(), lambda x: x.reshape(1, 24).squeeze()),
    ("astype", lambda s: s.astype("int32"), lambda x: x.astype("int32")),
    ("clip", lambda s: s.clip(2, 5), lambda x: x.clip(2, 5)),
    ("round", lambda s: (s / 7).round(), lambda x: (x / 7).round()),
    ("repeat", lambda s: s.repeat(2, axis=0), lambda x: x.repeat(2, axis=0)),
    ("diagonal", lambda s: s.diagonal(), lambda x: x.diagonal()),
    ("dot", lambda s: s.dot(s.reshape(4, 6)), lambda x: x.dot(x.reshape(4, 6))),
    ("index_int", lambda s: s[0], lambda x: x[0]),
    ("index_negative", lambda s: s[-1, 1], lambda x: x[-1, 1]),
    ("index_slices", lambda s: s[:, 1:3], lambda x: x[:, 1:3]),
    ("index_step_none_ellipsis", lambda s: s[..., ::2, None], lambda x: x[..., ::2, None]),
]


@pytest.mark.parametrize("build,expect", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_numpy_methods_match_numpy(a, build, expect):
    symbol = build(a)
    assert type(symbol).__name__ == "_Symbol"
    got, want = run(symbol), expect(VALUES)
    assert got.shape == want.shape and got.dtype == want.dtype  # (sum is 0-d, argmax int64: NumPy's)
    onp.testing.assert_allclose(got, want, rtol=1e-6)


def test_index_by_an_integer_symbol(a):
    idx = mx.sym.var("idx").as_np_ndarray()
    got = run(a[:, idx], idx=onp.array([2, 0], dtype=onp.int32))
    onp.testing.assert_array_equal(got, VALUES[:, [2, 0]])
    got = run(a.take(idx, axis=2), idx=onp.array([3, 1], dtype=onp.int32))
    onp.testing.assert_array_equal(got, VALUES.take([3, 1], axis=2))


def test_reshape_follows_numpy_not_legacy_codes(a):
    """A 0 in the shape is an axis of length 0 to NumPy (1.x's Reshape copies the input's axis)."""
    with pytest.raises(mx.base.MXNetError):
        run(a.reshape(0, -1))
    assert run(a.as_nd_ndarray().reshape((0, -1)).as_np_ndarray()).shape == (2, 12)


def test_group_indexing_selects_outputs(a):
    group = mx.sym.np.split(a, 3, axis=1)
    assert group.num_outputs == 3 and a.num_outputs == 1
    assert run(group[1]).shape == (2, 1, 4)
    onp.testing.assert_array_equal(run(group[-1]), VALUES[:, 2:])
    tail = group[1:]
    assert type(tail).__name__ == "_Symbol" and tail.num_outputs == 2


def test_legacy_fluent_methods_are_not_numpy_methods(a):
    """MXNet 2.0 takes the 1.x fluent methods off NumPy symbols; legacy symbols keep them."""
    for name in ("softmax", "exp", "expand_dims", "tile", "slice_axis", "zeros_like", "split_v2"):
        with pytest.raises(AttributeError, match=name):
            getattr(a, name)()
    assert type(mx.sym.var("b").softmax()).__name__ == "Symbol"


def test_bad_index_is_an_index_error(a):
    with pytest.raises(IndexError, match="indexed by"):
        a["x", 1]
    with pytest.raises(mx.base.MXNetError, match="casting"):
        a.astype("int32", casting="same_kind")
