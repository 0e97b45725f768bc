"""``nd_function``: an ``mx.nd`` function from a registered op (returns the legacy ``NDArray``)."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from .._ndarray import NDArray


def nd_function(op: str, name: str | None = None, *, rename: dict[str, str] | None = None,
                **options: Any) -> Callable[..., Any]:
    """A legacy front-end function; ``rename`` maps 1.x keyword names onto the op's (``{"data": "x"}``).

    Legacy functions accept and ignore ``name=``/``attr=``; variadic ops take their arrays
    as separate positional arguments (``nd.concat(a, b, dim=0)``).
    """
    options.setdefault("sequence_input", False)
    fn = make_function(op, name=name or op, out_cls=NDArray, legacy=True, module="mxjax.ndarray", **options)
    renames = tuple({**_legacy_input_names(fn.op), **(rename or {})}.items())
    if not renames:
        return fn

    def function(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for old, new in renames:
                if old in kwargs:
                    kwargs[new] = kwargs.pop(old)
        return fn(*args, **kwargs)

    function.__name__ = function.__qualname__ = fn.__name__
    function.__doc__ = fn.__doc__
    function.__module__ = "mxjax.ndarray"
    function.op = fn.op  # type: ignore[attr-defined]
    return function


def _legacy_input_names(op: Any) -> dict[str, str]:
    """1.x keyword names of a NumPy op's array inputs: ``data`` for one input, ``lhs``/``rhs`` for two."""
    if op.variadic or op.needs_key:
        return {}
    inputs = [n for n in op.inputs if n not in op.input_defaults]
    if len(inputs) == 1 and inputs[0] != "data":
        return {"data": inputs[0]}
    if inputs == ["x1", "x2"]:
        return {"lhs": "x1", "rhs": "x2"}
    return {}
