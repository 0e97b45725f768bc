"""MXNetError classes, dtype names, MXNet attribute strings, and MXNet's base helpers (errors, ctypes, docs)."""
import array
import ctypes
import os
import types

import numpy as onp
import pytest

from mxjax import base

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


# ----------------------------------------------------------------------------- MXNet's base helpers


def test_type_tuples():
    assert isinstance(3, base.integer_types) and isinstance(onp.int64(3), base.integer_types)
    assert isinstance(2.5, base.numeric_types) and isinstance(onp.float16(1), base.numeric_types)
    assert base.string_types == (str,)
    assert base.mx_real_t is onp.float32


def test_not_implemented_for_symbol_message():
    err = base.NotImplementedForSymbol(len, "x", 1, "a")
    # MXNet 2.0.0b1's message
    assert str(err) == ('Function len (namely operator "x") with arguments (<class \'int\'>, <class \'str\'>) '
                        "is not implemented for Symbol and only available in NDArray.")
    assert isinstance(err, MXNetError) and err.function == "len"
    assert str(base.NotSupportedForSparseNDArray(len, None)) == (
        "Function len is not supported for SparseNDArray and only available in NDArray.")


def test_c2pyerror_reorders_the_stack_trace():
    # MXNet 2.0.0b1 output for the same text
    assert base.c2pyerror("ValueError: bad\nStack trace:\n  File a\n  File b\nmore") == (
        "Traceback (most recent call last):\n  File b\n  File a\nValueError: bad\nmore", "ValueError")
    assert base.c2pyerror("no type here") == ("no type here", None)


def test_register_error_and_check_call():
    @base.register_error
    class MyTestError(RuntimeError):
        pass

    assert base.error_types["MyTestError"] is MyTestError
    base.check_call(0)
    base.set_last_error("MyTestError: custom failure")
    with pytest.raises(MyTestError, match="custom failure"):
        base.check_call(-1)
    base.set_last_error("ValueError: bad value")
    with pytest.raises(ValueError, match="bad value"):
        base.check_call(1)
    base.set_last_error("something broke")
    with pytest.raises(MXNetError, match="something broke"):
        base.check_call(1)
    base.register_error("AliasName", MyTestError)
    assert base.error_types["AliasName"] is MyTestError


def test_error_module():
    from mxjax import error

    assert error.register is base.register_error
    err = error.InternalError("boom")
    assert isinstance(err, MXNetError) and "MXNet hint:" in str(err) and str(err).startswith("boom")
    assert base.error_types["InternalError"] is error.InternalError
    base.set_last_error("mxnet.error.InternalError: deep")
    with pytest.raises(error.InternalError, match="deep"):
        base.check_call(1)


def test_data_dir_follows_mxnet_home(monkeypatch, tmp_path):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert base.data_dir() == base.data_dir_default()
    if os.name != "nt":
        assert base.data_dir_default() == os.path.join(os.path.expanduser("~"), ".mxnet")
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert base.data_dir() == str(tmp_path)


def test_build_param_doc():
    # MXNet 2.0.0b1's output: duplicates and num_args dropped, empty descriptions get no line
    assert base.build_param_doc(["a", "b", "num_args", "a"], ["int", "float", "int", "int"],
                                ["desc a", "", "n", "dup"]) == (
        "Parameters\n----------\na : int\n    desc a\nb : float\n")


def test_add_fileline_to_docstring():
    def probe():
        """Probe."""

    module = types.ModuleType("fileline_probe")
    module.probe = probe
    base.add_fileline_to_docstring(module)
    assert probe.__doc__ == f"Probe.\n\nFrom:{__file__}:{probe.__code__.co_firstlineno}"
    base.add_fileline_to_docstring(module)  # idempotent
    assert probe.__doc__.count("From:") == 1


def test_ctypes_helpers():
    assert base.c_str("Hello, World").value == b"Hello, World"
    assert base.py_str(b"caf\xc3\xa9") == "café"
    strings = base.c_str_array(["a", "bc"])
    assert [strings[0], strings[1]] == [b"a", b"bc"]
    floats = base.c_array(base.mx_float, [1, 2, 3])
    assert len(floats) == 3 and floats[1] == 2.0
    buf = array.array("i", [1, 2, 3])
    shared = base.c_array_buf(ctypes.c_int, buf)
    shared[0] = 7
    assert buf[0] == 7  # shares memory


def test_c_handle_array_and_buffers():
    handles = [types.SimpleNamespace(handle=ctypes.c_void_p(16)), types.SimpleNamespace(handle=ctypes.c_void_p(32))]
    arr = base.c_handle_array(handles)
    assert [arr[0], arr[1]] == [16, 32]
    raw = ctypes.create_string_buffer(b"abcdef")
    copied = base.ctypes2buffer(ctypes.cast(raw, ctypes.POINTER(ctypes.c_char)), 4)
    assert copied == bytearray(b"abcd")
    with pytest.raises(TypeError, match="expected char pointer"):
        base.ctypes2buffer(raw, 4)
    values = base.c_array(base.mx_float, [1, 2, 3, 4, 5, 6])
    view = base.ctypes2numpy_shared(ctypes.cast(values, base.mx_float_p), (2, 3))
    onp.testing.assert_array_equal(view, [[1, 2, 3], [4, 5, 6]])
    values[0] = 9.0
    assert view[0, 0] == 9.0  # shares memory
    with pytest.raises(RuntimeError, match="expected float pointer"):
        base.ctypes2numpy_shared(ctypes.cast(values, ctypes.POINTER(ctypes.c_double)), (2, 3))


def test_callback_list_structure():
    fields = [name for name, _ in base.MXCallbackList._fields_]
    assert fields == ["num_callbacks", "callbacks", "contexts"]
    assert base.MXCallbackList(num_callbacks=2).num_callbacks == 2
