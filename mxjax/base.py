"""Errors, dtype helpers and MXNet attribute strings: the floor every layer stands on.

MXNet stores every operator parameter as a string (``"(3, 3)"``, ``"True"``,
``"None"``, ``"float32"``); the same encoding appears in symbol JSON.  The two
helpers here are the only place that knows it.
"""
from __future__ import annotations

import ast
import re
from typing import Any

import numpy as onp

__all__ = [
    "MXNetError", "MXNetValueError", "MXNetTypeError", "MXNetIndexError",
    "encode_attr", "decode_attr", "normalize_dtype", "dtype_name",
]


class MXNetError(RuntimeError):
    """The error MXNet raises; subclasses below also match the builtin NumPy would raise."""


class MXNetValueError(MXNetError, ValueError):
    """A bad value or shape: catchable as ``ValueError`` like NumPy's."""


class MXNetTypeError(MXNetError, TypeError):
    """A bad type or dtype: catchable as ``TypeError`` like NumPy's."""


class MXNetIndexError(MXNetError, IndexError):
    """A bad index: catchable as ``IndexError`` like NumPy's."""


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
