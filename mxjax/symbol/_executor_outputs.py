"""An ``Executor``'s output arrays: MXNet 1.x's executor allocates them at bind and writes each
forward's results into them, so ``ex.outputs[0]`` is there before the first forward (its shape known)
and an output held across forwards shows the latest one -- 1.x code holds ``out = ex.outputs[0]``
once and reads it after every ``forward``.  That is a legacy symbol's executor (1.x semantics); a
NumPy symbol's, and one made by MXNet 2.0's ``_bind``, give new arrays at every forward, as 2.0's
does.  A graph with dynamic-shape ops (outputs of changing shapes, recorded by autograd) does too.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from ..base import MXNetError
from .._ndarray import device_copy


def zeros_on(cls: type, shape: tuple, dtype: Any, device: Any) -> Any:
    """A new ``cls`` array of zeros on JAX device ``device``, made on the host and transferred (``jnp.zeros``
    would compile a program per shape): how an executor allocates its arrays, as MXNet allocates them."""
    return cls._wrap(device_copy(onp.zeros(shape, dtype), where=device))


class _HeldOutputs:
    """``outputs`` of an ``Executor`` (a mixin: it reads ``_symbol``, ``_dynamic``, ``arg_dict``,
    ``_ctx`` and ``_output_class``, and keeps the arrays in ``_held``)."""

    __slots__ = ()
    _fresh_outputs = False  # new output arrays at every forward (MXNet 2.0's ``_bind``)

    @property
    def outputs(self) -> list:
        """The outputs of the last forward; before it, a legacy symbol's outputs allocated (zeros) with
        the shapes and dtypes the bound arguments give."""
        if self._held is None:
            self._held = self._allocated()
        return self._held

    @outputs.setter
    def outputs(self, arrays: list) -> None:
        self._held = list(arrays)

    def _writes_outputs(self) -> bool:
        return not (self._fresh_outputs or self._symbol._np or self._dynamic)

    def _allocated(self) -> list:
        if not self._writes_outputs():
            return []
        try:
            _, shapes, _ = self._symbol.infer_shape(**{n: a.shape for n, a in self.arg_dict.items()})
            _, dtypes, _ = self._symbol.infer_type(**{n: a.dtype for n, a in self.arg_dict.items()})
        except MXNetError:  # (not inferable before running: allocated by the first forward)
            return []
        if shapes is None or dtypes is None or any(s is None for s in shapes):
            return []
        cls, device = self._output_class(), self._ctx.jax_device
        return [zeros_on(cls, s, d, device) for s, d in zip(shapes, dtypes)]

    def _settled(self, values: list) -> list:
        """The outputs holding a forward's ``values``: written into the arrays held since bind or the last
        forward where a legacy symbol's are of the same shapes and dtypes, else new arrays."""
        held = self._held
        if held and self._writes_outputs() and len(held) == len(values) and all(
                h.shape == tuple(v.shape) and h.dtype == v.dtype for h, v in zip(held, values)):
            for array, value in zip(held, values):
                array._write(value)
            return held
        cls = self._output_class()
        return [cls._wrap(v) for v in values]
