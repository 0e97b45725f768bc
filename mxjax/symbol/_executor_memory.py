"""Executor methods reporting memory: MXNet's static plan and XLA's compiled figures.

``memory_plan`` runs the planner of ``memory.py`` on the bound shapes,
``memory_analysis`` asks XLA about the compiled programs and ``debug_str`` prints
both.  Kept apart from ``executor.py`` (which runs the programs); ``Executor``
inherits these methods.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config
from .memory import MemoryPlan, plan_memory

_STATS = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes", "temp_size_in_bytes",
          "generated_code_size_in_bytes")


class _MemoryReports:
    """``memory_plan``, ``memory_analysis`` and ``debug_str`` of an ``Executor``."""

    __slots__ = ()

    def memory_plan(self, include_backward: bool = False) -> MemoryPlan:
        """MXNet's static memory plan for the bound shapes (forward, or forward+backward)."""
        arrays = {**self.arg_dict, **self.aux_dict}
        return plan_memory(self._symbol, {n: a.shape for n, a in arrays.items()},
                           {n: a.dtype for n, a in arrays.items()}, include_backward, grad_args=self._diff)

    @_config.with_x64
    def memory_analysis(self, mirror: bool | None = None) -> dict[str, dict[str, int]]:
        """XLA's compiled memory statistics (bytes) of this executor's programs.

        ``forward``: inference; ``training forward``: the training forward of the
        two-call form, whose outputs include the residuals kept for backward;
        ``forward+backward``: the fused training program.  ``mirror`` overrides
        the executor's setting.
        """
        def spec(arrays: dict) -> dict:
            return {n: jax.ShapeDtypeStruct(a.shape, a.dtype) for n, a in arrays.items()}
        inputs = (spec(self.arg_dict), spec(self.aux_dict), {},
                  jax.ShapeDtypeStruct((2,), jnp.uint32) if self._random else None)
        programs = [("forward", False, "plain")]
        if self._diff:
            programs += [("training forward", True, "vjp"), ("forward+backward", True, "step")]
        report = {}
        for name, train, mode in programs:
            stats = self._program(train, mode, mirror).lower(*inputs).compile().memory_analysis()
            report[name] = {k: int(getattr(stats, k, 0) or 0) for k in _STATS} if stats is not None else {}
        return report

    def debug_str(self) -> str:
        """Bound arrays, the static memory plans and XLA's memory analysis of the compiled programs."""
        lines = [f"Symbol outputs: {self._symbol.list_outputs()}"]
        for name, arr in {**self.arg_dict, **self.aux_dict}.items():
            lines.append(f"  {name}: {arr.shape} {onp.dtype(arr.dtype).name}")
        lines.append(self.memory_plan(False).summary())
        if self._diff:
            lines.append(self.memory_plan(True).summary())
        lines.append(f"XLA memory analysis (mirror {'on' if self._mirror else 'off'}; bytes):")
        for name, stats in self.memory_analysis().items():
            lines.append(f"  {name}: " + (", ".join(f"{k.replace('_size_in_bytes', '')} {v}"
                                                   for k, v in stats.items()) or "not reported by this backend"))
        return "\n".join(lines)
