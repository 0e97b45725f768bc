"""``mx.np`` sorting, searching and set functions, one binding per public name (NumPy's argument order)."""
from __future__ import annotations

from ._maker import np_function

_SORT_ARGS = ("a", "axis", "kind", "order")

sort = np_function("sort", positional=_SORT_ARGS)
argsort = np_function("argsort", positional=_SORT_ARGS)
lexsort = np_function("lexsort")
partition = np_function("partition")
argpartition = np_function("argpartition")
searchsorted = np_function("searchsorted", positional=("a", "v", "side", "sorter"))
nonzero = np_function("nonzero")
flatnonzero = np_function("flatnonzero")
argwhere = np_function("argwhere")
unique = np_function("unique")
isin = np_function("isin")
intersect1d = np_function("intersect1d")
union1d = np_function("union1d")
setdiff1d = np_function("setdiff1d")
setxor1d = np_function("setxor1d")

__all__ = [
    "sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted", "nonzero", "flatnonzero",
    "argwhere", "unique", "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d",
]
