"""``Symbol`` methods that treat the graph as one program: MXNet JSON, binding and running.

``tojson``/``save`` write MXNet's symbol JSON; ``bind``/``simple_bind``/``eval``
make an ``Executor``, and ``graph_function``/``to_jaxpr`` give the graph as a JAX
function.  Kept apart from ``symbol.py`` (the graph handle itself); ``Symbol``
inherits them.
"""
from __future__ import annotations

from typing import Any

import jax

from ..graph import ir
from .._atomic import atomic_write
from ..base import MXNetError
from ..device import Device, current_device
from .executor import Executor, allocate_and_bind
from ..graph.interpret import graph_function
from ._naming import _json_op_name_outputs, _json_params


class _ProgramMethods:
    """``Symbol``'s serialization and execution methods (a mixin: no state of its own)."""

    __slots__ = ()

    def tojson(self) -> str:
        """MXNet's symbol JSON (loadable by MXNet 1.9.1 for the ops it knows)."""
        jax_nodes = [n.name for n in self._nodes() if n.op.startswith("_jax_")]
        if jax_nodes:
            raise MXNetError(f"tojson: nodes {jax_nodes[:3]} are JAX primitives (from mx.sym.from_jax) whose "
                             "parameters have no MXNet JSON form")
        return ir.graph_to_json(self._outputs, _json_params, _json_op_name_outputs)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write ``tojson()`` to ``fname``, replacing any old file only once the new one is complete."""
        text = self.tojson()
        with atomic_write(fname, "w", encoding="utf-8") as f:
            f.write(text)

    # -- execution ------------------------------------------------------------------
    def graph_function(self, train: bool = False) -> Any:
        """The graph as a pure function ``f(values: dict, key) -> (outputs, aux_updates)``."""
        return graph_function(self._outputs, train)

    def bind(self, ctx: Device | None = None, args: Any = None, args_grad: Any = None,
             grad_req: Any = "write", aux_states: Any = None, group2ctx: Any = None,
             shared_exec: Any = None) -> Any:
        """An ``Executor`` over the given argument (and gradient, auxiliary) arrays."""
        return Executor(self, ctx or current_device(), args, args_grad, grad_req, aux_states)

    def _bind(self, *args: Any, **kwargs: Any) -> Any:
        """MXNet 2.0's ``bind``: its executor gives new output arrays at every forward, as 2.0's does
        (1.x's ``bind`` writes each forward into the arrays it allocated: see ``_executor_outputs``)."""
        return _with_fresh_outputs(self.bind(*args, **kwargs))

    def simple_bind(self, ctx: Device | None = None, grad_req: Any = "write", type_dict: dict | None = None,
                    stype_dict: Any = None, group2ctx: Any = None, shared_arg_names: Any = None,
                    shared_exec: Any = None, shared_buffer: Any = None, **shapes: Any) -> Any:
        """Allocate zero arrays of the inferred shapes and bind them."""
        return allocate_and_bind(self, ctx or current_device(), grad_req, type_dict or {}, shapes)

    def _simple_bind(self, *args: Any, **kwargs: Any) -> Any:
        """MXNet 2.0's ``simple_bind``, whose executor gives new output arrays at every forward (see ``_bind``)."""
        return _with_fresh_outputs(self.simple_bind(*args, **kwargs))

    def eval(self, ctx: Device | None = None, **kwargs: Any) -> list:
        """Run the graph once on the given arrays: ``[outputs]``."""
        executor = self.bind(ctx, kwargs, grad_req="null")
        return executor.forward()

    def to_jaxpr(self, **inputs: Any) -> Any:
        """The graph as a ``jax.core.ClosedJaxpr`` for example inputs (arrays or ShapeDtypeStructs)."""
        fn = graph_function(self._outputs, False)
        return jax.make_jaxpr(lambda values: fn(values, jax.random.PRNGKey(0))[0])(inputs)


def _with_fresh_outputs(executor: Any) -> Any:
    executor._fresh_outputs = True
    return executor
