"""``gluon.SymbolBlock``: a Symbol (e.g. a model exported by MXNet) used as a Gluon block.

Every argument that is not an input becomes a Parameter named as in the graph
(``net_conv0_weight``), auxiliary states become Parameters without gradients, and
the graph runs as one compiled program through HybridBlock's cached op.
"""
from __future__ import annotations

from typing import Any

from .. import symbol as sym_module
from ..base import MXNetError, MXNetValueError
from ..device import Device
from ..symbol import Symbol
from .block import HybridBlock
from .parameter import Parameter

__all__ = ["SymbolBlock"]


class SymbolBlock(HybridBlock):
    """``SymbolBlock(outputs, inputs, params=None)``: run a graph with Gluon parameters."""

    def __init__(self, outputs: Any, inputs: Any, params: dict | None = None) -> None:
        super().__init__()
        outputs = sym_module.Group(list(outputs)) if isinstance(outputs, (list, tuple)) else outputs
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if not isinstance(outputs, Symbol) or not all(isinstance(s, Symbol) for s in inputs):
            raise MXNetValueError("SymbolBlock: outputs and inputs must be Symbols")
        self._symbol = outputs
        self._input_names = [s.name for s in inputs]
        missing = [n for n in self._input_names if n not in outputs.list_inputs()]
        if missing:
            raise MXNetValueError(f"SymbolBlock: inputs {missing} are not inputs of the graph "
                                  f"{outputs.list_inputs()}")
        aux = set(outputs.list_auxiliary_states())
        given = dict(params or {})
        for name in outputs.list_inputs():
            if name in self._input_names:
                continue
            param = given.get(name) or Parameter(name, grad_req="null" if name in aux else "write",
                                                 allow_deferred_init=True)
            self._reg_params[name] = param
        object.__setattr__(self, "_active", True)  # a graph is always run compiled

    @classmethod
    def imports(cls, symbol_file: str, input_names: Any, param_file: str | None = None,
                device: Device | None = None, allow_missing: bool = False, ignore_extra: bool = False) -> "SymbolBlock":
        """Load ``*-symbol.json`` (and ``*.params``) written by ``export`` or by MXNet itself."""
        symbol = sym_module.load(symbol_file)
        names = [input_names] if isinstance(input_names, str) else list(input_names)
        block = cls(symbol, [sym_module.var(n) for n in names])
        if param_file is not None:
            # as MXNet 2.0: the parameters take the dtypes the file was saved with
            block.load_parameters(param_file, device=device, allow_missing=allow_missing,
                                  ignore_extra=ignore_extra, cast_dtype=True, dtype_source="saved")
        return block

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        super().hybridize(True, **kwargs)  # always compiled: there is no imperative forward

    def forward(self, *args: Any) -> Any:
        raise MXNetError("SymbolBlock runs its graph compiled; call the block, not forward()")

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) != len(self._input_names):
            raise MXNetValueError(f"SymbolBlock: expected {len(self._input_names)} inputs "
                                  f"({self._input_names}), got {len(args)}")
        self._init_from_shapes(args)
        return self._call_cached(*args)

    def _init_from_shapes(self, args: tuple) -> None:
        pending = [p for p in self._reg_params.values() if p._data is None]
        if not pending:
            return
        shapes = {n: tuple(a.shape) for n, a in zip(self._input_names, args)}
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**shapes)
        if arg_shapes is None:
            raise MXNetError(f"SymbolBlock: cannot infer parameter shapes from inputs {shapes}")
        known = dict(zip(self._symbol.list_arguments(), arg_shapes))
        known.update(zip(self._symbol.list_auxiliary_states(), aux_shapes))
        for name, param in self._reg_params.items():
            if param._data is None:
                param.shape = known[name]
                param._finish_deferred_init()

    def _trace(self, arrays: list, training: bool, nesting: Any = None) -> tuple:
        """The graph is given: its inputs are the call's arrays and this block's parameters."""
        if nesting is not None:
            raise MXNetValueError(f"SymbolBlock: expected one array per input ({self._input_names}), "
                                  "got lists of arrays")
        return self._symbol, self._input_names, list(self._reg_params.items()), len(self._symbol) > 1
