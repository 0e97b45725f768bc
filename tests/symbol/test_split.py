"""mx.sym.split_v2 / Symbol.split_v2 against NumPy's split, with MXNet's squeeze_axis rule."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError

X = onp.arange(24, dtype="float32").reshape(2, 3, 4)
a = mx.sym.var("a")


def _eval(sym):
    return [o.asnumpy() for o in sym.eval(a=mx.nd.array(X))]


@pytest.mark.parametrize("how, axis", [(2, 2), ((1, 2), 1), ((1,), -1), ((1, 3), 2), (2, 0)])
def test_split_v2_matches_numpy_split(how, axis):
    sym = mx.sym.split_v2(a, how, axis=axis)
    want = onp.split(X, list(how) if isinstance(how, tuple) else how, axis=axis)
    got = _eval(sym)
    assert len(sym.list_outputs()) == len(want)
    for g, w in zip(got, want, strict=True):
        onp.testing.assert_array_equal(g, w)
    assert sym.infer_shape(a=X.shape)[1] == [w.shape for w in want]


def test_squeeze_axis_drops_unit_parts_and_method_form():
    for sym in (mx.sym.split_v2(a, 3, axis=1, squeeze_axis=True), a.split_v2((1, 2), axis=1, squeeze_axis=True)):
        for i, part in enumerate(_eval(sym)):
            onp.testing.assert_array_equal(part, X[:, i])


def test_squeeze_of_a_larger_part_and_bad_arguments_raise():
    with pytest.raises(MXNetError):
        _eval(mx.sym.split_v2(a, 2, axis=2, squeeze_axis=True))
    with pytest.raises(MXNetError):
        _eval(mx.sym.split_v2(a, (1,), axis=1, squeeze_axis=True))
    with pytest.raises(ValueError, match="indices_or_sections must either int or tuple of ints"):
        mx.sym.split_v2(a, [1, 2])


def test_shuffle_names_nodes_after_the_function():
    with mx.name.NameManager():
        assert mx.sym.shuffle(a).name == "shuffle0"
    x = onp.arange(5, dtype="float32")
    (y,) = mx.sym.shuffle(a).eval(a=mx.nd.array(x))
    onp.testing.assert_array_equal(onp.sort(y.asnumpy()), x)
