"""The methods of a NumPy-semantics symbol (``_Symbol``), as MXNet 2.0's ``mxnet.symbol.numpy._Symbol``
has them: NumPy's methods, each the ``mx.sym.np`` function of the same name (``s.sum()`` is
``_np_sum``, a 0-d result; ``s.argmax(1)`` gives int64), NumPy indexing of a one-output symbol
(``s[0]``, ``s[:, 1:3]``, ``s[idx]`` for an integer ``_Symbol``), and ``AttributeError`` for the
legacy fluent methods MXNet 2.0 takes off NumPy symbols (``s.softmax()``: use ``mx.sym.npx``).
"""
from __future__ import annotations

from typing import Any, Callable

from ..base import MXNetIndexError, MXNetValueError
from .._indexing import split_key
from ..operator import get_op
from . import numpy as _np
from ._fluent import _VALUE_METHODS, fluent_methods, method_of
from .symbol import Symbol, _Symbol, building

# MXNet 2.0's NumPy methods of a symbol that are the mx.sym.np function with ``self`` first
_SAME = ("argmax", "argmin", "argsort", "clip", "cumsum", "diagonal", "dot", "max", "mean", "min", "prod",
         "repeat", "round", "sort", "squeeze", "std", "sum", "swapaxes", "take", "var")
# legacy fluent methods MXNet 2.0 leaves on its NumPy symbols
_KEPT = ("log_sigmoid", "mish")


def reshape(self: _Symbol, *shape: Any, order: str = "C") -> _Symbol:
    """NumPy's reshape: ``s.reshape(2, -1)`` or ``s.reshape((2, -1))``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _np.reshape(self, tuple(shape), order=order)


def transpose(self: _Symbol, *axes: Any) -> _Symbol:
    """The axes reversed, or permuted as given: ``s.transpose(1, 0, 2)`` or ``s.transpose((1, 0, 2))``."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return _np.transpose(self, axes=tuple(axes) if axes else None)


def flatten(self: _Symbol, order: str = "C") -> _Symbol:
    """The values as one axis (NumPy's ``flatten``, not 1.x's ``Flatten`` to two axes)."""
    return reshape(self, -1, order=order)


def astype(self: _Symbol, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
           copy: bool = True) -> _Symbol:
    """The values cast to ``dtype``; only the arguments MXNet 2.0 takes (any ``copy``, ``casting='unsafe'``)."""
    if order not in (None, "K", "C"):
        raise MXNetValueError(f"astype: order must be 'K' or 'C', got {order!r}")
    if casting != "unsafe":
        raise MXNetValueError(f"astype: casting must be 'unsafe', got {casting!r}")
    if not subok:
        raise MXNetValueError("astype: subok must be True")
    return _np.astype(self, dtype)


def _transposed(self: _Symbol) -> _Symbol:
    return transpose(self)


def _num_outputs(self: _Symbol) -> int:
    return len(self._outputs)


def getitem(self: _Symbol, key: Any) -> _Symbol:
    """``s[key]``: of a group, its output(s) at an int or slice (or name); of one output, NumPy indexing
    -- ints, slices, None, Ellipsis, and integer ``_Symbol`` index arrays."""
    if len(self._outputs) > 1 or isinstance(key, str):
        if isinstance(key, slice):
            return _Symbol([self._outputs[i] for i in range(*key.indices(len(self._outputs)))])
        return Symbol.__getitem__(self, key)
    parts = key if isinstance(key, tuple) else (key,)
    static, arrays = [], []
    for part in parts:
        if isinstance(part, Symbol):
            static.append(("a", len(arrays)))
            arrays.append(part)
            continue
        if not (part is None or part is Ellipsis or isinstance(part, (int, slice)) or hasattr(part, "__index__")):
            raise MXNetIndexError(f"__getitem__: a NumPy symbol is indexed by ints, slices, None, Ellipsis and "
                                  f"integer symbols, got {type(part).__name__}")
        static.extend(split_key(part, None)[0])
    with building(None, None, legacy=False) as builder:
        builder.hint = "getitem"
        return builder.invoke(get_op("_getitem"), [self, *arrays], {"key": tuple(static)}, None)


def _no_attribute(name: str) -> Callable[..., Any]:
    def method(self: _Symbol, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(f"'_Symbol' object has no attribute {name!r} (a legacy method; use mx.sym.np or "
                             "mx.sym.npx, or as_nd_ndarray())")
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Legacy ``{name}``: not a method of a NumPy symbol (raises ``AttributeError``), as in MXNet 2.0."
    return method


def install() -> None:
    """Put the methods on ``_Symbol``: the NumPy ones, and a raiser for each legacy fluent method
    (``Symbol``'s own methods that are not fluent, and the value methods, stay)."""
    methods: dict[str, Any] = {name: _no_attribute(name) for name in fluent_methods()
                               if name not in _KEPT and name not in _VALUE_METHODS}
    methods.update({name: method_of(name, name, _np, "mx.sym.np") for name in _SAME})
    methods.update({"reshape": reshape, "transpose": transpose, "flatten": flatten, "astype": astype,
                    "T": property(_transposed), "num_outputs": property(_num_outputs), "__getitem__": getitem,
                    "split_v2": _no_attribute("split_v2")})
    for name, method in methods.items():
        setattr(_Symbol, name, method)
