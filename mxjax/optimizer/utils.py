"""What MXNet 2's ``mxnet.optimizer.utils`` holds: helpers its optimizers and contrib update
functions share (both private in MXNet too, but imported by scripts that write optimizers)."""
from __future__ import annotations

from typing import Any

from ..numpy.multiarray import ndarray as np_ndarray

__all__: list[str] = []


def _flatten_list(nested_list: Any) -> list:
    """``[[a, b], [c, d]]`` -> ``[a, b, c, d]`` (one level)."""
    return [item for sublist in nested_list for item in sublist]


def _as_classic(a: Any, allow_np: bool) -> Any:
    """``mx.np.ndarray`` (or a list/tuple holding one) as legacy ``mx.nd.NDArray``; with
    ``allow_np=False`` such an input is a ValueError, as in MXNet."""
    if isinstance(a, (tuple, list)):
        if any(isinstance(x, np_ndarray) for x in a):
            if not allow_np:
                raise ValueError("Converting np.ndarray to mx.nd.NDArray is not allowed")
            return [x.as_nd_ndarray() for x in a]
    elif isinstance(a, np_ndarray):
        if not allow_np:
            raise ValueError("Converting np.ndarray to mx.nd.NDArray is not allowed")
        return a.as_nd_ndarray()
    return a
