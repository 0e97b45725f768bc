"""``mx.np.set_functions``: the Array API's unique functions over ``mx.np.unique`` (input flattened).

The results are named tuples; index arrays are int64.  Data-dependent shapes: these run
eagerly (``unique`` is a dynamic-shape op).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any

from ._sorting import unique

__all__ = ["unique_all", "unique_inverse", "unique_values"]

UniqueAll = namedtuple("UniqueAll", ["values", "indices", "inverse_indices", "counts"])
UniqueInverse = namedtuple("UniqueInverse", ["values", "inverse_indices"])


def unique_all(x: Any) -> UniqueAll:
    """Sorted unique values of ``x`` with their first indices, the inverse indices and the counts."""
    return UniqueAll(*unique(x, return_index=True, return_inverse=True, return_counts=True))


def unique_inverse(x: Any) -> UniqueInverse:
    """Sorted unique values of ``x`` and the indices that rebuild the flattened ``x`` from them."""
    return UniqueInverse(*unique(x, return_inverse=True))


def unique_values(x: Any) -> Any:
    """Sorted unique values of ``x``."""
    return unique(x)
