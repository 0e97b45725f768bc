"""Shape and dtype inference methods of ``Symbol`` (``infer_shape``, ``infer_type`` and partial forms).

They map MXNet's positional/keyword input conventions onto ``infer.py``'s
abstract evaluation and lay the results out as MXNet does (arguments, outputs,
auxiliary states).  Kept apart from ``symbol.py`` (the graph handle itself);
``Symbol`` inherits them.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..base import MXNetValueError, normalize_dtype
from . import infer


class _InferMethods:
    """``Symbol``'s inference methods (a mixin: no state of its own)."""

    __slots__ = ()

    def _known(self, args: tuple, kwargs: dict) -> dict:
        arguments = self.list_arguments()
        if len(args) > len(arguments):
            raise MXNetValueError(f"got {len(args)} positional values for {len(arguments)} arguments")
        known = {k: v for k, v in zip(arguments, args) if v is not None}
        inputs = set(self.list_inputs())
        for key, value in kwargs.items():
            if key not in inputs:
                raise MXNetValueError(f"{key!r} is not an input of this symbol; inputs are {sorted(inputs)}")
            if value is not None:
                known[key] = value
        return known

    def _infer(self, shapes: dict, dtypes: dict, partial: bool) -> tuple:
        try:
            avals = infer.infer_avals(self._outputs, shapes, dtypes, partial)
        except infer._Incomplete:
            return None
        nodes = {n.name: n for n in self._nodes() if n.is_variable}

        def of(name: str) -> Any:
            return avals[id(nodes[name])][0]
        args = [of(n) for n in self.list_arguments()]
        outs = [avals[id(n)][i] if i < len(avals[id(n)]) else None for n, i in self._outputs]
        aux = [of(n) for n in self.list_auxiliary_states()]
        return args, outs, aux

    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple:
        """``(arg_shapes, out_shapes, aux_shapes)`` from some input shapes; Nones if incomplete."""
        result = self._infer({k: tuple(v) for k, v in self._known(args, kwargs).items()}, {}, False)
        if result is None:
            return None, None, None
        return tuple([None if a is None else tuple(a.shape) for a in part] for part in result)

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple:
        """Like ``infer_shape``, leaving None where a shape cannot be decided (as MXNet 2 does)."""
        result = self._infer({k: tuple(v) for k, v in self._known(args, kwargs).items()}, {}, True)
        return tuple([None if a is None else tuple(a.shape) for a in part] for part in result)

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple:
        """``(arg_types, out_types, aux_types)`` from some input dtypes.

        With every shape known (``__shape__`` attributes) the ops' own inference
        decides; otherwise dtypes propagate as MXNet's type inference does for most
        ops: parameters and outputs take the dtype of the op's first typed input,
        and ops with a ``dtype`` parameter produce that dtype.
        """
        dtypes = {k: normalize_dtype(v) for k, v in self._known(args, kwargs).items()}
        result = self._infer({}, dtypes, True)
        if all(a is not None for part in result for a in part):
            return tuple([onp.dtype(a.dtype).type for a in part] for part in result)
        types = infer.propagate_dtypes(self._outputs, dtypes)
        nodes = {n.name: n for n in self._nodes() if n.is_variable}
        args_ = [types.get((id(nodes[n]), 0)) for n in self.list_arguments()]
        outs = [types.get((id(n), i)) for n, i in self._outputs]
        aux = [types.get((id(nodes[n]), 0)) for n in self.list_auxiliary_states()]
        return tuple([None if t is None else onp.dtype(t).type for t in part] for part in (args_, outs, aux))

    infer_type_partial = infer_type
