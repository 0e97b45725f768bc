"""Control-flow bodies from graphs: a sub-graph as the :class:`Subgraph` parameter its op runs.

Shared by the symbol JSON reader (``_foreach``/``_while_loop``/``_cond`` nodes keep their
bodies as sub-graphs) and by ``mx.npx``'s control flow, which traces bodies into graphs
under deferred compute; it sits below both.  A body may read a constant array (a plain
array captured at trace time): its variable carries the value in ``__constant__``.
"""
from __future__ import annotations

import base64
import json
from typing import Any

import jax.numpy as jnp
import numpy as onp

from .. import _config
from .interpret import graph_function
from .ir import Entry, variables
from ..base import MXNetError
from ..operator.control_flow import Subgraph

__all__ = ["CONSTANT", "graph_body", "encode_constant", "decode_constant"]

CONSTANT = "__constant__"  # attribute of a sub-graph variable that stands for a constant array


def graph_body(outputs: list[Entry], name: str, train: bool = False, consts: dict | None = None) -> Subgraph:
    """A sub-graph as a :class:`Subgraph` over its variables in ``list_inputs`` order.

    Variables marked ``__constant__`` are not arguments: their values come from
    ``consts`` (a trace passes the arrays it captured) or from the attribute.
    ``train`` is the training flag the body runs with when its op is not told one.
    """
    if consts is None:
        consts = {v.name: decode_constant(v.attrs[CONSTANT]) for v in variables(outputs) if CONSTANT in v.attrs}
    inputs = tuple(v.name for v in variables(outputs) if v.name not in consts)
    runs: dict[bool, Any] = {}

    def by_mode(flag: bool) -> Any:
        if flag not in runs:
            run = graph_function(outputs, flag)

            def fn(*arrays: Any) -> list:
                values = dict(consts)
                values.update(zip(inputs, arrays))
                return run(values)[0]
            runs[flag] = fn
        return runs[flag]

    return Subgraph(by_mode(train), len(outputs), name, inputs, outputs, by_mode)


def encode_constant(value: Any) -> str:
    """A constant array as the ``__constant__`` attribute: dtype, shape and raw bytes (exact for any dtype)."""
    array = onp.asarray(value)
    return json.dumps({"dtype": array.dtype.name, "shape": list(array.shape),
                       "data": base64.b64encode(onp.ascontiguousarray(array).tobytes()).decode("ascii")})


@_config.with_x64  # an int64/float64 constant stays 64-bit
def decode_constant(text: str) -> Any:
    """The array a ``__constant__`` attribute holds."""
    try:
        spec = json.loads(text)
        dtype = jnp.dtype(spec["dtype"])
        array = onp.frombuffer(base64.b64decode(spec["data"]), dtype=dtype).reshape(spec["shape"])
    except (ValueError, KeyError, TypeError) as err:
        raise MXNetError(f"symbol JSON: a {CONSTANT} attribute must hold dtype, shape and base64 data "
                         f"({type(err).__name__}: {err})") from None
    return jnp.asarray(array)
