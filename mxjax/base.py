"""Errors, dtype helpers and MXNet attribute strings: the floor every layer stands on.

MXNet stores every operator parameter as a string (``"(3, 3)"``, ``"True"``,
``"None"``, ``"float32"``); the same encoding appears in symbol JSON.  The two
helpers here are the only place that knows it.
"""
from __future__ import annotations

import ast
import inspect
import os
import platform
import re
import sys
import threading
from typing import Any, Callable, Sequence

import numpy as onp

from ._util_ctypes import (MXCallbackList, c_array, c_array_buf, c_handle_array, c_str, c_str_array,
                           ctypes2buffer, ctypes2numpy_shared, mx_float, mx_float_p, mx_int, mx_int64,
                           mx_real_t, mx_uint, py_str)

__all__ = [
    "MXNetError", "MXNetValueError", "MXNetTypeError", "MXNetIndexError",
    "NotImplementedForSymbol", "NotSupportedForSparseNDArray", "RemovedAPIError",
    "encode_attr", "decode_attr", "normalize_dtype", "dtype_name",
    "integer_types", "numeric_types", "string_types", "error_types", "register_error", "c2pyerror",
    "get_last_ffi_error", "set_last_error", "check_call", "data_dir", "data_dir_default", "build_param_doc",
    "add_fileline_to_docstring", "py_str", "c_str", "c_str_array", "c_array", "c_array_buf",
    "c_handle_array", "ctypes2buffer", "ctypes2numpy_shared", "mx_float", "mx_float_p", "mx_real_t",
    "mx_int", "mx_uint", "mx_int64", "MXCallbackList",
]

integer_types = (int, onp.int32, onp.int64)
numeric_types = (float, int, onp.generic)
string_types = (str,)


class MXNetError(RuntimeError):
    """The error MXNet raises; subclasses below also match the builtin NumPy would raise."""


class MXNetValueError(MXNetError, ValueError):
    """A bad value or shape: catchable as ``ValueError`` like NumPy's."""


class MXNetTypeError(MXNetError, TypeError):
    """A bad type or dtype: catchable as ``TypeError`` like NumPy's."""


class MXNetIndexError(MXNetError, IndexError):
    """A bad index: catchable as ``IndexError`` like NumPy's."""


class RemovedAPIError(AttributeError):
    """A 1.x name MXNet 2.0 removed; the message says what replaces it.

    An ``AttributeError`` so ``hasattr(mx, 'mod')`` stays False, as in MXNet 2.0.
    """


class _NotAvailableFor(MXNetError):
    """``Function f (namely operator "alias") with arguments (...) is not ... for <kind>``."""

    _tail = ""

    def __init__(self, function: Callable, alias: str | None, *args: Any) -> None:
        super().__init__()
        self.function = function.__name__
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return msg + self._tail


class NotImplementedForSymbol(_NotAvailableFor):
    """An NDArray-only function called on a Symbol."""

    _tail = " is not implemented for Symbol and only available in NDArray."


class NotSupportedForSparseNDArray(_NotAvailableFor):
    """A dense-only function called on a sparse array."""

    _tail = " is not supported for SparseNDArray and only available in NDArray."


# ----------------------------------------------------------------------------- error registry

error_types: dict[str, type] = {}


def register_error(func_name: Any = None, cls: type | None = None) -> Any:
    """Register an error class under a name (its own by default) so error messages map back to it.

    Used as ``@register_error`` or ``register_error("ValueError", ValueError)``.
    """
    if callable(func_name):
        cls, func_name = func_name, func_name.__name__

    def register(error_cls: type) -> type:
        error_types[func_name if isinstance(func_name, str) else error_cls.__name__] = error_cls
        return error_cls

    return register if cls is None else register(cls)


register_error(NotImplementedForSymbol)
for _builtin in (ValueError, TypeError, AttributeError, IndexError, NotImplementedError,
                 FloatingPointError, RuntimeError):
    register_error(_builtin.__name__, _builtin)
register_error("IOError", IOError)


def _error_name(first_line: str) -> str | None:
    name, sep, _ = first_line.partition(":")
    return name if sep and name and all(c.isalnum() or c in "_." for c in name) else None


def c2pyerror(err_msg: str) -> tuple[str, str | None]:
    """Turn a C++-style error text into ``(python_style_message, error_type_name)``.

    The ``Stack trace:`` block (indented lines) becomes a reversed ``Traceback`` header.
    """
    lines = err_msg.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    err_type = _error_name(lines[0]) if lines else None
    message: list[str] = []
    stack: list[str] = []
    in_trace = False
    for line in lines:
        if in_trace and line.startswith("  "):
            stack.append(line)
            continue
        in_trace = line.startswith("Stack trace")
        if not in_trace:
            message.append(line)
    out = ""
    if stack:
        out = "Traceback (most recent call last):\n" + "\n".join(reversed(stack)) + "\n"
    return out + "\n".join(message), err_type


_last_error = threading.local()


def set_last_error(message: str) -> None:
    """Record this thread's last error text (what ``MXGetLastError`` returned in MXNet)."""
    _last_error.message = message


def get_last_ffi_error() -> Exception:
    """The error object for this thread's last error text, typed through ``error_types``."""
    text = getattr(_last_error, "message", "") or "MXNetError: a C API call failed"
    message, err_type = c2pyerror(text)
    if err_type is not None and err_type.startswith("mxnet.error."):
        err_type = err_type[len("mxnet.error."):]
    return error_types.get(err_type, MXNetError)(message)


def check_call(ret: int) -> None:
    """Raise the last recorded error when a C-style call returned nonzero.

    mxjax has no C library; this serves code (extension libraries, ported helpers) that
    still follows MXNet's return-code convention.
    """
    if ret != 0:
        raise get_last_ffi_error()


# ----------------------------------------------------------------------------- paths and docs

def data_dir_default() -> str:
    """``%APPDATA%\\mxnet`` on Windows, ``~/.mxnet`` elsewhere."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """Where downloads (model zoo, datasets) go: ``$MXNET_HOME``, else ``data_dir_default()``."""
    return os.getenv("MXNET_HOME", data_dir_default())


def build_param_doc(arg_names: Sequence[str], arg_types: Sequence[str], arg_descs: Sequence[str],
                    remove_dup: bool = True) -> str:
    """A numpydoc ``Parameters`` section from parallel lists (``num_args`` is left out)."""
    seen: set[str] = set()
    entries = []
    for key, type_info, desc in zip(arg_names, arg_types, arg_descs):
        if (key in seen and remove_dup) or key == "num_args":
            continue
        seen.add(key)
        entries.append(f"{key} : {type_info}" + (f"\n    {desc}" if desc else ""))
    return "Parameters\n----------\n" + "\n".join(entries) + "\n"


def add_fileline_to_docstring(module: Any, incursive: bool = True) -> None:
    """Append ``From:<file>:<line>`` to the docstring of each function (and class method) in ``module``."""

    def add_fileline(obj: Any) -> None:
        if obj.__doc__ is None or "From:" in obj.__doc__:
            return
        try:
            fname = inspect.getsourcefile(obj)
            line = inspect.getsourcelines(obj)[-1]
        except (OSError, TypeError):
            return
        if fname is not None:
            obj.__doc__ += f"\n\nFrom:{fname}:{line}"

    if isinstance(module, str):
        module = sys.modules[module]
    for _, obj in inspect.getmembers(module):
        if inspect.isbuiltin(obj):
            continue
        if inspect.isfunction(obj):
            add_fileline(obj)
        if inspect.ismethod(obj):
            add_fileline(obj.__func__)
        if inspect.isclass(obj) and incursive:
            add_fileline_to_docstring(obj, False)


# ----------------------------------------------------------------------------- dtypes

_DTYPE_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "int": "int32",
    "long": "int64", "bool_": "bool", "bfloat16": "bfloat16",
}


def normalize_dtype(dtype: Any) -> onp.dtype | None:
    """Turn a dtype spelling (``'float32'``, ``np.float32``, ``jnp.int8``, a dtype) into a NumPy dtype."""
    if dtype is None:
        return None
    if isinstance(dtype, onp.dtype):
        return dtype
    if isinstance(dtype, str):
        dtype = _DTYPE_ALIASES.get(dtype, dtype)
        if dtype == "bfloat16":
            import ml_dtypes

            return onp.dtype(ml_dtypes.bfloat16)
    try:
        return onp.dtype(dtype)
    except TypeError:
        dt = getattr(dtype, "dtype", None)  # jnp scalar types carry a .dtype
        if isinstance(dt, onp.dtype):
            return dt
        raise MXNetTypeError(f"unsupported dtype {dtype!r}; expected a NumPy dtype name such as 'float32'")


def dtype_name(dtype: Any) -> str:
    """The name MXNet prints and stores for a dtype (``'float32'``, ``'bool'``, ``'bfloat16'``)."""
    return normalize_dtype(dtype).name


# ----------------------------------------------------------------------------- attribute strings

_BARE_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_LONG_SUFFIX = re.compile(r"(\d)[lL]\b")


def encode_attr(value: Any) -> str:
    """Encode a Python parameter value the way MXNet writes it into attrs and JSON.

    Tuples and lists become ``"(3, 3)"`` (a 1-tuple ``"(3,)"``), bools ``"True"``,
    ``None`` ``"None"``, dtypes their name, strings stay as they are.
    """
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (onp.dtype, type)) or hasattr(value, "dtype") and not hasattr(value, "shape"):
        return dtype_name(value)
    if isinstance(value, (list, tuple)):
        # strings nested in tuples are quoted so decode_attr reads them back (MXNet never nests them)
        items = ", ".join(repr(v) if isinstance(v, str) else encode_attr(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, (int, onp.integer)):
        return str(int(value))
    if isinstance(value, (float, onp.floating)):
        return repr(float(value))
    return str(value)


def decode_attr(text: str) -> Any:
    """Decode an MXNet attribute string into a Python value.

    ``"(3, 3)"``/``"[3, 3]"`` → tuple, ``"True"`` → True, ``"None"`` → None,
    ``"0.5"`` → 0.5, ``"1e-5"`` → 1e-05; anything else (``"relu"``, ``"float32"``)
    stays a string. Callers coerce further with the op's parameter types.
    """
    if not isinstance(text, str):
        return text
    s = text.strip()
    if s.lower() == "true":
        return True
    if s.lower() == "false":
        return False
    s = _LONG_SUFFIX.sub(r"\1", s)  # Python 2 longs in old files: "(3L, 3L)"
    if s in ("None", "none", ""):
        return None if s != "" else ""
    if _BARE_WORD.match(s) and not s.lstrip("-").replace(".", "").isdigit():
        try:
            return float(s)  # 'inf', '-inf', 'nan', '1e-5' match the bare-word pattern
        except ValueError:
            return s
    try:
        value = ast.literal_eval(s)
    except (ValueError, SyntaxError):
        return s
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple):
        value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return value
