"""``mx.nd`` and ``mx.nd.contrib`` front ends of the optimizer-update operators.

Each calls the registered op once, writes the new values of the states the op mutates back
into the caller's arrays (MXNet's ``FMutateInputs``: ``mom``, ``mean``/``var``, ``weight32``,
...), and writes the new weight(s) into ``out=`` (usually the weight itself) or returns them.
The contrib functions keep MXNet 2's Python signatures (lists of weights, ``rescale_grad`` as a
number or an NDArray, ``size``/``num_tensors`` defaulting to the list length).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import jax.numpy as jnp

from .._frontend import store_out
from .._ndarray import NDArray
from .._invoke import current_handler, invoke
from ..base import MXNetTypeError
from ..operator import OpDef, get_op
from ..operator.optimizer_update import UPDATES

__all__ = [
    "sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update", "nag_mom_update", "mp_nag_mom_update",
    "adam_update", "ftml_update", "ftrl_update", "rmsprop_update", "rmspropalex_update", "signsgd_update",
    "signum_update", "lamb_update_phase1", "lamb_update_phase2", "mp_lamb_update_phase1", "mp_lamb_update_phase2",
    "multi_sgd_update", "multi_sgd_mom_update", "multi_mp_sgd_update", "multi_mp_sgd_mom_update",
    "preloaded_multi_sgd_update", "preloaded_multi_sgd_mom_update", "preloaded_multi_mp_sgd_update",
    "preloaded_multi_mp_sgd_mom_update", "all_finite", "multi_all_finite", "multi_sum_sq", "multi_lars",
    "reset_arrays",
]
CONTRIB = [
    "adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update", "adabelief_update",
    "mp_adabelief_update", "multi_adabelief_update", "multi_mp_adabelief_update", "multi_lamb_update",
    "multi_mp_lamb_update", "multi_lans_update", "multi_mp_lans_update",
]
_IGNORED = ("name", "attr")
_NDMOD, _CONTRIBMOD = "mxjax.ndarray", "mxjax.ndarray.contrib"

# Scalar hyper-parameters that change from step to step (a schedule's learning rate, Adam's step
# count): imperative calls pass them to the compiled update as runtime inputs, so a new value does
# not compile a new program (the registry compiles one program per parameter values).  Parameters
# the rules branch on (clip_gradient, bounds, bias_correction, counts) stay compile-time.
_TRACED = frozenset({"lr", "wd", "rescale_grad", "momentum", "beta1", "beta2", "epsilon", "t", "eta", "lamda1",
                     "beta", "rho", "wd_lh"})
_KERNELS: dict[tuple, OpDef] = {}


def _kernel(op: OpDef, traced: tuple[str, ...]) -> OpDef:
    """An unregistered twin of ``op`` taking the ``traced`` parameters as trailing scalar inputs."""
    kernel = _KERNELS.get((op.name, traced))
    if kernel is None:
        compute, count = op.compute, len(traced)

        def run(*data: Any, **static: Any) -> Any:
            return compute(*data[:-count], **static, **dict(zip(traced, data[-count:])))
        kernel = _KERNELS[(op.name, traced)] = OpDef(op.name, run, num_outputs=op.num_outputs,
                                                     differentiable=False, doc=op.doc)
    return kernel


def _invoke(op: OpDef, arrays: list, params: dict) -> Any:
    """``invoke``; when no graph is being recorded, with the step-varying scalars as runtime inputs."""
    traced = tuple(sorted(k for k, v in params.items()
                          if k in _TRACED and type(v) in (float, int) and type(v) is not bool))
    if not traced or current_handler() is not None:  # recorded graphs keep MXNet's attributes
        return invoke(op, arrays, params, NDArray)
    static = {k: v for k, v in params.items() if k not in traced}
    return invoke(_kernel(op, traced), arrays + [params[k] for k in traced], static, NDArray)


def run_update(op_name: str, arrays: Sequence[Any], params: dict, out: Any, name: str) -> Any:
    """Invoke an update op, write its mutated states back, store or return the new weight(s)."""
    op, spec = get_op(op_name), UPDATES[op_name]
    for i, x in enumerate(arrays):
        if not isinstance(x, NDArray):
            raise MXNetTypeError(f"{name}: input {i} must be an NDArray, got {type(x).__name__}")
    results = _invoke(op, list(arrays), params)
    results = results if isinstance(results, tuple) else (results,)
    groups = spec.groups(len(arrays))
    weights, states = results[:groups], results[groups:]
    for slot, value in zip(spec.mutated_slots(len(arrays)), states, strict=True):
        arrays[slot]._assign(value, name)
    if out is not None:
        return store_out(list(out) if isinstance(out, tuple) else out,
                         weights if isinstance(out, (list, tuple)) else weights[0], name)
    return weights[0] if spec.counted is None else list(weights)


def _bind(name: str, op_name: str, module: str) -> Callable[..., Any]:
    """``f(*arrays, out=None, **params)`` with the op's array inputs by position or by name."""
    op = get_op(op_name)
    order = (*op.inputs, *op.params)

    def function(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        for key in _IGNORED:
            kwargs.pop(key, None)
        if op.variadic:
            arrays, params = list(args), kwargs
        else:
            if len(args) > len(order):
                raise TypeError(f"{name}() takes at most {len(order)} positional arguments ({len(args)} given)")
            bound = dict(zip(order, args))
            for key, value in kwargs.items():
                if key in bound:
                    raise TypeError(f"{name}() got multiple values for argument {key!r}")
                bound[key] = value
            missing = [k for k in op.inputs if k not in bound]
            if missing:
                raise TypeError(f"{name}() missing required array argument(s) {missing}")
            arrays = [bound.pop(k) for k in op.inputs]
            params = bound
        op.check_params(params)
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        return run_update(op_name, arrays, params, out, name)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = op.doc + "\n\nStates are updated in place; ``out=`` receives the new weight."
    function.__module__ = module
    function.op = op  # type: ignore[attr-defined]
    return function


sgd_update = _bind("sgd_update", "sgd_update", _NDMOD)
sgd_mom_update = _bind("sgd_mom_update", "sgd_mom_update", _NDMOD)
mp_sgd_update = _bind("mp_sgd_update", "mp_sgd_update", _NDMOD)
mp_sgd_mom_update = _bind("mp_sgd_mom_update", "mp_sgd_mom_update", _NDMOD)
nag_mom_update = _bind("nag_mom_update", "nag_mom_update", _NDMOD)
mp_nag_mom_update = _bind("mp_nag_mom_update", "mp_nag_mom_update", _NDMOD)
adam_update = _bind("adam_update", "adam_update", _NDMOD)
ftml_update = _bind("ftml_update", "ftml_update", _NDMOD)
ftrl_update = _bind("ftrl_update", "ftrl_update", _NDMOD)
rmsprop_update = _bind("rmsprop_update", "rmsprop_update", _NDMOD)
rmspropalex_update = _bind("rmspropalex_update", "rmspropalex_update", _NDMOD)
signsgd_update = _bind("signsgd_update", "signsgd_update", _NDMOD)
signum_update = _bind("signum_update", "signum_update", _NDMOD)
lamb_update_phase1 = _bind("lamb_update_phase1", "lamb_update_phase1", _NDMOD)
lamb_update_phase2 = _bind("lamb_update_phase2", "lamb_update_phase2", _NDMOD)
mp_lamb_update_phase1 = _bind("mp_lamb_update_phase1", "mp_lamb_update_phase1", _NDMOD)
mp_lamb_update_phase2 = _bind("mp_lamb_update_phase2", "mp_lamb_update_phase2", _NDMOD)
multi_sgd_update = _bind("multi_sgd_update", "multi_sgd_update", _NDMOD)
multi_sgd_mom_update = _bind("multi_sgd_mom_update", "multi_sgd_mom_update", _NDMOD)
multi_mp_sgd_update = _bind("multi_mp_sgd_update", "multi_mp_sgd_update", _NDMOD)
multi_mp_sgd_mom_update = _bind("multi_mp_sgd_mom_update", "multi_mp_sgd_mom_update", _NDMOD)
preloaded_multi_sgd_update = _bind("preloaded_multi_sgd_update", "preloaded_multi_sgd_update", _NDMOD)
preloaded_multi_sgd_mom_update = _bind("preloaded_multi_sgd_mom_update", "preloaded_multi_sgd_mom_update", _NDMOD)
preloaded_multi_mp_sgd_update = _bind("preloaded_multi_mp_sgd_update", "preloaded_multi_mp_sgd_update", _NDMOD)
preloaded_multi_mp_sgd_mom_update = _bind("preloaded_multi_mp_sgd_mom_update",
                                          "preloaded_multi_mp_sgd_mom_update", _NDMOD)


def _finite(op_name: str, arrays: list, params: dict, out: Any, name: str) -> Any:
    """``all_finite``/``multi_all_finite``: with ``init_output=False`` the result is ANDed into ``out``
    (MXNet then only ever writes 0 into it), so chunks of arrays can share one flag."""
    params = {k: v for k, v in params.items() if k not in _IGNORED}
    result = invoke(get_op(op_name), arrays, params, NDArray)
    if out is None:
        return result
    if not params.get("init_output", True):
        result = result * (out != 0).astype(result.dtype).reshape(result.shape)
    return store_out(out, result, name)


def all_finite(data: Any = None, init_output: bool = True, out: Any = None, **kwargs: Any) -> Any:
    """``[1.]`` when every element of ``data`` is finite, else ``[0.]`` (float32)."""
    return _finite("all_finite", [data], dict(kwargs, init_output=init_output), out, "all_finite")


def multi_all_finite(*data: Any, num_arrays: int = 1, init_output: bool = True, out: Any = None,
                     **kwargs: Any) -> Any:
    """``all_finite`` over ``num_arrays`` arrays."""
    return _finite("multi_all_finite", list(data), dict(kwargs, num_arrays=num_arrays, init_output=init_output),
                   out, "multi_all_finite")


def _plain(name: str) -> Callable[..., Any]:
    op = get_op(name)

    def function(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        for key in _IGNORED:
            kwargs.pop(key, None)
        arrays = list(args)
        if not op.variadic:
            arrays += [kwargs.pop(k) for k in op.inputs[len(args):] if k in kwargs]
        result = invoke(op, arrays, kwargs, NDArray)
        return result if out is None else store_out(out, result, name)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = op.doc
    function.__module__ = _NDMOD
    function.op = op  # type: ignore[attr-defined]
    return function


multi_sum_sq = _plain("multi_sum_sq")
multi_lars = _plain("multi_lars")


def reset_arrays(*data: Any, num_arrays: int | None = None, **kwargs: Any) -> list:
    """Set every array to zero in place; returns an empty list (MXNet's op has no outputs)."""
    for key in _IGNORED:
        kwargs.pop(key, None)
    zeros = invoke(get_op("reset_arrays"), list(data), dict(kwargs, num_arrays=num_arrays), NDArray)
    for array, zero in zip(data, zeros if isinstance(zeros, tuple) else (zeros,), strict=True):
        array._assign(zero, "reset_arrays")
    return []


for _f in (all_finite, multi_all_finite, reset_arrays):
    _f.__module__ = _NDMOD
    _f.op = get_op(_f.__name__)  # type: ignore[attr-defined]


# -- mx.nd.contrib ---------------------------------------------------------------------------------
def _scale_array(rescale_grad: Any, like: NDArray) -> NDArray:
    """MXNet 2's ``_get_rescale_grad``: a number becomes a one-element float32 array."""
    if isinstance(rescale_grad, NDArray):
        return rescale_grad
    return type(like)._wrap(jnp.full((1,), rescale_grad, jnp.float32))


def _flatten(*lists: Sequence[Any]) -> list:
    return [x for group in zip(*lists, strict=True) for x in group]


def _clean(kwargs: dict) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items() if k not in _IGNORED}


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
                 clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW step (``_adamw_update``); mean and var are updated in place, nothing changes when
    ``rescale_grad`` is not finite."""
    params = _clean(dict(kwargs, lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                         clip_gradient=clip_gradient))
    return run_update("_adamw_update", [weight, grad, mean, var, _scale_array(rescale_grad, weight)], params, out,
                      "adamw_update")


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                    wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """``adamw_update`` through the float32 master ``weight32`` (updated in place)."""
    params = _clean(dict(kwargs, lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                         clip_gradient=clip_gradient))
    return run_update("_mp_adamw_update", [weight, grad, mean, var, weight32, _scale_array(rescale_grad, weight)],
                      params, out, "mp_adamw_update")


def adabelief_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
                     clip_gradient=-1, out=None, name=None, **kwargs):
    """AdaBelief step (``_adabelief_update``); mean and var are updated in place."""
    params = _clean(dict(kwargs, lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                         clip_gradient=clip_gradient))
    return run_update("_adabelief_update", [weight, grad, mean, var, _scale_array(rescale_grad, weight)], params,
                      out, "adabelief_update")


def mp_adabelief_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                        epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """``adabelief_update`` through the float32 master ``weight32`` (updated in place)."""
    params = _clean(dict(kwargs, lr=lr, eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                         clip_gradient=clip_gradient))
    return run_update("_mp_adabelief_update",
                      [weight, grad, mean, var, weight32, _scale_array(rescale_grad, weight)], params, out,
                      "mp_adabelief_update")


def _multi_adam(op_name: str, name: str, lists: list, rescale_grad: Any, lrs, wds, etas, out, size, kwargs):
    size = size or len(lists[0])
    arrays = _flatten(*lists) + [_scale_array(rescale_grad, lists[0][0])]
    params = _clean(dict(kwargs, lrs=lrs, wds=wds, etas=etas, num_weights=size))
    return run_update(op_name, arrays, params, out, name)


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0,
                       **kwargs):
    """``adamw_update`` of every weight in the lists, in one op."""
    return _multi_adam("_multi_adamw_update", "multi_adamw_update", [weights, grads, mean, var], rescale_grad,
                       lrs, wds, etas, out, size, kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None, name=None,
                          size=0, **kwargs):
    """``mp_adamw_update`` of every weight in the lists, in one op."""
    return _multi_adam("_multi_mp_adamw_update", "multi_mp_adamw_update", [weights, grads, mean, var, weights32],
                       rescale_grad, lrs, wds, etas, out, size, kwargs)


def multi_adabelief_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None, name=None, size=0,
                           **kwargs):
    """``adabelief_update`` of every weight in the lists, in one op."""
    return _multi_adam("_multi_adabelief_update", "multi_adabelief_update", [weights, grads, mean, var],
                       rescale_grad, lrs, wds, etas, out, size, kwargs)


def multi_mp_adabelief_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, out=None,
                              name=None, size=0, **kwargs):
    """``mp_adabelief_update`` of every weight in the lists, in one op."""
    return _multi_adam("_multi_mp_adabelief_update", "multi_mp_adabelief_update",
                       [weights, grads, mean, var, weights32], rescale_grad, lrs, wds, etas, out, size, kwargs)


def _multi_trust(op_name: str, name: str, lists: list, step_count, lrs, wds, out, num_tensors, kwargs):
    num_tensors = num_tensors or len(lists[0])
    params = _clean(dict(kwargs, step_count=step_count, learning_rates=lrs, wds=wds, num_tensors=num_tensors))
    return run_update(op_name, _flatten(*lists), params, out, name)


def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0, **kwargs):
    """LAMB of every weight in the lists at its ``step_count``; mean and var updated in place."""
    return _multi_trust("_multi_lamb_update", "multi_lamb_update", [weights, grads, mean, var], step_count, lrs,
                        wds, out, num_tensors, kwargs)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds, out=None, num_tensors=0,
                         **kwargs):
    """``multi_lamb_update`` through float32 masters (updated in place)."""
    return _multi_trust("_multi_mp_lamb_update", "multi_mp_lamb_update", [weights, grads, mean, var, weights32],
                        step_count, lrs, wds, out, num_tensors, kwargs)


def multi_lans_update(weights, grads, mean, var, step_count, lrs, wds, out=None, num_tensors=0, **kwargs):
    """LANS of every weight in the lists at its ``step_count``; mean and var updated in place."""
    return _multi_trust("_multi_lans_update", "multi_lans_update", [weights, grads, mean, var], step_count, lrs,
                        wds, out, num_tensors, kwargs)


def multi_mp_lans_update(weights, grads, mean, var, weights32, step_count, lrs, wds, out=None, num_tensors=0,
                         **kwargs):
    """``multi_lans_update`` through float32 masters (updated in place)."""
    return _multi_trust("_multi_mp_lans_update", "multi_mp_lans_update", [weights, grads, mean, var, weights32],
                        step_count, lrs, wds, out, num_tensors, kwargs)


for _f in (adamw_update, mp_adamw_update, adabelief_update, mp_adabelief_update, multi_adamw_update,
           multi_mp_adamw_update, multi_adabelief_update, multi_mp_adabelief_update, multi_lamb_update,
           multi_mp_lamb_update, multi_lans_update, multi_mp_lans_update):
    _f.__module__ = _CONTRIBMOD
    _f.op = get_op("_" + _f.__name__)  # type: ignore[attr-defined]
