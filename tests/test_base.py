"""MXNetError classes, dtype names and MXNet attribute strings."""
import numpy as onp
import pytest

from mxjax.base import (MXNetError, MXNetIndexError, MXNetTypeError, MXNetValueError, decode_attr,
                        dtype_name, encode_attr, normalize_dtype)


@pytest.mark.parametrize("text, value", [
    ("(3, 3)", (3, 3)), ("(3,)", (3,)), ("[1, 2]", (1, 2)), ("()", ()), ("True", True), ("False", False),
    ("None", None), ("0.5", 0.5), ("1e-05", 1e-5), ("-1", -1), ("relu", "relu"), ("float32", "float32"),
    ("(-1, 0)", (-1, 0)), ("inf", float("inf")), ("((1, 2), (3, 4))", ((1, 2), (3, 4))),
])
def test_decode_attr(text, value):
    assert decode_attr(text) == value
    assert type(decode_attr(text)) is type(value)


@pytest.mark.parametrize("value, text", [
    ((3, 3), "(3, 3)"), ((3,), "(3,)"), ([1, 2], "(1, 2)"), (True, "True"), (None, "None"), (0.5, "0.5"),
    (7, "7"), ("relu", "relu"), (onp.dtype("float16"), "float16"), (onp.float32, "float32"),
])
def test_encode_attr(value, text):
    assert encode_attr(value) == text


@pytest.mark.parametrize("value", [(3, 3), (1,), True, False, None, 0.25, -4, "max", ()])
def test_attr_round_trip(value):
    assert decode_attr(encode_attr(value)) == value


def test_error_classes_match_builtins():
    assert issubclass(MXNetError, RuntimeError)
    assert issubclass(MXNetValueError, ValueError) and issubclass(MXNetValueError, MXNetError)
    assert issubclass(MXNetTypeError, TypeError) and issubclass(MXNetIndexError, IndexError)
    import mxjax
    assert mxjax.base.MXNetError is MXNetError is mxjax.MXNetError


@pytest.mark.parametrize("spelling, name", [
    ("float32", "float32"), (onp.float64, "float64"), ("float", "float32"), ("bool", "bool"),
    ("bfloat16", "bfloat16"), ("int", "int32"), (onp.dtype("uint8"), "uint8"),
])
def test_dtype_names(spelling, name):
    assert dtype_name(spelling) == name
    assert normalize_dtype(None) is None


def test_bad_dtype_is_clear():
    with pytest.raises(TypeError, match="unsupported dtype"):
        normalize_dtype("not-a-dtype")
