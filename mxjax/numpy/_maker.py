"""``np_function``: an ``mx.np`` function from a registered op (returns ``mx.np.ndarray``)."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from ..ndarray import np_class


def np_function(op: str, name: str | None = None, **options: Any) -> Callable[..., Any]:
    """The ``mx.np`` function ``name`` for the registered op ``op`` (also used as ndarray methods)."""
    return make_function(op, name=name or op, out_cls=np_class, module="mxjax.numpy", **options)
