"""Creation ops against NumPy: values, shapes, MXNet's dtype rules (float32 default), placement, bad input."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import _config
from mxjax.base import MXNetError
from mxjax._ndarray import invoke
from mxjax.operator import get_op

np = mx.np
F32, F64 = "float32", "float64"


def check(got, want, dtype=None, rtol=1e-6, atol=1e-6):
    """``got`` (mx) matches ``want`` (NumPy) in shape and values; its dtype is ``dtype`` (default: NumPy's)."""
    want = onp.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == onp.dtype(dtype or want.dtype), (got.dtype, dtype or want.dtype)
    kind = complex if want.dtype.kind == "c" else float
    onp.testing.assert_allclose(got.asnumpy().astype(kind), want.astype(kind), rtol=rtol, atol=atol)


def _data(shape, dtype="float32", seed=0):
    rng = onp.random.default_rng(seed)
    if onp.dtype(dtype).kind in "iu":
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return rng.uniform(-2, 2, size=shape).astype(dtype)


# (id, call(namespace, *inputs), NumPy inputs, the dtype MXNet gives or None for NumPy's own)
CASES = [
    ("zeros", lambda m: m.zeros((2, 3)), [], F32),
    ("zeros-int-shape", lambda m: m.zeros(4, dtype="int32"), [], None),
    ("zeros-scalar", lambda m: m.zeros(()), [], F32),
    ("ones", lambda m: m.ones((2, 1, 3)), [], F32),
    ("ones-bool", lambda m: m.ones((2,), dtype=bool), [], None),
    ("full-int-fill", lambda m: m.full((2, 3), 7), [], "int64"),  # (MXNet 2.0.0b1; 1.9.1 gave float32)
    ("full-float64", lambda m: m.full((2,), 2.5, "float64"), [], None),
    ("full-bool", lambda m: m.full((2, 2), True), [], None),
    ("full-complex", lambda m: m.full((2,), 1 + 2j), [], "complex64"),
    ("full-array-fill", lambda m, v: m.full((2, 3), v), [_data((3,), "int32")], None),
    ("zeros_like", lambda m, a: m.zeros_like(a), [_data((2, 3), "int32")], None),
    ("ones_like-dtype", lambda m, a: m.ones_like(a, dtype="float16"), [_data((3,))], None),
    ("ones_like-shape", lambda m, a: m.ones_like(a, shape=(2, 2)), [_data((3,), "int64")], None),
    ("full_like", lambda m, a: m.full_like(a, 3), [_data((2, 2))], None),
    ("full_like-float-into-int", lambda m, a: m.full_like(a, 1.5), [_data((3,), "int32")], None),
    ("full_like-array-fill", lambda m, a, v: m.full_like(a, v), [_data((2, 3)), _data((3,), seed=1)], None),
    ("arange-stop", lambda m: m.arange(5), [], F32),
    ("arange-float-step", lambda m: m.arange(1, 4, 0.5), [], F32),
    ("arange-negative-step", lambda m: m.arange(10, 0, -3, dtype="int32"), [], None),
    ("arange-int64", lambda m: m.arange(2, 7, dtype="int64"), [], None),
    ("linspace", lambda m: m.linspace(0, 1, 5), [], F32),
    ("linspace-no-endpoint", lambda m: m.linspace(2, 3, 4, endpoint=False), [], F32),
    ("linspace-int-dtype", lambda m: m.linspace(0, 10, 4, dtype="int32"), [], None),
    ("linspace-array-axis1", lambda m, a, b: m.linspace(a, b, 3, axis=1),
     [onp.array([0, 1], "int32"), onp.array([1, 3], "int32")], F32),
    ("linspace-float64-array", lambda m, a: m.linspace(a, 2.0, 4), [onp.array([0.0, 1.0])], None),
    ("logspace", lambda m: m.logspace(0, 2, 3), [], F32),
    ("logspace-base2", lambda m: m.logspace(0, 1, 4, base=2.0, endpoint=False), [], F32),
    ("geomspace", lambda m: m.geomspace(1, 1000, 4), [], F32),
    ("geomspace-negative", lambda m: m.geomspace(-1, -100, 3, dtype="float64"), [], None),
    ("eye", lambda m: m.eye(3), [], F32),
    ("eye-rect-k", lambda m: m.eye(2, 4, k=1, dtype="int32"), [], None),
    ("identity", lambda m: m.identity(3), [], F32),
    ("identity-int", lambda m: m.identity(2, dtype="int64"), [], None),
    ("tri", lambda m: m.tri(3, 4, k=-1), [], F32),
    ("tri-int", lambda m: m.tri(2, dtype="int32"), [], None),
    ("tril", lambda m, a: m.tril(a, k=1), [_data((2, 3, 3))], None),
    ("tril-1d", lambda m, a: m.tril(a), [_data((3,), "int32")], None),
    ("triu", lambda m, a: m.triu(a, -1), [_data((4, 3), "int64")], None),
    ("diag-1d", lambda m, a: m.diag(a, k=1), [_data((3,))], None),
    ("diag-2d", lambda m, a: m.diag(a, -1), [_data((3, 4), "int32")], None),
    ("diagflat", lambda m, a: m.diagflat(a, k=1), [_data((2, 2))], None),
    ("vander", lambda m, x: m.vander(x, 4), [_data((3,))], F32),  # NumPy promotes with int: float64
    ("vander-increasing", lambda m, x: m.vander(x, increasing=True), [_data((3,), "int32")], "int32"),
    ("indices", lambda m: m.indices((2, 3)), [], None),
    ("indices-int32", lambda m: m.indices((3,), dtype="int32"), [], None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_creation_matches_numpy(case):
    _, call, inputs, dtype = case
    want = call(onp, *inputs)
    got = call(np, *[np.array(x, dtype=x.dtype) for x in inputs])
    check(got, want, dtype, rtol=2e-6 if dtype == F32 else 1e-6)


@pytest.mark.parametrize("name,shape_or_like", [("empty", (2, 3)), ("empty_like", "like")])
def test_empty_is_zeros(name, shape_or_like):
    if name == "empty":
        got = np.empty((2, 3), dtype="int32")
        check(got, onp.zeros((2, 3), "int32"))
    else:
        got = np.empty_like(np.array(_data((2, 2), "int64")))
        check(got, onp.zeros((2, 2), "int64"))


def test_linspace_retstep():
    got, step = np.linspace(2.0, 3.0, 5, retstep=True)
    want, want_step = onp.linspace(2.0, 3.0, 5, retstep=True)
    check(got, want, F32)
    assert step.dtype == onp.float32 and abs(step.item() - want_step) < 1e-7


def test_meshgrid_indexing_and_sparse():
    x, y = _data((3,)), _data((2,), seed=1)
    for indexing in ("xy", "ij"):
        got = np.meshgrid(np.array(x), np.array(y), indexing=indexing)
        want = onp.meshgrid(x, y, indexing=indexing)
        assert isinstance(got, list) and len(got) == 2  # a list, as MXNet 2.0 gives it
        for g, w in zip(got, want):
            check(g, w)
    for g, w in zip(np.meshgrid(np.array(x), np.array(y), sparse=True), onp.meshgrid(x, y, sparse=True)):
        check(g, w)


def test_indices_sparse():
    got, want = np.indices((2, 3), sparse=True), onp.indices((2, 3), sparse=True)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        check(g, w)


def test_default_float64_after_set_np_dtype():
    previous = _config.is_np_default_dtype()
    _config.set_np_default_dtype(True)
    try:
        check(np.zeros((2,)), onp.zeros(2))
        check(np.arange(3), onp.arange(3.0))
        check(np.linspace(0, 1, 3), onp.linspace(0, 1, 3))
        check(np.eye(2), onp.eye(2))
        check(np.full((2,), 1), onp.full((2,), 1))  # int64 for an int fill either way, as NumPy
        check(np.full((2,), 1.5), onp.full((2,), 1.5))
    finally:
        _config.set_np_default_dtype(previous)
    assert np.zeros((2,)).dtype == onp.float32


def test_device_placement():
    x = np.zeros((2,), ctx=mx.cpu())
    assert x.device == mx.cpu()
    assert np.identity(2, device=mx.cpu(0)).device == mx.cpu()
    assert np.arange(3, device=mx.cpu()).shape == (3,)


def test_out_argument():
    out = np.ones((2, 2), dtype="int32")
    result = np.zeros((2, 2), out=out)
    assert result is out and out.dtype == onp.int32
    check(out, onp.zeros((2, 2), "int32"))


# The parameter-only spellings MXNet 2 writes into symbol JSON: attributes arrive as strings.
JSON_CASES = [
    ("_npi_full", [], {"shape": "(2, 3)", "value": "2.5"}, onp.full((2, 3), 2.5, "float32")),
    ("_npi_full", [], {"shape": "(2,)", "value": "1", "dtype": "int32"}, onp.ones(2, "int32")),
    ("_npi_full_like", [onp.zeros((2, 2), "int32")], {"fill_value": "4"}, onp.full((2, 2), 4, "int32")),
    ("_npi_linspace", [], {"start": "0", "stop": "1", "num": "5"}, onp.linspace(0, 1, 5).astype("float32")),
    ("_npi_logspace", [], {"start": "0", "stop": "3", "num": "4", "base": "2"},
     onp.logspace(0, 3, 4, base=2).astype("float32")),
    ("_npi_identity", [], {"shape": "(3, 3)"}, onp.eye(3, dtype="float32")),
    ("_npi_zeros", [], {"shape": "(2,)", "dtype": "int64"}, onp.zeros(2, "int64")),
    ("_npi_arange", [], {"start": "1", "stop": "4", "step": "1", "repeat": "2"},
     onp.repeat(onp.arange(1, 4), 2).astype("float32")),
    ("_npi_eye", [], {"N": "2", "M": "3", "k": "1"}, onp.eye(2, 3, 1, dtype="float32")),
]


@pytest.mark.parametrize("name,inputs,attrs,want", JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_symbol_json_spellings(name, inputs, attrs, want):
    op = get_op(name)
    got = invoke(op, [np.array(x) for x in inputs], op.decode_params(attrs), np.ndarray)
    check(got, want)


BAD = [
    (lambda: np.zeros((-1, 2)), ValueError, "negative dimensions"),
    (lambda: np.ones((2,), order="X"), ValueError, "order must be one of"),
    (lambda: np.full((2, -3), 1.0), ValueError, "negative dimensions"),
    (lambda: np.arange(0, 5, 0), ValueError, "step must not be zero"),
    (lambda: np.linspace(0, 1, -1), ValueError, "must be non-negative"),
    (lambda: np.logspace(0, 1, -2), ValueError, "must be non-negative"),
    (lambda: np.geomspace(0, 1, 3), ValueError, "cannot include zero"),
    (lambda: np.eye(-1), ValueError, "negative dimensions"),
    (lambda: np.diag(np.zeros((2, 2, 2))), ValueError, "1-d or 2-d"),
    (lambda: np.tril(np.array(1.0)), ValueError, "at least 1-d"),
    (lambda: np.vander(np.zeros((2, 2))), ValueError, "one-dimensional"),
    (lambda: np.meshgrid(np.zeros(2), indexing="xx"), ValueError, "'xy' or 'ij'"),
    (lambda: np.indices((2, -1)), ValueError, "negative dimensions"),
    (lambda: np.zeros((2,), bogus=1), TypeError, "unexpected keyword"),
    (lambda: invoke(get_op("_npi_identity"), [], {"shape": (2, 3)}, np.ndarray), ValueError, "square"),
    (lambda: invoke(get_op("arange"), [], {"start": 0.0, "stop": 3.0, "infer_range": True}, np.ndarray),
     ValueError, "infer_range"),
]


@pytest.mark.parametrize("call,error,match", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_errors_are_mxnet_errors():
    with pytest.raises(MXNetError, match="zeros"):
        np.zeros((-2,))
