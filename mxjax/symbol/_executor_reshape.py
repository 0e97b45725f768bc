"""``Executor.reshape`` (MXNet 1.x: the same graph bound for new input shapes, a batch of another
size or a sequence of another length) and ``get_optimized_symbol``.

A reshaped executor shares every array whose shape stays -- the parameters, their gradients, the
auxiliary states -- so training one updates the weights the other reads.  An argument of a new
shape gets a new array (MXNet's is a view of the old buffer, whose leading values it also starts
with: so does the new array where it is no larger).
"""
from __future__ import annotations

import math
from typing import Any

from ..base import MXNetValueError
from ._executor_outputs import zeros_on


class _Reshaping:
    """``reshape`` and ``get_optimized_symbol`` of an ``Executor`` (a mixin: it reads ``_symbol``,
    ``_ctx``, the argument, gradient and auxiliary dicts, and ``_grad_req``)."""

    __slots__ = ()

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False, **kwargs: Any) -> Any:
        """A new executor of this graph for the argument shapes ``kwargs`` (name -> shape), the others
        inferred.  An argument not given whose inferred shape changes needs ``partial_shaping``; one
        that grows needs ``allow_up_sizing``.  Arrays whose shapes stay are shared with this executor."""
        for name in kwargs:
            if name not in self.arg_dict:
                raise MXNetValueError(f"reshape: {name!r} is not an argument; arguments are {self.arg_names}")
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**{n: tuple(s) for n, s in kwargs.items()})
        if arg_shapes is None:
            raise MXNetValueError(f"reshape: cannot infer every argument's shape from {kwargs}; give more shapes")
        args, grads = {}, {}
        for name, shape in zip(self.arg_names, arg_shapes):
            args[name] = self._resized("argument", name, self.arg_dict[name], shape, name in kwargs,
                                       partial_shaping, allow_up_sizing)
            if name in self.grad_dict:
                grads[name] = self._resized("gradient", name, self.grad_dict[name], shape, True, True, True)
        aux = {name: self._resized("auxiliary state", name, self.aux_dict[name], shape, False, partial_shaping,
                                   allow_up_sizing) for name, shape in zip(self.aux_names, aux_shapes)}
        executor = type(self)(self._symbol, self._ctx, args, grads, dict(self._grad_req), aux)
        executor.mirror, executor._fresh_outputs = self.mirror, self._fresh_outputs
        return executor

    def _resized(self, kind: str, name: str, array: Any, shape: tuple, given: bool, partial_shaping: bool,
                 allow_up_sizing: bool) -> Any:
        shape = tuple(shape)
        if shape == array.shape:
            return array
        if not (given or partial_shaping):
            raise MXNetValueError(f"reshape: the {kind} {name!r} would change shape from {array.shape} to {shape}; "
                                  "give its shape, or pass partial_shaping=True")
        size = math.prod(shape)
        if size > array.size and not allow_up_sizing:
            raise MXNetValueError(f"reshape: the {kind} {name!r} would grow from {array.shape} to {shape}; "
                                  "pass allow_up_sizing=True")
        values = array.to_jax().reshape(-1)
        if size <= values.size:
            return type(array)._wrap(values[:size].reshape(shape))
        return zeros_on(type(array), shape, array.dtype, self._ctx.jax_device)

    def get_optimized_symbol(self) -> Any:
        """The graph this executor runs: a copy of the bound symbol (subgraph backends apply before
        binding, through ``Symbol.optimize_for``; binding itself rewrites nothing)."""
        return self._symbol.__copy__()
