"""Dynamic-shape ops (operator/dynamic.py and friends): values against NumPy, gradients against finite
differences, bad input, and how they meet shape inference, deferred compute and mx.sym."""
import json

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax as mx
from mxjax import _deferred_compute as dc
from mxjax import autograd, np, npx
from mxjax.base import MXNetError, MXNetIndexError, MXNetTypeError, MXNetValueError
from mxjax.operator import DynamicShapeError, get_op
from mxjax.operator.naming import op_for_json_name
from oracle import keep

RNG = onp.random.default_rng(7)
X = RNG.normal(size=(4, 3))                      # float64 data for gradients
W = RNG.normal(size=(4, 3))


def _i64(values):
    return keep(onp.asarray(values, onp.int64))


def _numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar NumPy function ``f`` at ``x``."""
    grad = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def _autograd(fn, x):
    """(output, d sum(sin(out) * weights) / dx) through mx.autograd, weights fixed per output shape."""
    arr = keep(x)
    arr.attach_grad()
    with autograd.record():
        out = fn(arr)
        weights = keep(onp.linspace(-1, 2, out.size).reshape(out.shape))
        loss = (np.sin(out) * weights).sum()
    loss.backward()
    return out.asnumpy(), arr.grad.asnumpy()


def _check_grad(fn, ref, x=X):
    """mx.autograd through ``fn`` == finite differences of the NumPy reference ``ref``."""
    out, grad = _autograd(fn, x)
    onp.testing.assert_allclose(out, ref(x), rtol=1e-12)

    def loss(v):
        y = ref(v)
        return (onp.sin(y) * onp.linspace(-1, 2, y.size).reshape(y.shape)).sum()
    onp.testing.assert_allclose(grad, _numeric_grad(loss, x.copy()), rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- registry

def test_flags_names_and_aliases():
    for name in ("_contrib_boolean_mask", "_zeros_by_shape_array", "_ones_by_shape_array", "_full_by_shape_array",
                 "_reshape_by_shape_array", "_broadcast_to_by_shape_array", "_getitem_mask", "_setitem_mask",
                 "nonzero", "argwhere", "flatnonzero", "unique", "compress", "extract"):
        assert get_op(name).dynamic_shape, name
    for name in ("shape_array", "size_array", "_contrib_index_array", "zeros", "reshape", "broadcast_to"):
        assert not get_op(name).dynamic_shape, name
    # MXNet's name and its NumPy-mode alias are the one op
    assert get_op("_npi_boolean_mask") is get_op("_contrib_boolean_mask") is get_op("_npx_boolean_mask")
    assert npx.boolean_mask.op is mx.nd.contrib.boolean_mask.op is get_op("_contrib_boolean_mask")
    assert np.zeros.op is get_op("zeros") and np.zeros.dynamic_op is get_op("_zeros_by_shape_array")


# ----------------------------------------------------------------------------- boolean_mask

MASKS = [
    (onp.array([1, 0, 0, 1]), 0),
    (onp.array([True, False, True, True]), 0),
    (onp.array([0.0, -2.5, onp.nan, 0.0]), 0),     # any non-zero selects, NaN too (MXNet's rule)
    (onp.zeros(4, onp.int32), 0),                   # empty result
    (onp.ones(4, onp.uint8), 0),
    (onp.array([0, 1, 1]), 1),
    (onp.array([False, False, True]), -1),
]


@pytest.mark.parametrize("index,axis", MASKS)
def test_boolean_mask_against_numpy(index, axis):
    want = onp.compress(index != 0, X, axis=axis)
    got = npx.boolean_mask(keep(X), keep(index), axis=axis)
    assert isinstance(got, np.ndarray) and got.dtype == onp.float64
    onp.testing.assert_array_equal(got.asnumpy(), want)
    legacy = mx.nd.contrib.boolean_mask(mx.nd.array(X.astype(onp.float32)), mx.nd.array(index), axis=axis)
    assert type(legacy) is mx.nd.NDArray and legacy.dtype == onp.float32
    onp.testing.assert_array_equal(legacy.asnumpy(), want.astype(onp.float32))


def test_boolean_mask_mxnet_example_and_int_data():
    data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    out = mx.nd.contrib.boolean_mask(data, mx.nd.array([0, 1, 0]))
    onp.testing.assert_array_equal(out.asnumpy(), [[4, 5, 6]])
    ints = keep(onp.arange(6, dtype=onp.int32).reshape(3, 2))
    got = npx.boolean_mask(ints, keep(onp.array([True, False, True])))
    assert got.dtype == onp.int32
    onp.testing.assert_array_equal(got.asnumpy(), [[0, 1], [4, 5]])


@pytest.mark.parametrize("index,axis", [m for m in MASKS if not onp.isnan(m[0].astype(float)).any()])
def test_boolean_mask_gradient(index, axis):
    _check_grad(lambda x: npx.boolean_mask(x, keep(index), axis=axis),
                lambda v: onp.compress(index != 0, v, axis=axis))


def test_boolean_mask_gradient_is_a_scatter_to_the_selected_rows():
    x = keep(X)
    x.attach_grad()
    head = RNG.normal(size=(2, 3))
    with autograd.record():
        y = npx.boolean_mask(x, keep(onp.array([0, 1, 0, 1])))
    y.backward(keep(head))
    want = onp.zeros_like(X)
    want[[1, 3]] = head
    onp.testing.assert_array_equal(x.grad.asnumpy(), want)


@pytest.mark.parametrize("call,error,match", [
    (lambda: npx.boolean_mask(keep(X), keep(onp.ones(3))), MXNetValueError,
     r"boolean_mask: index of length 3 does not match data of shape \(4, 3\) along axis 0"),
    (lambda: npx.boolean_mask(keep(X), keep(onp.ones(4)), axis=1), MXNetValueError,
     r"boolean_mask: index of length 4 .* axis 1 \(size 3\)"),
    (lambda: npx.boolean_mask(keep(X), keep(onp.ones((4, 1)))), MXNetValueError,
     r"boolean_mask: index must be 1-D, got shape \(4, 1\)"),
    (lambda: npx.boolean_mask(keep(X), keep(onp.ones(4)), axis=2), MXNetValueError,
     "boolean_mask: axis 2 is out of bounds"),
    (lambda: mx.nd.contrib.boolean_mask(mx.nd.ones((2, 2)), mx.nd.ones(3)), MXNetValueError,
     "boolean_mask: index of length 3"),
])
def test_boolean_mask_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------- shapes given as arrays

@pytest.mark.parametrize("shape", [[2, 3], [0, 3], [4], [], 5, [1, 2, 1]])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_creation_from_a_shape_array(shape, dtype):
    arr = keep(onp.asarray(shape, dtype))
    want_shape = onp.zeros(onp.asarray(shape, dtype)).shape          # NumPy accepts an int array too
    static = tuple(onp.atleast_1d(onp.asarray(shape)).tolist())
    for name, args, value in (("zeros", (), 0), ("ones", (), 1), ("empty", (), 0), ("full", (2.5,), 2.5)):
        got = getattr(np, name)(arr, *args)
        assert got.shape == want_shape, name
        assert got.dtype == getattr(np, name)(static, *args).dtype       # same dtype rule as a tuple shape
        onp.testing.assert_array_equal(got.asnumpy(), onp.full(want_shape, value))


def test_creation_keywords_dtype_and_fill_array():
    s = npx.shape_array(np.ones((2, 3)))
    assert s.dtype == onp.int64 and s.asnumpy().tolist() == [2, 3]
    got = np.ones(shape=s, dtype="int32")
    assert got.dtype == onp.int32 and got.shape == (2, 3)
    got = np.full(s, keep(onp.int32(7)))
    assert got.dtype == onp.int32 and (got.asnumpy() == 7).all()
    got = np.full(s, fill_value=keep([1.0, 2.0, 3.0]))           # the fill broadcasts
    onp.testing.assert_array_equal(got.asnumpy(), onp.full((2, 3), [1.0, 2.0, 3.0]))


@pytest.mark.parametrize("spec", [[3, 4], [-1], [2, -1, 3], [12, 1]])
def test_reshape_by_shape_array(spec):
    a = onp.arange(12.0).reshape(4, 3)
    want = onp.reshape(a, spec)
    for got in (np.reshape(keep(a), _i64(spec)), keep(a).reshape(_i64(spec)),
                npx.reshape(keep(a), _i64(spec)), npx.reshape(keep(a), newshape=_i64(spec))):
        assert got.shape == want.shape
        onp.testing.assert_array_equal(got.asnumpy(), want)


def test_npx_reshape_codes_by_shape_array():
    a = np.ones((2, 3, 4))
    for spec in ([-2, -1], [-5, -4], [-6, 1, 2, -4], [-4]):
        assert npx.reshape(a, _i64(spec)).shape == npx.reshape(a, tuple(spec)).shape
    assert npx.reshape(a, _i64([-1, 4]), reverse=True).shape == (6, 4)


@pytest.mark.parametrize("src,spec", [((3,), [2, 3]), ((4, 1), [2, 4, 5]), ((), [0, 2]), ((2, 3), [2, 3])])
def test_broadcast_to_by_shape_array(src, spec):
    a = RNG.normal(size=src)
    got = np.broadcast_to(keep(a), _i64(spec))
    onp.testing.assert_array_equal(got.asnumpy(), onp.broadcast_to(a, spec))
    got = np.broadcast_to(keep(a), shape=_i64(spec))
    assert got.shape == tuple(spec)


def test_gradients_through_shape_arrays():
    _check_grad(lambda x: np.reshape(x, npx.shape_array(x)[::-1]), lambda v: v.reshape(v.shape[::-1]))
    _check_grad(lambda x: np.reshape(x, _i64([2, -1])), lambda v: v.reshape(2, -1))
    _check_grad(lambda x: np.broadcast_to(x, _i64([2, 4, 3])), lambda v: onp.broadcast_to(v, (2, 4, 3)))
    _check_grad(lambda x: np.broadcast_to(x[:1], _i64([5, 3])), lambda v: onp.broadcast_to(v[:1], (5, 3)))
    fill = keep(1.5)
    fill.attach_grad()
    with autograd.record():
        out = np.full(_i64([2, 3]), fill) * keep(W[:2])
    out.backward()
    onp.testing.assert_allclose(fill.grad.asnumpy(), W[:2].sum())


@pytest.mark.parametrize("call,error,match", [
    (lambda: np.zeros(keep(onp.array([2.0, 3.0]))), MXNetTypeError,
     "zeros: a shape array must have an integer dtype, got float64"),
    (lambda: np.ones(keep(onp.array([True]))), MXNetTypeError, "ones: a shape array must have an integer"),
    (lambda: np.full(_i64([2, -3]), 1.0), MXNetValueError,
     r"full: negative dimensions are not allowed, got shape array \[2, -3\]"),
    (lambda: np.zeros(_i64([[2, 3]])), MXNetValueError, r"zeros: a shape array must be 0-D or 1-D.*\(1, 2\)"),
    (lambda: np.broadcast_to(np.ones(3), _i64([-1, 3])), MXNetValueError, "broadcast_to: negative dimensions"),
    (lambda: np.broadcast_to(np.ones((2, 3)), _i64([3, 3])), MXNetValueError,
     r"broadcast_to: cannot broadcast an array of shape \(2, 3\) to shape \(3, 3\)"),
    (lambda: np.reshape(np.ones(6), keep(onp.array([2.0, 3.0]))), MXNetTypeError,
     "reshape: a shape array must have an integer dtype"),
    (lambda: np.reshape(np.ones(6), _i64([4, -1])), MXNetValueError, r"cannot reshape array of shape \(6,\)"),
    (lambda: np.reshape(np.ones(6), _i64([-7, 6])), MXNetValueError, "invalid shape code -7"),
    (lambda: np.zeros(_i64([2, 3]), order="X"), MXNetValueError, "zeros: order must be one of"),
])
def test_shape_array_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------- index_array (static)

@pytest.mark.parametrize("shape,axes", [((3, 2), None), ((3, 2, 2), (1, 0)), ((2, 3), (-1,)), ((4,), None)])
def test_index_array(shape, axes):
    grid = onp.indices(shape)
    picked = range(len(shape)) if axes is None else [a % len(shape) for a in axes]
    want = onp.stack([grid[a] for a in picked], axis=-1)
    got = mx.nd.contrib.index_array(mx.nd.ones(shape), axes=axes)
    assert got.dtype == onp.int64
    onp.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(MXNetValueError, match="index_array: axis 5 is out of range"):
        mx.nd.contrib.index_array(mx.nd.ones(shape), axes=(5,))


# ----------------------------------------------------------------------------- shape inference, jit, mx.sym

@pytest.mark.parametrize("op,avals", [
    ("_contrib_boolean_mask", [jax.ShapeDtypeStruct((4, 3), "float32"), jax.ShapeDtypeStruct((4,), "int32")]),
    ("_zeros_by_shape_array", [jax.ShapeDtypeStruct((2,), "int64")]),
    ("_reshape_by_shape_array", [jax.ShapeDtypeStruct((6,), "float32"), jax.ShapeDtypeStruct((2,), "int64")]),
    ("argwhere", [jax.ShapeDtypeStruct((4, 3), "float32")]),
    ("unique", [jax.ShapeDtypeStruct((5,), "float32")]),
])
def test_shape_inference_says_the_op_is_dynamic(op, avals):
    with pytest.raises(DynamicShapeError, match=f"{op} is a dynamic-shape op: its output shape depends on"):
        get_op(op).eval_shape(*avals)
    assert issubclass(DynamicShapeError, MXNetError)


def test_inside_one_compiled_program_the_error_names_the_op():
    boolean_mask = get_op("_contrib_boolean_mask").compute
    with pytest.raises(DynamicShapeError, match="_contrib_boolean_mask is a dynamic-shape op.* values of its index"):
        jax.jit(boolean_mask)(jnp.ones((3, 2)), jnp.array([1, 0, 1]))
    zeros = get_op("_zeros_by_shape_array").compute
    with pytest.raises(DynamicShapeError, match="_zeros_by_shape_array is a dynamic-shape op.* its shape array"):
        jax.jit(zeros)(jnp.array([2, 3]))
    # a float index cannot be a traced gradient input either: the same error, not a tracer leak
    with pytest.raises(DynamicShapeError):
        jax.grad(lambda i: boolean_mask(jnp.ones((3, 2)), i).sum())(jnp.array([1.0, 0.0, 1.0]))


def test_symbol_functions_exist_and_infer_shape_reports_dynamic():
    x, m = mx.sym.var("x"), mx.sym.var("m")
    masked = mx.sym._contrib_boolean_mask(x, m, axis=0)
    assert masked.list_arguments() == ["x", "m"]
    with pytest.raises(MXNetError, match="dynamic-shape op"):
        masked.infer_shape(x=(4, 3), m=(4,))
    assert masked.infer_type(x="float32", m="int32")[1] == [onp.float32]
    shape = mx.sym.shape_array(x)
    assert shape.infer_shape(x=(4, 3))[1] == [(2,)]                 # static: only the number of dims
    zeros = mx.sym.np._zeros_by_shape_array(shape)
    with pytest.raises(MXNetError, match="dynamic-shape op"):
        zeros.infer_shape(x=(4, 3))
    for name in ("argwhere", "unique", "_npi_boolean_mask", "_reshape_by_shape_array", "_contrib_index_array"):
        assert callable(getattr(mx.sym, name))
    assert mx.sym._contrib_index_array(x).infer_shape(x=(4, 3))[1] == [(4, 3, 2)]


# ----------------------------------------------------------------------------- deferred compute

def _ops(sym):
    """The registered ops a symbol's nodes run (JSON names map back: argwhere is written _npi_nonzero)."""
    return [op_for_json_name(n["op"]).name for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]


def test_deferred_compute_runs_dynamic_ops_at_once_and_records_them():
    a = keep(X)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        rows = a[:, 0] > 0
        assert rows._var is not None                                # a static op: lazy
        picked = npx.boolean_mask(a, rows)
        assert picked._var is None and picked.shape == (int((X[:, 0] > 0).sum()), 3)   # computed now
        shape = npx.shape_array(a)
        filled = np.full(shape, 2.0)
        assert filled._var is None and filled.shape == (4, 3)
        flipped = np.reshape(a, shape[::-1])
        spread = np.broadcast_to(a[0], shape)
        assert flipped.shape == (3, 4) and spread.shape == (4, 3)
        total = picked.sum() + filled.sum() + flipped.sum() + spread.sum()
        assert total._var is not None                               # static again downstream
        sym = dc.get_symbol(total)
    ops = _ops(sym)
    for op in ("_contrib_boolean_mask", "shape_array", "_full_by_shape_array", "_reshape_by_shape_array",
               "_broadcast_to_by_shape_array"):
        assert op in ops, op
    assert sym.list_arguments() == ["a"]                            # mask and shape stay graph inputs
    want = X[X[:, 0] > 0].sum() + 2.0 * 12 + X.sum() + 4 * X[0].sum()
    onp.testing.assert_allclose(total.asnumpy(), want, rtol=1e-12)
    onp.testing.assert_array_equal(picked.asnumpy(), X[X[:, 0] > 0])


def test_deferred_compute_records_the_numpy_dynamic_ops():
    a = keep(X)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        positive = a > 0
        outs = [np.argwhere(positive), np.flatnonzero(positive), *np.where(positive), np.unique(np.round(a)),
                np.compress(positive[:, 0], a, axis=0), np.extract(positive, a)]
        for out in outs:
            assert out._var is None
        sym = dc.get_symbol([o.astype("float64").sum() for o in outs])
    for op in ("argwhere", "flatnonzero", "nonzero", "unique", "compress", "extract"):
        assert op in _ops(sym), op
    onp.testing.assert_array_equal(outs[0].asnumpy(), onp.argwhere(X > 0))
    onp.testing.assert_array_equal(outs[-1].asnumpy(), onp.extract(X > 0, X))


def test_deferred_compute_keeps_a_getitem_mask_as_a_graph_input():
    a = keep(X)
    with dc.context():
        dc.set_variable(a, mx.sym.var("a"))
        picked = a[a > 0]
        assert picked._var is None and picked.shape == (int((X > 0).sum()),)
        sym = dc.get_symbol(picked)
    node = json.loads(sym.tojson())["nodes"][-1]
    assert op_for_json_name(node["op"]).name == "_getitem_mask"
    assert len(node["inputs"]) == 2 and "__constants__" not in node.get("attrs", {})   # the mask is an input
    onp.testing.assert_array_equal(picked.asnumpy(), X[X > 0])
