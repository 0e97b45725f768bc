"""NDArray's fluent methods on ``Symbol`` (``s.sum(axis=1)``, ``s.reshape((2, -1))``...).

Each method is the ``mx.sym`` function of the same name with the symbol as its
first argument, so ``s.sum(axis=1)`` builds exactly the node ``mx.sym.sum(s, axis=1)``
does.  The names are those of ``mx.nd``'s fluent table plus the few MXNet gives only
symbols and arrays of both kinds (``reshape``, ``transpose``, ``astype``).  The
methods that need concrete values (``asnumpy``, ``backward``...) raise
``NotImplementedForSymbol``, as in MXNet.
"""
from __future__ import annotations

from typing import Any, Callable

from ..base import NotImplementedForSymbol
from ..ndarray._fluent import FLUENT_METHODS
from ._split import split_v2_method
from . import op as _op
from .symbol import Symbol

# mx.nd's fluent names that are not graph ops (storage conversion)
_NOT_SYMBOLIC = {"tostype"}
# method name -> the mx.sym function it calls, where they differ
_EXTRA = {"reshape": "reshape", "reshape_like": "reshape_like", "transpose": "transpose", "astype": "cast"}


def method_of(method: str, function: str, namespace: Any = _op, label: str = "mx.sym") -> Callable[..., Any]:
    """The method ``method``: ``namespace``'s function ``function`` with the symbol first (``mx.sym``'s
    for the fluent methods; ``mx.sym.np``'s for a NumPy symbol's, see ``_numpy_methods``)."""
    def fluent(self: Symbol, *args: Any, **kwargs: Any) -> Any:
        return _kept_kind(self, getattr(namespace, function)(self, *args, **kwargs))
    fluent.__name__ = fluent.__qualname__ = method
    fluent.__doc__ = f"``{label}.{function}(self, ...)`` as a method."
    return fluent


def _kept_kind(self: Symbol, result: Any) -> Any:
    """``result`` as a symbol of ``self``'s semantics (a NumPy symbol's method gives a NumPy symbol,
    whose executors give ``mx.np`` arrays; the node is the ``mx.sym`` op all the same)."""
    if self._np and isinstance(result, Symbol) and not result._np:
        return type(self)(result._outputs)
    return result


def _flatten(self: Symbol, inplace: bool = False, **kwargs: Any) -> Any:
    """``mx.sym.flatten(self)``; ``inplace`` is accepted and ignored, as in MXNet."""
    return _op.flatten(self, **kwargs)


def _expand_dims(self: Symbol, axis: int, inplace: bool = False, **kwargs: Any) -> Any:
    """``mx.sym.expand_dims(self, axis=axis)``; ``inplace`` is accepted and ignored, as in MXNet."""
    return _op.expand_dims(self, axis=axis, **kwargs)


def _diag(self: Symbol, k: int = 0, **kwargs: Any) -> Any:
    """``mx.sym.diag(self, k)``."""
    return _op.diag(self, k, **kwargs)


def _value_method(name: str) -> Callable[..., Any]:
    def method(self: Symbol, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedForSymbol(method, None)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NDArray's ``{name}``: not available on a Symbol (raises ``NotImplementedForSymbol``)."
    return method


_SPECIAL = {"flatten": _flatten, "expand_dims": _expand_dims, "diag": _diag, "split_v2": split_v2_method}
_VALUE_METHODS = ("asnumpy", "asscalar", "wait_to_read", "backward", "detach", "as_in_context", "copy")


def fluent_methods() -> dict[str, Callable[..., Any]]:
    """Method name -> function, for every fluent method MXNet 2's Symbol has."""
    names = {name: name for name in FLUENT_METHODS if name not in _NOT_SYMBOLIC}
    names.update(_EXTRA)
    methods = {name: _SPECIAL.get(name) or method_of(name, function) for name, function in names.items()}
    methods.update({name: _value_method(name) for name in _VALUE_METHODS})
    return methods


def install() -> None:
    """Put the fluent methods on ``Symbol`` (methods the class defines itself win)."""
    for name, method in fluent_methods().items():
        if name not in Symbol.__dict__:
            setattr(Symbol, name, method)
