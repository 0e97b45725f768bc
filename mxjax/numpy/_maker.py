"""``np_function``: an ``mx.np`` function from a registered op (returns ``mx.np.ndarray``)."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from .._ndarray import NDArray
from .._invoke import np_class


def np_function(op: str, name: str | None = None, **options: Any) -> Callable[..., Any]:
    """The ``mx.np`` function ``name`` for the registered op ``op`` (also used as ndarray methods)."""
    return make_function(op, name=name or op, out_cls=np_class, module="mxjax.numpy", **options)


def by_shape_array(static: Callable[..., Any], dynamic: Callable[..., Any], slot: int,
                   key: str) -> Callable[..., Any]:
    """One function over two bindings: ``static`` when the shape (positional ``slot`` or keyword
    ``key``) is ints, ``dynamic`` -- a dynamic-shape op taking the shape as an input -- when it is
    an mx array, so a shape computed from data stays an input of the graph."""

    def function(*args: Any, **kwargs: Any) -> Any:
        shape = args[slot] if len(args) > slot else kwargs.get(key)
        return (dynamic if isinstance(shape, NDArray) else static)(*args, **kwargs)

    function.__name__ = function.__qualname__ = static.__name__
    function.__module__ = static.__module__
    function.__doc__ = (static.__doc__ or "") + (
        f"\n\n``{key}`` may also be an integer mx array (e.g. ``npx.shape_array(x)``): then the op "
        f"``{dynamic.op.name}`` runs, a dynamic-shape op with the shape as its input.")
    for attr in ("op", "positional", "keywords"):
        if hasattr(static, attr):
            setattr(function, attr, getattr(static, attr))
    function.dynamic_op = dynamic.op  # type: ignore[attr-defined]
    return function
