"""``mx.amp``: automatic mixed precision, MXNet 2.0's API.

Two ways in.  ``init()`` changes the ops themselves: from then on the listed products run on
float16/bfloat16 inputs and the precision-sensitive ops on float32 inputs, in every call (eager,
autograd, hybridized); ``init_trainer`` / ``scale_loss`` / ``unscale`` add dynamic loss scaling
to a Gluon ``Trainer``.  ``convert_symbol`` / ``convert_model`` / ``convert_hybrid_block`` instead
rewrite one FP32 graph for inference, inserting ``amp_cast`` / ``amp_multicast`` nodes.

``layout_optimization`` (MXNet's NCHW->NHWC pass for oneDNN) is accepted; XLA picks the memory
layout of every convolution itself, so there is nothing for it to switch on.
"""
from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any, Iterator

import numpy as onp

from .. import autograd
from .. import ndarray as _nd_module
from .._ndarray import NDArray
from ..base import MXNetError, MXNetTypeError
from ..device import current_device
from ..gluon.block import HybridBlock
from ..gluon.parameter import Parameter
from ..gluon.symbol_block import SymbolBlock
from ..gluon.trainer import Trainer
from ..optimizer import Optimizer
from ..symbol import Symbol, var
from . import _imperative, lists
from ._graph import convert_graph
from ..serialization import FLAG_TO_DTYPE
from ._policy import BFLOAT16, AMPUsageError, build_policy, target_dtype_of
from .loss_scaler import LossScaler

__all__ = ["init", "init_trainer", "scale_loss", "unscale", "convert_model", "convert_hybrid_block",
           "list_lp16_ops", "list_fp32_ops", "list_lp16_fp32_ops", "list_conditional_fp32_ops",
           "list_widest_type_cast", "list_loss_output_functions", "list_lp16_use_fp32_params",
           "convert_symbol"]

bfloat16 = BFLOAT16  # ``mx.amp.amp.bfloat16``: the dtype object MXNet code compares against

_state: dict = {"initialized": False, "target": None, "loss_scaler": None, "scaler_taken": False,
                "wrapped": {}}


# ----------------------------------------------------------------------------- training

def init(target_dtype: Any = "float16", target_precision_ops: Any = None, conditional_fp32_ops: Any = None,
         fp32_ops: Any = None, layout_optimization: bool = False) -> None:
    """Turn AMP on for the whole process (call it before building the model; later calls do nothing).

    ``target_precision_ops`` / ``fp32_ops`` / ``conditional_fp32_ops`` replace the default tables
    (``list_lp16_ops`` and friends) of ops cast to ``target_dtype``, to float32, and to float32 for
    some parameter values (entries ``(op, parameter, [values])``).
    """
    if _state["initialized"]:
        return
    target = target_dtype_of(target_dtype, "amp.init")
    policy = build_policy(target, "amp.init", target_precision_ops, fp32_ops, conditional_fp32_ops)
    _imperative.install(policy)
    _state.update(initialized=True, target=target, loss_scaler=LossScaler(), scaler_taken=False)
    _wrap_loss_outputs(target)
    logging.info("Using AMP (target dtype %s)%s", target.name,
                 "\n - layout optimization: left to XLA" if layout_optimization else "")


def _wrap_loss_outputs(target: onp.dtype) -> None:
    """Imperative output layers put the current loss scale into their ``grad_scale``."""
    for name in list_loss_output_functions(target):
        plain = getattr(_nd_module, name, None)
        if plain is None:
            continue

        @functools.wraps(plain)
        def scaled(*args: Any, _plain: Any = plain, **kwargs: Any) -> Any:
            kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * _state["loss_scaler"].loss_scale
            return _plain(*args, **kwargs)
        _state["wrapped"][name] = plain
        setattr(_nd_module, name, scaled)


def _reset() -> None:
    """Undo ``init`` (mxjax's own tests use it; MXNet has no way back)."""
    _imperative.uninstall()
    for name, plain in _state["wrapped"].items():
        setattr(_nd_module, name, plain)
    _state.update(initialized=False, target=None, loss_scaler=None, scaler_taken=False, wrapped={})


def _check_trainer(optimizer_or_trainer: Any, caller: str) -> Trainer:
    if isinstance(optimizer_or_trainer, Trainer):
        return optimizer_or_trainer
    if isinstance(optimizer_or_trainer, Optimizer):
        raise MXNetTypeError(f"{caller}: AMP is currently only compatible with Gluon Trainer")
    raise MXNetTypeError(f"{caller}: optimizer_or_trainer should be a Gluon Trainer or an optimizer, "
                         f"instead is {type(optimizer_or_trainer)}")


def init_trainer(optimizer_or_trainer: Any) -> None:
    """Give a Trainer dynamic loss scaling: its steps skip the update when a gradient overflowed."""
    if not _state["initialized"]:
        raise AMPUsageError("amp.init_trainer: AMP not initialized, did you forget to call amp.init()?")
    trainer = _check_trainer(optimizer_or_trainer, "amp.init_trainer")
    if _state["scaler_taken"]:
        scaler = LossScaler()
    else:  # the first trainer shares the scaler the imperative output layers read
        scaler, _state["scaler_taken"] = _state["loss_scaler"], True
    trainer._amp_loss_scaler = scaler
    trainer._amp_original_scale = trainer._scale
    if "_update" not in vars(trainer):  # once per trainer: check the gradients before each update
        plain_update = trainer._update

        def update_unless_overflow(ignore_stale_grad: bool) -> None:
            if trainer._amp_loss_scaler.has_overflow(trainer._params):
                return
            plain_update(ignore_stale_grad)
        trainer._update = update_unless_overflow
    Trainer.amp_loss_scale = property(lambda self: self._amp_loss_scaler.loss_scale)


@contextlib.contextmanager
def scale_loss(loss: Any, optimizer_or_trainer: Any) -> Iterator[Any]:
    """``with amp.scale_loss(loss, trainer) as scaled: autograd.backward(scaled)``: the loss (or
    each loss of a list) times the loss scale; the trainer's next step divides it out."""
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise AMPUsageError("amp.scale_loss: Loss scaler is not initialized, did you forget to call "
                            "amp.init_trainer()?")
    scale = scaler.loss_scale
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scale
    if isinstance(loss, (list, tuple)):
        yield [item * scale for item in loss]
    else:
        yield loss * scale


def unscale(optimizer_or_trainer: Any) -> None:
    """Divide the loss scale out of the gradients now (before reading or clipping them)."""
    trainer = _check_trainer(optimizer_or_trainer, "amp.unscale")
    factor = trainer._scale
    with autograd.pause():
        for param in trainer._params:
            data = param._data
            if param.grad_req == "null" or data is None or data.grad is None:
                continue
            grad = data.grad
            grad[:] = grad * factor
    trainer._scale = 1.0


# ----------------------------------------------------------------------------- graphs

def _dtype_like(value: Any) -> bool:
    """Whether ``value`` names a dtype (a string, NumPy type or dtype) rather than data or a dict."""
    if isinstance(value, str):
        return True
    if isinstance(value, (NDArray, onp.ndarray, list, tuple, dict)):
        return False
    try:
        onp.dtype(value)
    except (TypeError, ValueError):
        return False
    return True


def convert_symbol(sym: Symbol, target_dtype: Any = "float16", target_dtype_ops: Any = None, fp32_ops: Any = None,
                   conditional_fp32_ops: Any = None, excluded_sym_names: Any = None, data_names: Any = None,
                   cast_optional_params: bool = False, *, cast_params_offline: bool | None = None) -> Symbol:
    """A mixed-precision copy of an FP32 ``sym`` with ``amp_cast`` / ``amp_multicast`` nodes.

    ``data_names``: the data inputs (default: inputs without a ``__dtype__`` attribute); the
    other inputs are parameters.  ``cast_optional_params`` (``cast_params_offline`` in later
    MXNet): parameters read only in ``target_dtype`` are stored in it (``__dtype__`` attribute).
    """
    caller = "amp.convert_symbol"
    if not isinstance(sym, Symbol):
        raise AMPUsageError(f"{caller}: First argument to convert_symbol should be Symbol, got {type(sym).__name__}")
    target = target_dtype_of(target_dtype, caller)
    excluded = _excluded(excluded_sym_names, caller)
    if data_names is None:
        attrs = sym.attr_dict()
        data_names = [n for n in sym.list_inputs() if "__dtype__" not in attrs.get(n, {})]
    policy = build_policy(target, caller, target_dtype_ops, fp32_ops, conditional_fp32_ops)
    offline = cast_optional_params if cast_params_offline is None else cast_params_offline
    return convert_graph(sym, policy, list(data_names), excluded, bool(offline))


def _excluded(names: Any, caller: str) -> list:
    if names is None:
        return []
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise MXNetTypeError(f"{caller}: excluded_sym_names must be a list of strings representing the names "
                             f"of the symbols that should not be casted, while received {names!r}")
    return list(names)


def _stored_dtypes(sym: Symbol) -> dict:
    """Input name -> the dtype its ``__dtype__`` attribute asks for (inputs without one: absent)."""
    out = {}
    for name, attrs in sym.attr_dict().items():
        flag = attrs.get("__dtype__")
        if flag not in (None, "-1"):
            out[name] = FLAG_TO_DTYPE[int(flag)]
    return out


def _cast_value(value: Any, dtype: onp.dtype | None) -> Any:
    if dtype is None or onp.dtype(value.dtype) == dtype:
        return value
    return value.astype(dtype)


def convert_model(sym: Symbol, arg_params: dict, aux_params: dict, input_dtypes: Any = None,
                  target_dtype: Any = "float16", target_dtype_ops: Any = None, fp32_ops: Any = None,
                  conditional_fp32_ops: Any = None, excluded_sym_names: Any = None,
                  cast_optional_params: bool = False, *, cast_params_offline: bool | None = None) -> tuple:
    """``(symbol, arg_params, aux_params)`` of the mixed-precision model; parameters the new graph
    stores in low precision come back cast.

    ``input_dtypes`` (a dict of data input name to dtype, as in later MXNet) may be left out; a
    dtype given in its place (MXNet 2.0.0b1's positional ``target_dtype``) is taken as the target.
    """
    caller = "amp.convert_model"
    if input_dtypes is not None and _dtype_like(input_dtypes):
        input_dtypes, target_dtype = None, input_dtypes
    if not isinstance(sym, Symbol):
        raise AMPUsageError(f"{caller}: First argument to convert_model should be Symbol, got {type(sym).__name__}")
    for what, value in (("Second", arg_params), ("Third", aux_params)):
        if not isinstance(value, dict):
            raise AMPUsageError(f"{caller}: {what} argument to convert_model should be a dict of name to "
                                f"ndarray, got {type(value).__name__}")
    if input_dtypes is not None and not isinstance(input_dtypes, dict):
        raise MXNetTypeError(f"{caller}: input_dtypes must be a dict of input name to dtype, got "
                             f"{type(input_dtypes).__name__}")
    params = set(arg_params) | set(aux_params)
    data_names = list(input_dtypes) if input_dtypes else [n for n in sym.list_inputs() if n not in params]
    converted = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                               excluded_sym_names, data_names, cast_optional_params,
                               cast_params_offline=cast_params_offline)
    stored = _stored_dtypes(converted)
    new_args = {k: _cast_value(v, stored.get(k)) for k, v in arg_params.items()}
    new_aux = {k: _cast_value(v, stored.get(k)) for k, v in aux_params.items()}
    return converted, new_args, new_aux


def _cached_entry(block: HybridBlock, data_example: Any) -> Any:
    if data_example is not None:
        examples = list(data_example) if isinstance(data_example, (list, tuple)) else [data_example]
        if not block._active:
            block.hybridize()
        with autograd.predict_mode():
            block(*examples)
        wanted = tuple((tuple(e.shape), onp.dtype(e.dtype)) for e in examples)
        for (signature, training), entry in block._cache.programs():
            if not training and tuple((tuple(s), onp.dtype(d)) for s, d in signature) == wanted:
                return entry
    if not block._cache:
        raise MXNetError(f"amp.convert_hybrid_block: {type(block).__name__} has no graph yet; please first call "
                         "block.hybridize() and then run forward with this block at least once (or pass "
                         "data_example)")
    return block._cache.programs()[-1][1]


def convert_hybrid_block(block: HybridBlock, data_example: Any = None, target_dtype: Any = "float16",
                         target_dtype_ops: Any = None, fp32_ops: Any = None, conditional_fp32_ops: Any = None,
                         excluded_sym_names: Any = None, device: Any = None, cast_params_offline: bool = False,
                         *, cast_optional_params: bool | None = None) -> SymbolBlock:
    """A ``SymbolBlock`` running ``block``'s graph in mixed precision (for inference).

    The graph is the one traced for ``data_example`` (an array or a list of arrays); without it the
    block must have been hybridized and called already (MXNet 2.0.0b1's way; a dtype passed in
    ``data_example``'s place is taken as ``target_dtype``).  Parameters are copied, not shared.
    """
    caller = "amp.convert_hybrid_block"
    if data_example is not None and _dtype_like(data_example):
        data_example, target_dtype = None, data_example
    if not isinstance(block, HybridBlock):
        raise AMPUsageError(f"{caller}: block input should be a HybridBlock, got {type(block).__name__}")
    target_dtype_of(target_dtype, caller)
    entry = _cached_entry(block, data_example)
    offline = cast_params_offline if cast_optional_params is None else cast_optional_params
    converted = convert_symbol(entry.symbol, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                               excluded_sym_names, list(entry.data_names), cast_params_offline=offline)
    device = device or current_device()
    values = block.collect_params()
    aux = set(converted.list_auxiliary_states())
    stored = _stored_dtypes(converted)
    params = {}
    for name in converted.list_inputs():
        if name in entry.data_names:
            continue
        source = values[name]
        param = Parameter(name, grad_req="null" if name in aux else source.grad_req,
                          dtype=stored.get(name, source.dtype))
        param.set_data(source.data().copyto(device))  # set_data casts to the parameter's dtype
        params[name] = param
    return SymbolBlock(converted, [var(n) for n in entry.data_names], params=params)


# ----------------------------------------------------------------------------- the tables

def _table(target_dtype: Any, caller: str) -> tuple:
    target = target_dtype_of(target_dtype, caller)
    return target, (lists.symbol_bf16 if target == BFLOAT16 else lists.symbol_fp16)


def list_lp16_ops(target_dtype: Any) -> list:
    """Ops run in ``target_dtype`` by default."""
    target, table = _table(target_dtype, "amp.list_lp16_ops")
    return table.BF16_FUNCS if target == BFLOAT16 else table.FP16_FUNCS


def list_fp32_ops(target_dtype: Any) -> list:
    """Ops given float32 inputs by default."""
    return _table(target_dtype, "amp.list_fp32_ops")[1].FP32_FUNCS


def list_lp16_fp32_ops(target_dtype: Any) -> list:
    """Ops that run in whichever float dtype reaches them."""
    target, table = _table(target_dtype, "amp.list_lp16_fp32_ops")
    return table.BF16_FP32_FUNCS if target == BFLOAT16 else table.FP16_FP32_FUNCS


def list_conditional_fp32_ops(target_dtype: Any) -> list:
    """``(op, parameter, values)``: ops given float32 inputs when the parameter has one of the values."""
    return _table(target_dtype, "amp.list_conditional_fp32_ops")[1].CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype: Any) -> list:
    """Ops whose inputs are cast to the widest float dtype among them."""
    return _table(target_dtype, "amp.list_widest_type_cast")[1].WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype: Any) -> list:
    """Output layers that take the loss scale in their ``grad_scale``."""
    return _table(target_dtype, "amp.list_loss_output_functions")[1].LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype: Any) -> dict | None:
    """For bfloat16: op -> per-input list, a non-empty entry keeping that input out of the cast
    (None for float16, as in MXNet)."""
    target, table = _table(target_dtype, "amp.list_lp16_use_fp32_params")
    return table.BF16_USE_FP32_PARAMS if target == BFLOAT16 else None

