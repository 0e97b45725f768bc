"""``mx.sym.split_v2`` (and ``Symbol.split_v2``): split along an axis into equal sections or at indices,
as one ``_split_v2`` node, as MXNet writes it."""
from __future__ import annotations

from typing import Any

from . import op as _op
from .symbol import Symbol


def split_v2(ary: Symbol, indices_or_sections: int | tuple, axis: int = 0, squeeze_axis: bool = False) -> Symbol:
    """Split ``ary`` along ``axis``: an int N gives N equal parts, a tuple of indices
    ``(i1, i2, ...)`` the parts ``[:i1], [i1:i2], ..., [ik:]``."""
    if isinstance(indices_or_sections, int):
        sections, indices = indices_or_sections, ()
    elif isinstance(indices_or_sections, tuple):
        sections, indices = 0, (0, *(int(i) for i in indices_or_sections))
    else:
        raise ValueError("indices_or_sections must either int or tuple of ints")
    return _op._split_v2(ary, indices=indices, axis=axis, squeeze_axis=squeeze_axis, sections=sections)


def split_v2_method(self: Symbol, *args: Any, **kwargs: Any) -> Symbol:
    """``mx.sym.split_v2(self, ...)`` as a method."""
    return split_v2(self, *args, **kwargs)
