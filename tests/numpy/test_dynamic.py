"""mx.np's data-dependent-shape functions against NumPy: nonzero and friends, unique, compress/extract,
boolean-mask indexing and assignment, including empty results, gradients and bad input."""
import itertools

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, np, npx
from mxjax.base import MXNetIndexError, MXNetValueError

RNG = onp.random.default_rng(3)
F = RNG.normal(size=(3, 4)).astype(onp.float32)
T = onp.array([[3, 1, 3, 0], [1, 1, 2, 0], [3, 1, 3, 0]], onp.int32)      # ties and a repeated row
INPUTS = [F, T, T > 1, onp.zeros((2, 3), onp.float32), onp.array([0.0, 2.5, -1.0]),
          RNG.integers(0, 2, size=(2, 3, 2)).astype(onp.int64)]


def _same(got, want):
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    onp.testing.assert_array_equal(got.asnumpy(), want)


def _tuple(got, want):
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


@pytest.mark.parametrize("a", INPUTS, ids=lambda a: f"{a.dtype}{a.shape}")
def test_nonzero_family(a):
    x = np.array(a)
    _tuple(np.nonzero(x), onp.nonzero(a))
    _tuple(x.nonzero(), onp.nonzero(a))
    _tuple(np.where(x), onp.where(a))                     # one argument: nonzero
    _same(np.argwhere(x), onp.argwhere(a))
    _same(np.flatnonzero(x), onp.flatnonzero(a))


_FLAGS = list(itertools.product([False, True], repeat=3))


@pytest.mark.parametrize("flags", _FLAGS, ids=lambda f: "".join(c if x else "-" for c, x in zip("ivc", f)))
@pytest.mark.parametrize("a,axis", [(T, None), (T, 0), (T, 1), (F, None), (onp.array([True, False, True]), None),
                                    (onp.zeros(0, onp.float32), None), (onp.array([2, 2, 2]), 0)])
def test_unique_against_numpy(a, axis, flags):
    index, inverse, counts = flags
    want = onp.unique(a, return_index=index, return_inverse=inverse, return_counts=counts, axis=axis)
    got = np.unique(np.array(a), return_index=index, return_inverse=inverse, return_counts=counts, axis=axis)
    if isinstance(want, tuple):
        _tuple(got, want)
    else:
        _same(got, want)


def test_unique_has_a_zero_gradient_as_in_mxnet():
    x = np.array(onp.array([3.0, 1.0, 3.0]))
    x.attach_grad()
    with autograd.record():
        y = np.unique(x)
    y.backward()
    assert y.asnumpy().tolist() == [1.0, 3.0]
    assert x.grad.asnumpy().tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("condition,axis", [
    ([True, False, True], 0), ([0, 3, 0, -1], 1), ([False] * 4, 1), ([True, False], 1), ([1, 0, 1, 1, 0], None),
    ([], 0),
])
def test_compress_against_numpy(condition, axis):
    condition = onp.asarray(condition, dtype=onp.int64 if not condition else None)
    _same(np.compress(np.array(condition), np.array(F), axis=axis), onp.compress(condition, F, axis=axis))


@pytest.mark.parametrize("condition", [T > 1, T, onp.zeros_like(T), onp.array([1, 0, 1]), onp.array([[0.5, onp.nan]])])
def test_extract_against_numpy(condition):
    _same(np.extract(np.array(condition), np.array(F)), onp.extract(condition, F))


@pytest.mark.parametrize("call,ref", [
    (lambda m: np.compress(m, np.array(F), axis=1), lambda c: onp.compress(c, F, axis=1)),
    (lambda m: np.extract(m, np.array(F)), lambda c: onp.extract(c, F)),
])
def test_selection_past_the_end_is_an_index_error_as_in_numpy(call, ref):
    condition = onp.array([0] * 12 + [1])
    with pytest.raises(IndexError):
        ref(condition)
    with pytest.raises(MXNetIndexError, match="index 12 is out of bounds"):
        call(np.array(condition))


# ----------------------------------------------------------------------------- boolean-mask indexing

def _mask(values):
    return np.array(onp.asarray(values, bool))


KEYS = [
    lambda m: (F > 0,),                       # a full mask
    lambda m: (onp.zeros((3, 4), bool),),     # an all-False mask: empty result
    lambda m: (onp.array([True, False, True]),),
    lambda m: (onp.array([True, False, True]), slice(1, None)),
    lambda m: (slice(None), onp.array([False, True, True, False])),
    lambda m: (onp.array([False, True, False]), 2),
    lambda m: (Ellipsis, onp.array([True, False, False, True])),
]


@pytest.mark.parametrize("key", KEYS)
def test_mask_getitem_against_numpy(key):
    k = key(None)
    mx_key = tuple(_mask(v) if isinstance(v, onp.ndarray) else v for v in k)
    _same(np.array(F)[mx_key if len(mx_key) > 1 else mx_key[0]], F[k if len(k) > 1 else k[0]])


@pytest.mark.parametrize("key", KEYS)
def test_mask_getitem_gradient(key):
    """d sum(sin(x[key]) * w) / dx against central differences of the NumPy function."""
    k = key(None)
    k = k if len(k) > 1 else k[0]
    mx_key = tuple(_mask(v) if isinstance(v, onp.ndarray) else v for v in key(None))
    mx_key = mx_key if len(mx_key) > 1 else mx_key[0]
    a = F.astype(onp.float64)
    x = np.array(a)
    x.attach_grad()
    with autograd.record():
        y = x[mx_key]
        w = np.array(onp.linspace(-1.0, 1.0, y.size).reshape(y.shape))
        loss = (np.sin(y) * w).sum()
    loss.backward()

    def f(v):
        s = v[k]
        return (onp.sin(s) * onp.linspace(-1.0, 1.0, s.size).reshape(s.shape)).sum()
    numeric = onp.zeros_like(a)
    for i in onp.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        numeric[i] = (f(up) - f(down)) / 2e-6
    onp.testing.assert_allclose(x.grad.asnumpy(), numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("key,value", [
    (lambda: F > 0, 7.0),
    (lambda: F > 0, lambda n: onp.arange(n, dtype=onp.float32)),
    (lambda: onp.array([True, False, True]), onp.array([1.0, 2.0, 3.0, 4.0], onp.float32)),   # broadcast rows
    (lambda: onp.array([True, False, True]), onp.array([[1.0], [2.0]], onp.float32)),
    (lambda: onp.zeros((3, 4), bool), 5.0),                                                 # nothing selected
])
def test_mask_setitem_against_numpy(key, value):
    k = key()
    v = value(int(k.sum())) if callable(value) else value
    want = F.copy()
    want[k] = v
    x = np.array(F)
    x[_mask(k)] = np.array(v) if isinstance(v, onp.ndarray) else v
    _same(x, want)


def test_mask_errors_name_the_op_and_shapes():
    x = np.array(F)
    with pytest.raises(MXNetIndexError, match=r"_getitem_mask: boolean index did not match .*\(2,\)"):
        x[_mask([True, False])]
    with pytest.raises(MXNetIndexError, match=r"_getitem_mask: .*\(3, 3\)"):
        x[_mask(onp.ones((3, 3)))]
    with pytest.raises(MXNetIndexError, match="integer or boolean type, got float32"):
        x[np.array(onp.array([1.0, 0.0, 1.0], onp.float32))]         # a float "mask" is not an index
    with pytest.raises(MXNetIndexError, match="_setitem_mask: boolean index did not match"):
        x[_mask([True, False])] = 1.0
    with pytest.raises(MXNetValueError, match=r"_setitem_mask .*value of shape \(2,\) to the selection of shape \(3,\)"):
        x[_mask(onp.array([True, True, True, False] + [False] * 8).reshape(3, 4))] = np.array(onp.ones(2, onp.float32))
    onp.testing.assert_array_equal(x.asnumpy(), F)                    # failed writes leave it untouched


def test_integer_array_index_stays_fancy_indexing():
    rows = onp.array([2, 0, 2])
    _same(np.array(F)[np.array(rows)], F[rows])


# ----------------------------------------------------------------------------- shape arrays, legacy names

def test_shape_array_in_every_front_end():
    a = onp.ones((2, 3, 4), onp.float32)
    _same(npx.shape_array(np.array(a)), onp.array([2, 3, 4], onp.int64))
    _same(npx.shape_array(np.array(onp.float32(1.0))), onp.zeros(0, onp.int64))
    legacy = mx.nd.shape_array(mx.nd.array(a))
    assert type(legacy) is mx.nd.NDArray and legacy.dtype == onp.int64
    onp.testing.assert_array_equal(legacy.asnumpy(), [2, 3, 4])
    onp.testing.assert_array_equal(mx.nd.array(a).shape_array().asnumpy(), [2, 3, 4])
    onp.testing.assert_array_equal(mx.nd.size_array(mx.nd.array(a)).asnumpy(), [24])


def test_shape_computed_from_data_builds_arrays():
    x = np.array(F)
    count = (x > 0).sum().astype("int64")                            # a data-dependent length
    shape = np.stack([count, np.array(onp.int64(2))])
    want = (int((F > 0).sum()), 2)
    assert np.zeros(shape).shape == want and np.ones(shape).shape == want
    _same(np.full(shape, 3, dtype="int32"), onp.full(want, 3, onp.int32))
    _same(np.reshape(np.arange(12.0), npx.shape_array(x)), onp.arange(12.0, dtype=onp.float32).reshape(3, 4))


@pytest.mark.parametrize("hybridize", [False, True])
def test_nonzero_of_1d_is_a_tuple_of_one_in_a_block(hybridize):
    """np.nonzero of a 1-D array is a 1-tuple inside a hybridized block too (it was a bare array)."""
    class Positive(mx.gluon.HybridBlock):
        def forward(self, x):
            return np.nonzero(x > 0)[0] * 2

    block = Positive()
    if hybridize:
        block.hybridize()
    for values in ([3.0, -1.0, 3.0, 2.0], [-1.0, 5.0]):
        expected = onp.nonzero(onp.array(values) > 0)[0] * 2
        onp.testing.assert_array_equal(block(np.array(values)).asnumpy(), expected)
