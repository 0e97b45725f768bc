"""mx.nd legacy ops against NumPy: scalar ops, comparisons, reductions, arithmetic helpers, creation.

MXNet 1.x rules checked here: results keep the input dtype (comparisons give 0/1,
not bool; argmax gives float indices for float input), reductions to a scalar give
shape (1,), ``exclude=`` inverts the reduced axes.
"""
import re

import numpy as onp
import pytest

import mxjax.ndarray as nd
import mxjax.numpy as np
from mxjax.base import MXNetError
from mxjax._ndarray import NDArray
from mxjax.operator import get_op
from mxjax.operator.legacy import LEGACY_JSON_NAMES, legacy_op_name

RNG = onp.random.default_rng(0)


def _arr(shape, dtype="float32", low=-3, high=3):
    if onp.dtype(dtype).kind in "iu":
        return RNG.integers(low, high, size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def _check(got, want, dtype=None, rtol=1e-5, atol=1e-6):
    assert type(got) is NDArray
    dtype = dtype or (want.dtype if isinstance(want, onp.ndarray) else "float32")  # lists: MXNet's float32
    want = onp.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert onp.dtype(got.dtype) == onp.dtype(dtype)
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), want.astype(onp.float64), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- scalar ops

def _legacy_mod(a, b):
    b = onp.broadcast_to(b, onp.broadcast(a, b).shape)
    return onp.where(b == 0, 0, onp.mod(a, onp.where(b == 0, 1, b)))


# name: (reference(a, s) in float64, reflected)
SCALAR_OPS = {
    "_plus_scalar": (onp.add, False), "_minus_scalar": (onp.subtract, False),
    "_rminus_scalar": (onp.subtract, True), "_mul_scalar": (onp.multiply, False),
    "_div_scalar": (onp.true_divide, False), "_rdiv_scalar": (onp.true_divide, True),
    "_mod_scalar": (_legacy_mod, False), "_rmod_scalar": (_legacy_mod, True),
    "_power_scalar": (onp.power, False), "_rpower_scalar": (onp.power, True),
    "_maximum_scalar": (onp.maximum, False), "_minimum_scalar": (onp.minimum, False),
    "_hypot_scalar": (onp.hypot, False),
    "_equal_scalar": (onp.equal, False), "_not_equal_scalar": (onp.not_equal, False),
    "_greater_scalar": (onp.greater, False), "_greater_equal_scalar": (onp.greater_equal, False),
    "_lesser_scalar": (onp.less, False), "_lesser_equal_scalar": (onp.less_equal, False),
    "_logical_and_scalar": (onp.logical_and, False), "_logical_or_scalar": (onp.logical_or, False),
    "_logical_xor_scalar": (onp.logical_xor, False),
}


@pytest.mark.parametrize("name", sorted(SCALAR_OPS))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_scalar_ops_keep_the_input_dtype(name, dtype):
    ref, reflected = SCALAR_OPS[name]
    x = _arr((2, 3), dtype, 1, 4)
    scalar = 2.0 if dtype == "int32" else 1.5
    if name in ("_rdiv_scalar", "_rmod_scalar", "_rpower_scalar") and dtype == "float32":
        x = onp.abs(x) + 0.5
    want = ref(scalar, x.astype(onp.float64)) if reflected else ref(x.astype(onp.float64), scalar)
    if dtype == "int32":  # computed in int32: C truncation (division, hypot)
        want = onp.trunc(want)
    got = getattr(nd, name)(nd.array(x, dtype=dtype), scalar=scalar)
    _check(got, onp.asarray(want).astype(onp.float64), dtype=dtype, rtol=1e-5)


def test_scalar_op_casts_the_scalar_to_the_array_dtype():
    x = nd.array([1, 2, 3], dtype="int32")
    _check(nd._plus_scalar(x, scalar=1.7), [2, 3, 4], "int32")  # DType(1.7) == 1
    _check(nd._greater_equal_scalar(x, scalar=2.5), [0, 1, 1], "int32")  # x >= 2
    _check(nd._mod_scalar(nd.array([5.0, -5.0]), scalar=0.0), [0, 0], "float32")  # mod 0 is 0
    _check(nd._mod_scalar(nd.array([5.0, -5.0]), scalar=-3.0), [-1, -2], "float32")


def test_scalar_op_params_decode_from_json_attrs():
    op = get_op("_mul_scalar")
    assert op.decode_params({"scalar": "0.5"}) == {"scalar": 0.5}
    assert op.decode_params({"scalar": "2", "is_int": "True"}) == {"scalar": 2.0, "is_int": True}


# ----------------------------------------------------------------------------- broadcast comparisons

BROADCAST = {
    "broadcast_equal": onp.equal, "broadcast_not_equal": onp.not_equal, "broadcast_greater": onp.greater,
    "broadcast_greater_equal": onp.greater_equal, "broadcast_lesser": onp.less,
    "broadcast_lesser_equal": onp.less_equal, "broadcast_logical_and": onp.logical_and,
    "broadcast_logical_or": onp.logical_or, "broadcast_logical_xor": onp.logical_xor,
}


@pytest.mark.parametrize("name", sorted(BROADCAST))
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_broadcast_comparisons_give_input_dtype(name, dtype):
    a, b = _arr((2, 1, 3), dtype, 0, 3), _arr((4, 1), dtype, 0, 3)
    got = getattr(nd, name)(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype))
    _check(got, BROADCAST[name](a, b).astype(dtype))


def test_non_broadcast_aliases_are_the_same_ops():
    for alias in ("_equal", "_not_equal", "_greater", "_greater_equal", "_lesser", "_lesser_equal",
                  "_logical_and", "_logical_or", "_logical_xor"):
        assert get_op(alias) is get_op("broadcast" + alias)


def test_broadcast_comparison_bad_shapes():
    with pytest.raises(ValueError, match="broadcast_greater"):
        nd.broadcast_greater(nd.zeros((2, 3)), nd.zeros((4,)))


@pytest.mark.parametrize("other", [None, "text", object()])
def test_equality_with_an_unsupported_type_raises_as_mxnet(other):
    # MXNet 1.9 and 2.0: ``nd.array(...) == None`` raises TypeError "type <class 'NoneType'> not
    # supported" (Python's fallback would answer False by identity); mx.np raises too (an MXNetError)
    x = nd.array([1.0, 2.0])
    for compare in (lambda: x == other, lambda: x != other, lambda: other == x):
        with pytest.raises(TypeError, match=re.escape(f"type {type(other)!r} not supported")):
            compare()
    with pytest.raises(TypeError):
        np.array([1.0, 2.0]) == other  # noqa: B015


# ----------------------------------------------------------------------------- arithmetic helpers

ARITH = [
    ("add", onp.add), ("subtract", onp.subtract), ("multiply", onp.multiply), ("divide", onp.true_divide),
    ("power", onp.power), ("maximum", onp.maximum), ("minimum", onp.minimum), ("hypot", onp.hypot),
    ("modulo", onp.mod), ("equal", onp.equal), ("not_equal", onp.not_equal), ("greater", onp.greater),
    ("greater_equal", onp.greater_equal), ("lesser", onp.less), ("lesser_equal", onp.less_equal),
    ("logical_and", onp.logical_and), ("logical_or", onp.logical_or), ("logical_xor", onp.logical_xor),
]


@pytest.mark.parametrize("name,ref", ARITH)
def test_arithmetic_helpers_dispatch_like_mxnet(name, ref):
    a, b = _arr((2, 3), "float32", 1, 4), _arr((3,), "float32", 1, 4)
    fn = getattr(nd, name)
    _check(fn(nd.array(a), nd.array(b)), ref(a, b).astype("float32"), rtol=1e-5)
    _check(fn(nd.array(a), 2.0), ref(a, onp.float32(2.0)).astype("float32"), rtol=1e-5)
    _check(fn(3.0, nd.array(a)), ref(onp.float32(3.0), a).astype("float32"), rtol=1e-5)
    assert fn(5, 3) == ref(5, 3) or fn(5, 3) == int(ref(5, 3))


def test_arithmetic_with_integer_arrays_keeps_int():
    x = nd.array([1, 2, 7], dtype="int32")
    _check(nd.add(x, 1.5), [2, 3, 8], "int32")
    _check(nd.divide(x, 2), [0, 1, 3], "int32")
    _check(nd.subtract(10, x), [9, 8, 3], "int32")
    _check(nd.greater(x, 1), [0, 1, 1], "int32")


def test_float_scalars_do_not_recompile():
    x = nd.array([1.0, 2.0])
    op = get_op("multiply")
    nd.multiply(x, 0.25)
    before = len(op._bound)
    for s in (0.5, 1.5, 3.0):
        nd.multiply(x, s)
    assert len(op._bound) == before
    _check(nd.multiply(x, 3.0), [3, 6], "float32")


def test_arithmetic_out_and_bad_operand():
    x, out = nd.array([1.0, 2.0]), nd.zeros((2,))
    assert nd.add(x, x, out=out) is out
    _check(out, [2, 4], "float32")
    with pytest.raises(TypeError, match="add"):
        nd.add(x, "a")


# ----------------------------------------------------------------------------- reductions

REDUCE = [
    ("sum", onp.sum), ("mean", onp.mean), ("prod", onp.prod), ("max", onp.max), ("min", onp.min),
    ("nansum", onp.nansum), ("nanprod", onp.nanprod),
]
AXES = [dict(), dict(axis=(0, -1), keepdims=True), dict(axis=1, exclude=True),
        dict(axis=(0, 1), exclude=True, keepdims=True)]


def _np_axes(kwargs, ndim):
    axis = kwargs.get("axis")
    if axis is None:
        return None
    axes = tuple(a % ndim for a in ((axis,) if isinstance(axis, int) else axis))
    return tuple(a for a in range(ndim) if a not in axes) if kwargs.get("exclude") else axes


@pytest.mark.parametrize("name,ref", REDUCE)
@pytest.mark.parametrize("kwargs", AXES, ids=str)
def test_reductions(name, ref, kwargs):
    x = _arr((2, 3, 4), "float32", 0.5, 1.5)
    want = ref(x.astype(onp.float64), axis=_np_axes(kwargs, 3), keepdims=kwargs.get("keepdims", False))
    want = onp.asarray(want).reshape(-1) if onp.ndim(want) == 0 else want  # (1,) as in MXNet 1.x
    _check(getattr(nd, name)(nd.array(x), **kwargs), onp.asarray(want, onp.float32), rtol=1e-5)


def test_integer_reductions_keep_int():
    x = onp.array([[1, 2, 4], [3, 5, 8]], dtype="int32")
    _check(nd.sum(nd.array(x, dtype="int32"), axis=1), [7, 16], "int32")
    _check(nd.mean(nd.array(x, dtype="int32"), axis=1), [2, 5], "int32")  # divides in int32
    _check(nd.sum_axis(nd.array(x, dtype="int32")), [23], "int32")
    _check(nd.max_axis(nd.array(x, dtype="int32"), axis=0), [3, 5, 8], "int32")


def test_nan_reductions():
    x = nd.array([[1.0, onp.nan], [2.0, 3.0]])
    _check(nd.nansum(x, axis=1), [1, 5])
    _check(nd.nanprod(x), [6])


def test_norm():
    x = _arr((2, 3, 4))
    _check(nd.norm(nd.array(x)), [onp.sqrt((x.astype(onp.float64) ** 2).sum())], "float32", rtol=1e-5)
    _check(nd.norm(nd.array(x), ord=1, axis=1), onp.abs(x).sum(axis=1), rtol=1e-5)
    _check(nd.norm(nd.array(x), axis=(1, 2), keepdims=True),
           onp.sqrt((x ** 2).sum(axis=(1, 2), keepdims=True)), rtol=1e-5)
    _check(nd.norm(nd.array(x), axis=0, out_dtype="float64"), onp.sqrt((x.astype(onp.float64) ** 2).sum(0)),
           "float64", rtol=1e-5)
    with pytest.raises(ValueError, match="ord"):
        nd.norm(nd.array(x), ord=3)


@pytest.mark.parametrize("name,ref", [("argmax", onp.argmax), ("argmin", onp.argmin)])
def test_argmax_argmin_give_float_indices(name, ref):
    x = _arr((3, 4))
    fn = getattr(nd, name)
    _check(fn(nd.array(x), axis=1), ref(x, axis=1).astype("float32"))
    _check(fn(nd.array(x), axis=0, keepdims=True), ref(x, axis=0)[None].astype("float32"))
    _check(fn(nd.array(x)), [ref(x)], "float32")  # all axes: shape (1,)
    _check(fn(nd.array(x, dtype="float64")), [ref(x)], "float64")
    xi = x.astype("int32")
    _check(fn(nd.array(xi, dtype="int32"), axis=1), ref(xi, axis=1), "int32")
    with pytest.raises(ValueError, match=name):
        fn(nd.array(x), axis=2)


def test_argmax_channel():
    x = _arr((2, 3, 4))
    _check(nd.argmax_channel(nd.array(x)), onp.argmax(x, axis=1).astype("float32"))
    with pytest.raises(ValueError, match="argmax_channel"):
        nd.argmax_channel(nd.array([1.0, 2.0]))


def test_sort_and_argsort():
    x = _arr((3, 4))
    _check(nd.sort(nd.array(x)), onp.sort(x, axis=-1))
    _check(nd.sort(nd.array(x), axis=0, is_ascend=False), -onp.sort(-x, axis=0))
    _check(nd.sort(nd.array(x), axis=None), onp.sort(x, axis=None))
    _check(nd.argsort(nd.array(x)), onp.argsort(x, axis=-1).astype("float32"))
    _check(nd.argsort(nd.array(x), axis=0, is_ascend=False, dtype="int32"), onp.argsort(-x, axis=0), "int32")


def test_reduction_bad_input():
    x = nd.zeros((2, 3))
    with pytest.raises(ValueError, match="sum: axis 2 is out of range"):
        nd.sum(x, axis=2)
    with pytest.raises(ValueError, match="duplicate axes"):
        nd.mean(x, axis=(1, -1))
    with pytest.raises(ValueError, match="empty"):
        nd.max(nd.zeros((0, 2)))


# ----------------------------------------------------------------------------- unary legacy math

def test_legacy_unary():
    x = _arr((2, 3), "float32", 0.5, 3)
    _check(nd.rsqrt(nd.array(x)), 1 / onp.sqrt(x), rtol=1e-5)
    _check(nd.rcbrt(nd.array(x)), 1 / onp.cbrt(x), rtol=1e-5)
    _check(nd.rsqrt(nd.array([4], dtype="int32")), [0.5], "float32")
    _check(nd.round(nd.array([0.5, 1.5, -0.5, -2.5, 2.4])), [1, 2, -1, -3, 2])  # halves away from zero
    _check(nd.round(nd.array([3], dtype="int32")), [3], "int32")
    _check(nd.logical_not(nd.array([0.0, 2.0])), [1, 0], "float32")
    _check(nd.hard_sigmoid(nd.array(x - 2)), onp.clip(0.2 * (x - 2) + 0.5, 0, 1), rtol=1e-6)
    _check(nd.hard_sigmoid(nd.array(x), alpha=1.0, beta=-1.0), onp.clip(x - 1, 0, 1), rtol=1e-6)
    _check(nd.add_n(nd.array(x), nd.array(x), nd.array(x)), 3 * x, rtol=1e-6)
    _check(nd.ElementWiseSum(nd.array(x)), x)
    with pytest.raises(ValueError, match="add_n: all inputs must have the same shape"):
        nd.add_n(nd.zeros((2,)), nd.zeros((3,)))


def test_shared_math_accepts_legacy_keywords():
    x = _arr((2, 3), "float32", 0.5, 2)
    _check(nd.sqrt(data=nd.array(x)), onp.sqrt(x), rtol=1e-6)
    _check(nd.broadcast_add(lhs=nd.array(x), rhs=nd.array(x[:1])), x + x[:1])
    _check(nd.elemwise_mul(nd.array(x), nd.array(x)), x * x, rtol=1e-6)
    _check(nd.abs(nd.array(-x)), x)
    _check(nd.clip(nd.array(x), 1.0, 1.5), onp.clip(x, 1.0, 1.5))
    _check(nd.Cast(nd.array(x), dtype="int32"), x.astype("int32"))
    assert nd.exp(nd.array(x), name="e", attr={"a": "b"}).shape == (2, 3)  # 1.x name=/attr= ignored


# ----------------------------------------------------------------------------- creation

def test_creation():
    _check(nd.zeros((2, 3)), onp.zeros((2, 3), "float32"))
    _check(nd.zeros(4, dtype="int32"), onp.zeros(4, "int32"))
    _check(nd.ones((2,), dtype="float16"), onp.ones(2, "float16"))
    _check(nd.empty((1, 2)), onp.zeros((1, 2), "float32"))
    _check(nd.full((2, 2), 7), onp.full((2, 2), 7, "float32"))
    _check(nd.arange(5), onp.arange(5, dtype="float32"))
    _check(nd.arange(1, 3, 0.5, repeat=2), onp.repeat(onp.arange(1, 3, 0.5), 2).astype("float32"))
    _check(nd.arange(0, 6, 2, dtype="int32"), onp.arange(0, 6, 2), "int32")
    _check(nd.eye(3, 4, 1), onp.eye(3, 4, 1, dtype="float32"))
    _check(nd.array([[1, 2]]), onp.array([[1, 2]], "float32"))
    _check(nd.array(onp.array([1, 2], "int64")), onp.array([1, 2], "float32"))  # NumPy sources: float32
    _check(nd.array(onp.array([1, 2], "int64"), dtype="int64"), onp.array([1, 2], "int64"))
    _check(nd.array(nd.array([1, 2], dtype="int32")), onp.array([1, 2], "int32"))  # NDArray sources keep theirs
    _check(nd.from_numpy(onp.ones(2, "float64")), onp.ones(2))
    _check(nd.zeros_like(nd.array(onp.ones((2, 2)), dtype="int32")), onp.zeros((2, 2), "int32"))
    _check(nd.ones_like(data=nd.zeros((3,))), onp.ones(3, "float32"))
    out = nd.ones((2,))
    assert nd.zeros((2,), out=out) is out and out.asnumpy().sum() == 0
    with pytest.raises(ValueError, match="negative dimensions"):
        nd.zeros((2, -1))
    with pytest.raises(ValueError, match="step cannot be 0"):
        nd.arange(0, 3, 0)


def test_creation_ops_decode_json_attrs():
    params = get_op("_zeros").decode_params({"shape": "(2, 3)", "ctx": "cpu(0)", "dtype": "float32"})
    assert params == {"shape": (2, 3), "ctx": "cpu(0)", "dtype": "float32"}
    arange = get_op("_arange").decode_params({"start": "0", "stop": "4", "step": "2.0", "repeat": "1",
                                              "infer_range": "False", "dtype": "float32"})
    assert arange["stop"] == 4.0 and arange["infer_range"] is False


# ----------------------------------------------------------------------------- JSON names

def test_legacy_json_names_resolve_to_registered_ops():
    for json_name, op_name in LEGACY_JSON_NAMES.items():
        assert get_op(op_name).name == op_name
        assert legacy_op_name(json_name) == op_name
    assert legacy_op_name("FullyConnected") == "FullyConnected"
    op = get_op(legacy_op_name("sum"))
    assert op.decode_params({"axis": "(1,)", "keepdims": "True", "exclude": "False"}) == \
        {"axis": (1,), "keepdims": True, "exclude": False}
    with pytest.raises(MXNetError, match="unknown parameter"):
        op.decode_params({"initial": "0"})


def test_amp_casts():
    x16, x32, i = nd.array([1.5], dtype="float16"), nd.array([2.5]), nd.array([3], dtype="int32")
    _check(nd.amp_cast(x32, dtype="float16"), [2.5], "float16")
    _check(nd.amp_cast(i, dtype="float16"), [3], "int32")  # only floats are cast
    wide = nd.amp_multicast(x16, x32, i, num_outputs=3)
    assert [onp.dtype(a.dtype).name for a in wide] == ["float32", "float32", "int32"]
    narrow = nd.amp_multicast(x16, x32, num_outputs=2, cast_narrow=True)
    assert [onp.dtype(a.dtype).name for a in narrow] == ["float16", "float16"]
    with pytest.raises(ValueError, match="amp_multicast: num_outputs=3"):
        nd.amp_multicast(x16, x32, num_outputs=3)
