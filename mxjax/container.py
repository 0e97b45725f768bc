"""``mx.container``: the ADT, Map and String objects of MXNet's FFI layer, as plain Python.

In MXNet these wrap C++ runtime objects that its FFI functions return.  mxjax has no C++
runtime, so they are immutable Python values with the same interface: ``String`` is a
``str``, ``ADT`` a tagged tuple, ``Map`` a read-only mapping.  (MXNet 2.0's own ``ADT``
rejects its ``String`` fields and ``Map`` cannot be built from Python; here both work.)
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Iterable

__all__ = ["Object", "PyNativeObject", "ADT", "Map", "String", "register_object", "getitem_helper"]

_REGISTRY: dict[str, type] = {}


class Object:
    """Base class of the runtime objects below."""
    __slots__ = ()
    type_key = "runtime.Object"


class PyNativeObject:
    """Base of the objects that are also a Python builtin (``String`` is a ``str``)."""
    __slots__ = ()


def register_object(type_key: str | type | None = None):
    """Class decorator recording a runtime object type under ``type_key`` (default: its name)."""
    def register(cls: type, key: str | None = None) -> type:
        key = key or cls.__name__
        cls.type_key = key
        _REGISTRY[key] = cls
        return cls

    if isinstance(type_key, type):
        return register(type_key)
    return lambda cls: register(cls, type_key)


def getitem_helper(obj: Any, elem_getter: Callable[[Any, int], Any], length: int, idx: int | slice):
    """Python indexing over ``elem_getter(obj, i)``: negative indices, slices (as a list), bounds."""
    if isinstance(idx, slice):
        return [elem_getter(obj, i) for i in range(*idx.indices(length))]
    if not isinstance(idx, int):
        raise TypeError(f"{type(obj).__name__} indices must be integers or slices, not {type(idx).__name__}")
    pos = idx + length if idx < 0 else idx
    if not 0 <= pos < length:
        raise IndexError(f"{type(obj).__name__} index {idx} out of range for size {length}")
    return elem_getter(obj, pos)


@register_object("MXNet.ADT")
class ADT(Object):
    """Algebraic data type value: an integer ``tag`` and a fixed sequence of fields."""
    __slots__ = ("_tag", "_fields")

    def __init__(self, tag: int, fields: Iterable[Any]):
        self._tag = int(tag)
        self._fields = tuple(fields)

    @property
    def tag(self) -> int:
        return self._tag

    def __getitem__(self, idx):
        return getitem_helper(self, lambda o, i: o._fields[i], len(self._fields), idx)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other) -> bool:
        return isinstance(other, ADT) and (self._tag, self._fields) == (other._tag, other._fields)

    def __hash__(self) -> int:
        return hash((self._tag, self._fields))

    def __repr__(self) -> str:
        return f"ADT(tag={self._tag}, fields={list(self._fields)!r})"


@register_object("MXNet.Map")
class Map(Object, Mapping):
    """Read-only mapping (MXNet converts Python dicts into it at FFI calls)."""
    __slots__ = ("_items",)

    def __init__(self, items: Mapping | Iterable[tuple[Any, Any]] = ()):
        self._items = dict(items)

    def __getitem__(self, key):
        return self._items[key]

    def __contains__(self, key) -> bool:
        return key in self._items

    def __iter__(self):
        return iter(self._items)

    def items(self) -> list[tuple[Any, Any]]:
        """The (key, value) pairs, as a list like MXNet's."""
        return list(self._items.items())

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key, default=None):
        return self._items.get(key, default)

    def __repr__(self) -> str:
        return f"Map({self._items!r})"


@register_object("MXNet.String")
class String(str, PyNativeObject):
    """A ``str`` that is also a runtime object."""
    __slots__ = ()
