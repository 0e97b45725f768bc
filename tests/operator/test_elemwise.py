"""Element-wise ops against NumPy: values, dtypes (MXNet's float32 rule), broadcasting, bad input."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax.operator.elemwise import _BINARY, _FLOAT_BINARY, _FLOAT_UNARY, _SAME_UNARY

RNG = onp.random.default_rng(0)
# domains keep every function finite
POSITIVE = {"log", "log2", "log10", "log1p", "sqrt", "reciprocal", "arccosh"}
UNIT = {"arcsin", "arccos", "arctanh"}
INT_ONLY = {"invert", "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
NUMPY_NAME = {"absolute": "absolute", "fix": "fix", "mod": "mod"}


def _input(name, shape, dtype):
    if dtype.kind in "iu" or name in INT_ONLY:
        return RNG.integers(1, 6, size=shape).astype(dtype if dtype.kind in "iu" else onp.int32)
    if name in UNIT:
        return RNG.uniform(-0.9, 0.9, size=shape).astype(dtype)
    if name == "arccosh":
        return RNG.uniform(1.1, 3, size=shape).astype(dtype)
    if name in POSITIVE:
        return RNG.uniform(0.5, 3, size=shape).astype(dtype)
    return RNG.uniform(-3, 3, size=shape).astype(dtype)


def _mx_dtype(numpy_result, *inputs):
    """MXNet's rule: float64 only from float64 inputs; otherwise the default float32."""
    if numpy_result.dtype == onp.float64 and not any(x.dtype == onp.float64 for x in inputs):
        return onp.dtype(onp.float32)
    return numpy_result.dtype


UNARY_OPS = sorted(_FLOAT_UNARY) + sorted(_SAME_UNARY)
BINARY_OPS = sorted(_BINARY) + sorted(_FLOAT_BINARY)


@pytest.mark.parametrize("name", UNARY_OPS)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_unary(name, dtype):
    if name in INT_ONLY and dtype != "int32" or dtype == "int32" and name in POSITIVE | UNIT | {"arccosh"}:
        pytest.skip("outside the function's domain")
    x = _input(name, (2, 3), onp.dtype(dtype))
    ref = getattr(onp, NUMPY_NAME.get(name, name))
    want = ref(x.astype(onp.float64) if name in _FLOAT_UNARY and x.dtype.kind in "iu" else x)
    if name == "reciprocal" and dtype == "int32":
        pytest.skip("integer reciprocal")
    got = getattr(mx.np, name)(mx.np.array(x))
    assert got.shape == want.shape
    assert got.dtype == _mx_dtype(onp.asarray(want), x)
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), onp.asarray(want, onp.float64),
                                rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", BINARY_OPS)
def test_binary_broadcasting(name):
    dtype = onp.dtype("int32") if name in INT_ONLY else onp.dtype("float32")
    a = _input("log", (2, 1, 3), dtype) if name != "ldexp" else _input("x", (2, 1, 3), dtype)
    b = _input("log", (4, 1), dtype if name != "ldexp" else onp.dtype("int32"))
    if name in ("left_shift", "right_shift"):
        b = b % 4
    ref = getattr(onp, name)
    want = ref(a, b)
    got = getattr(mx.np, name)(mx.np.array(a), mx.np.array(b))
    assert got.shape == want.shape == (2, 4, 3)
    assert got.dtype == _mx_dtype(onp.asarray(want), a, b)
    onp.testing.assert_allclose(got.asnumpy().astype(onp.float64), want.astype(onp.float64), rtol=2e-5)


@pytest.mark.parametrize("name", ["add", "multiply", "true_divide", "power", "maximum"])
def test_binary_dtype_promotion(name):
    a = onp.array([1, 2, 3], dtype=onp.int32)
    b = onp.array([1.5, 2.0, 0.5], dtype=onp.float16)
    got = getattr(mx.np, name)(mx.np.array(a), mx.np.array(b))
    want = getattr(onp, name)(a, b)
    assert got.dtype == onp.float16  # MXNet: integer with float gives the float type (NumPy: float64)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-2)
    assert getattr(mx.np, name)(mx.np.array(a), mx.np.array(a.astype(onp.int8))).dtype == \
        _mx_dtype(getattr(onp, name)(a, a.astype(onp.int8)), a)


@pytest.mark.parametrize("name", ["add", "subtract", "logical_and", "hypot", "arctan2"])
def test_binary_shape_mismatch(name):
    with pytest.raises(ValueError, match=rf"{name}: operands could not be broadcast together with shapes \(2, 3\) \(2,\)"):
        getattr(mx.np, name)(mx.np.ones((2, 3)), mx.np.ones((2,)))


def test_round_clip_nan_to_num_and_aliases():
    x = onp.array([-1.55, 0.5, 2.5, 7.25], dtype=onp.float32)
    onp.testing.assert_allclose(mx.np.round(mx.np.array(x), decimals=1).asnumpy(), onp.round(x, 1))
    onp.testing.assert_allclose(mx.np.around(mx.np.array(x)).asnumpy(), onp.around(x))
    onp.testing.assert_allclose(mx.np.clip(mx.np.array(x), 0, 2).asnumpy(), onp.clip(x, 0, 2))
    y = onp.array([onp.nan, onp.inf, -onp.inf, 1.0], dtype=onp.float32)
    onp.testing.assert_array_equal(mx.np.nan_to_num(mx.np.array(y), posinf=9.0).asnumpy(),
                                   onp.nan_to_num(y, posinf=9.0))
    onp.testing.assert_array_equal(mx.np.abs(mx.np.array(x)).asnumpy(), onp.abs(x))
    assert mx.np.divide is not None and mx.np.remainder(mx.np.array([5.0]), 3).item() == 2.0
    assert mx.np.bitwise_not(mx.np.array(onp.array([0], onp.int8))).item() == -1
    assert mx.np.conjugate(mx.np.array([1.0])).item() == 1.0
    onp.testing.assert_array_equal(mx.np.round_(mx.np.array(x)).asnumpy(), onp.round(x))


def test_default_dtype_switch():
    i = mx.np.array(onp.array([4, 9], dtype=onp.int32))
    assert mx.np.sqrt(i).dtype == onp.float32
    mx.npx.set_np(dtype=True)
    try:
        assert mx.np.sqrt(i).dtype == onp.float64
        assert mx.np.array([1, 2]).dtype == onp.float64
    finally:
        mx.npx.set_np(dtype=False)
    assert mx.np.sqrt(i).dtype == onp.float32


NUMPY_SCALAR_CASES = [  # op, numpy reference of (array, scalar)
    ("_npi_add_scalar", lambda a, s: a + s), ("_npi_subtract_scalar", lambda a, s: a - s),
    ("_npi_rsubtract_scalar", lambda a, s: s - a), ("_npi_multiply_scalar", lambda a, s: a * s),
    ("_npi_true_divide_scalar", lambda a, s: a / s), ("_npi_rtrue_divide_scalar", lambda a, s: s / a),
    ("_npi_floor_divide_scalar", lambda a, s: a // s), ("_npi_rfloor_divide_scalar", lambda a, s: s // a),
    ("_npi_mod_scalar", lambda a, s: a % s), ("_npi_rmod_scalar", lambda a, s: s % a),
    ("_npi_power_scalar", lambda a, s: a ** s), ("_npi_rpower_scalar", lambda a, s: s ** a),
    ("_npi_maximum_scalar", onp.maximum), ("_npi_minimum_scalar", onp.minimum),
    ("_npi_equal_scalar", lambda a, s: a == s), ("_npi_not_equal_scalar", lambda a, s: a != s),
    ("_npi_greater_scalar", lambda a, s: a > s), ("_npi_greater_equal_scalar", lambda a, s: a >= s),
    ("_npi_less_scalar", lambda a, s: a < s), ("_npi_less_equal_scalar", lambda a, s: a <= s),
]


@pytest.mark.parametrize("name, ref", NUMPY_SCALAR_CASES, ids=[c[0] for c in NUMPY_SCALAR_CASES])
@pytest.mark.parametrize("scalar", [2.0, 3])
def test_numpy_scalar_ops(name, ref, scalar):
    from oracle import run_op

    a = onp.array([1.5, 2.0, 4.0], dtype=onp.float32)
    got = run_op(name, [a], scalar=float(scalar), is_int=isinstance(scalar, int))
    want = ref(a, onp.float32(scalar))
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    ints = onp.array([1, 2, 4], dtype=onp.int32)
    if isinstance(scalar, float) and name in ("_npi_multiply_scalar", "_npi_add_scalar"):
        # MXNet 2.0: an integer array with a Python float gives float64 (tests/fixtures/dtypes)
        assert run_op(name, [ints], scalar=scalar, is_int=False).dtype == onp.float64


@pytest.mark.parametrize("x_dtype,e_dtype,want_dtype", [
    ("float32", "float32", "float32"), ("float16", "float16", "float16"), ("int32", "int32", "int32"),
    ("int8", "int8", "int8"), ("float32", "int32", "float32"), ("bool", "bool", "float32")])
def test_ldexp_as_mxnet(x_dtype, e_dtype, want_dtype):
    """MXNet 2.0's ldexp: x1 * 2**x2 in the operands' dtype, a float exponent may be fractional (mx.np.array
    of Python ints is float32, so this is the common call); NumPy takes integer exponents only."""
    x = onp.array([3, 5, -7, 1], dtype=x_dtype)
    e = onp.array([-1, 2, 3, 0], dtype=e_dtype) if e_dtype != "float32" else onp.array([-1, 2.5, 3, -0.5], e_dtype)
    got = mx.np.ldexp(mx.np.array(x), mx.np.array(e))
    want = (x.astype(onp.float64) * 2.0 ** e.astype(onp.float64)).astype(want_dtype)
    assert got.dtype == onp.dtype(want_dtype)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    assert mx.np.ldexp(2, mx.np.array([1.0, 2.5])).asnumpy().tolist() == pytest.approx([4.0, 2 ** 3.5])


def test_copysign_keeps_integers():
    got = mx.np.copysign(mx.np.array([1, -2, 3], dtype="int32"), mx.np.array([-1, 2, -3], dtype="int32"))
    assert got.dtype == onp.int32 and got.asnumpy().tolist() == [-1, 2, -3]  # MXNet 2.0's (NumPy: float64)


def test_fix_of_integers_gives_floats():
    """MXNet 2.0's fix (and NumPy 1.x's) gives floats for integer input: the float of the integer's size."""
    for dtype, want in (("int8", onp.float16), ("int32", onp.float32)):
        got = mx.np.fix(mx.np.array([3, -2], dtype=dtype))
        assert got.dtype == want and got.asnumpy().tolist() == [3.0, -2.0]
