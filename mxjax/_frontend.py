"""Builders that turn one registered op into a Python function of a front-end namespace.

``make_function("add", name="add", out_cls=ndarray)`` gives ``mx.np.add``: it maps
positional and keyword arguments onto the op's array inputs and parameters,
handles ``out=``/``ctx=``/``device=``, and calls the one :func:`invoke`.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import numpy as onp

from .base import MXNetTypeError, normalize_dtype
from .device import Device, current_device, needs_placing
from ._config import default_float_dtype
from ._rng import next_key
from ._ndarray import NDArray
from ._invoke import invoke, invoke_on, tracing_graph
from .graph.bulk import try_record
from .operator import OpDef, get_op

__all__ = ["make_function", "store_out", "create", "place", "listed"]

# Arguments every legacy (mx.nd / mx.sym) function accepts and ignores in imperative mode.
_LEGACY_IGNORED = ("name", "attr", "__layout__")


def make_function(op: str | OpDef, *, name: str, out_cls: Callable[[], type] | type,
                  positional: Sequence[str] | None = None, sequence_input: bool = True,
                  legacy: bool = False, defaults: dict[str, Any] | None = None,
                  module: str | None = None, note: str = "",
                  keywords: dict[str, str] | None = None, as_list: bool = False) -> Callable[..., Any]:
    """A front-end function for ``op``.

    positional: the order in which positional arguments fill inputs and parameters
    (default: array inputs, then parameters as the op declares them).
    sequence_input: for variadic ops, whether the arrays come as one sequence
    (``np.concatenate(seq)``) or as separate positional arguments (``nd.concat(a, b)``).
    defaults: parameter values this namespace uses when the caller gives none.
    keywords: this namespace's spellings of argument names (``{"x": "data"}`` for npx).
    as_list: several outputs as a list (:func:`listed`), as a legacy function gives them, for the few
    NumPy functions MXNet 2.0 makes lists (``np.broadcast_arrays``).
    """
    op = get_op(op) if isinstance(op, str) else op
    inputs = tuple(n for n in op.inputs if not (op.needs_key and n == "key")) if not op.variadic else ()
    order = tuple(positional) if positional is not None else (*inputs, *op.params)
    dtype_params = frozenset(k for k, p in op.params.items() if p.kind.startswith("dtype"))
    ignored = _LEGACY_IGNORED if legacy else ()
    fixed = dict(defaults or {})
    get_cls = out_cls if not isinstance(out_cls, type) else (lambda: out_cls)
    star = op.variadic and not sequence_input
    renames = dict(keywords or {})
    names_for_positional = order[1:] if op.variadic and not star and order and order[0] == op.inputs[0] \
        else order

    # the common call -- arrays positionally, nothing else -- skips the general binding below
    lead = 0
    while lead < len(inputs) and lead < len(order) and order[lead] == inputs[lead]:
        lead += 1
    fixed_params = _fixed_params(name, op, fixed, dtype_params)
    fast = (not op.variadic and not op.needs_key and fixed_params is not None
            and not {"out", "device", "ctx", *ignored} & set(fixed))
    fast_params = fixed_params or None
    fast_key = tuple(fast_params.items()) if fast_params else ()  # OpDef.bind's cache key
    tail_defaults = [tuple(op.input_defaults[k] for k in inputs[n:]) if all(
        k in op.input_defaults for k in inputs[n:]) else None for n in range(lead + 1)]

    # calls with parameters by keyword (``npx.activation(x, act_type="relu")``): their parameters,
    # bound and normalized once per set of keyword values (see _keyword_key)
    keyword_params: dict = {}
    cacheable = (not op.variadic and not op.needs_key and fixed_params is not None
                 and not {"out", "device", "ctx"} & set(fixed))
    uncached = frozenset(inputs) | dtype_params | {"out", "device", "ctx"}

    def function(*args: Any, out: NDArray | None = None, **kwargs: Any) -> Any:
        if out is None and len(args) <= lead and tail_defaults[len(args)] is not None:
            # arrays positionally: parameters fixed by the namespace, or bound before for these keywords
            if not kwargs:
                if fast:  # the common call, recorded in one C call where nothing asks for more
                    result = try_record(op, args + tail_defaults[len(args)], fast_params, fast_key, get_cls())
                    if result is not None:
                        return result
                known, params = fast, fast_params
            else:
                key = _keyword_key(len(args), kwargs) if cacheable else None
                found = keyword_params.get(key) if key is not None else None
                known = found is not None
                if known:
                    params, bind_key = found
            if known:
                arrays = [_from_list(a) if type(a) in (list, tuple) else a for a in args]
                arrays.extend(tail_defaults[len(args)])
                if not kwargs or not _makes_new(arrays, False):
                    if kwargs:  # as the common call above, with the parameters these keywords bound
                        result = try_record(op, tuple(arrays), params, bind_key, get_cls())
                        if result is not None:
                            return result
                    return invoke(op, arrays, params, get_cls())
        if op.variadic:
            if star:
                arrays, args = list(args), ()
            else:
                if not args:
                    raise TypeError(f"{name}() missing the sequence of arrays")
                arrays, args = list(args[0]), args[1:]
                order_ = order[1:] if order and order[0] == op.inputs[0] else order
        bound: dict[str, Any] = dict(fixed)
        names = order if not op.variadic or star else order_
        if len(args) > len(names):
            raise TypeError(f"{name}() takes at most {len(names)} positional arguments ({len(args)} given)")
        for key, value in zip(names, args):
            bound[key] = value
        for key, value in kwargs.items():
            key = renames.get(key, key)
            if key in bound and key not in fixed and key in names[:len(args)]:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            bound[key] = value
        out = bound.pop("out", out)  # NumPy lets out= come positionally
        device = bound.pop("device", None) or bound.pop("ctx", None)
        bound.pop("ctx", None)
        for key in ignored:
            bound.pop(key, None)
        if not op.variadic:
            arrays = []
            for key in inputs:
                if key in bound:
                    value = bound.pop(key)
                    arrays.append(_from_list(value) if type(value) in (list, tuple) else value)
                elif key in op.input_defaults:
                    arrays.append(op.input_defaults[key])
                else:
                    raise TypeError(f"{name}() missing required argument {key!r}")
        for key, value in bound.items():
            bound[key] = _param_value(name, op, dtype_params, key, value)
        if (cacheable and kwargs and out is None and device is None and len(args) <= lead
                and not uncached & {renames.get(k, k) for k in kwargs}):
            key = _keyword_key(len(args), kwargs)
            if key is not None:
                if len(keyword_params) >= 256:
                    keyword_params.clear()
                keyword_params[key] = (dict(bound), tuple(bound.items()))  # (with OpDef.bind's key for them)
        if op.needs_key:  # random ops draw the next key of the seeded stream
            arrays.insert(0, next_key())
        if device is None and not _makes_new(arrays, op.needs_key):
            result = invoke(op, arrays, bound or None, get_cls())
        else:
            result = create(op, arrays, bound or None, get_cls(), device)
        if out is not None:
            return store_out(out, result, name)
        return result

    if as_list or legacy and (callable(op.num_outputs) or op.num_outputs > 1):
        function = _listing(function)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (op.doc or "") + (f"\n\n{note}" if note else "")
    if module:
        function.__module__ = module
    function.op = op  # type: ignore[attr-defined]
    function.positional = names_for_positional  # type: ignore[attr-defined]
    function.keywords = renames  # type: ignore[attr-defined]
    return function


def listed(result: Any) -> Any:
    """Several outputs as a list, as MXNet's ``mx.nd`` and ``mx.npx`` functions give them
    (``nd.topk(x, ret_typ='both')``, ``npx.batch_norm(..., output_mean_var=True)``), and MXNet 2.0's
    ``np.meshgrid``, ``np.broadcast_arrays`` and ``np.atleast_*d`` of several arrays; NumPy's other
    functions keep NumPy's tuples (``np.nonzero``, ``np.unique``)."""
    return list(result) if type(result) is tuple else result


def _listing(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its several outputs :func:`listed`."""
    def listing(*args: Any, **kwargs: Any) -> Any:
        return listed(function(*args, **kwargs))
    return listing


_KEY_TYPES = (bool, int, str, type(None))


def _keyword_key(n_args: int, kwargs: dict) -> tuple | None:
    """A call's keyword arguments as a cache key of their bound parameters, or None when a value
    is not one to key by: only ints, bools, strings, None, non-zero non-NaN floats and tuples of
    those, keyed with their types (``True`` and ``1`` are equal but may mean different things;
    -0.0 equals 0.0 and NaN equals nothing)."""
    key: list = [n_args]
    for k, v in kwargs.items():
        kind = type(v)
        if kind is float:
            if v == 0.0 or v != v:
                return None
        elif kind is tuple:
            if not all(type(e) in _KEY_TYPES for e in v):
                return None
        elif kind not in _KEY_TYPES:
            return None
        key.append((k, kind, v))
    return tuple(key)


def _param_value(name: str, op: OpDef, dtype_params: frozenset, key: str, value: Any) -> Any:
    """A parameter value as the op takes it: lists become tuples, dtypes their names, arrays numbers."""
    if key not in op.params:
        raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
    if type(value) is list:
        return tuple(value)
    if key in dtype_params and value is not None:
        return normalize_dtype(value).name
    if isinstance(value, NDArray) and not isinstance(value, type):
        return value.item() if value.size == 1 else tuple(value.asnumpy().tolist())
    return value


def _fixed_params(name: str, op: OpDef, fixed: dict, dtype_params: frozenset) -> dict | None:
    """A namespace's fixed parameter values normalized once; None when one has to be normalized at
    each call (a dtype's name depends on the default dtype then) or is not a parameter of the op."""
    if any(k not in op.params or isinstance(v, NDArray) or (k in dtype_params and v is not None)
           for k, v in fixed.items()):
        return None
    return {k: _param_value(name, op, dtype_params, k, v) for k, v in fixed.items()}


def _from_list(values: Any) -> Any:
    """A nested list/tuple used as an array operand: floats get the default float dtype."""
    array = onp.asarray(values)
    if array.dtype == onp.float64:
        array = array.astype(default_float_dtype())
    return array


def store_out(out: Any, result: Any, name: str) -> Any:
    """Write ``result`` into the ``out=`` array(s) in place and return them."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise MXNetTypeError(f"{name}: out= must be a sequence of {len(result)} arrays")
        for o, r in zip(out, result):
            store_out(o, r, name)
        return out
    if not isinstance(out, NDArray):
        raise MXNetTypeError(f"{name}: out= must be an NDArray, got {type(out).__name__}")
    out._assign(result, name)
    return out


def _makes_new(arrays: Sequence[Any], keyed: bool) -> bool:
    """Whether an op's inputs are Python scalars only (its random key aside): it makes new arrays,
    which go to the current device rather than where its inputs are."""
    for a in (arrays[1:] if keyed else arrays):  # (a loop: the generator form costs 0.3 us more per call)
        if a is not None and type(a) not in _SCALARS:
            return False
    return True


_SCALARS = (bool, int, float, complex)


def create(op: OpDef, inputs: Sequence[Any], params: dict | None, cls: type, device: Any = None) -> Any:
    """Run ``op``, which makes new arrays, so that they are on ``device`` (``ctx=``/``device=``),
    or, without one, on the current device -- where JAX would put them elsewhere (JAX's default
    device is a GPU where there is one; MXNet's is ``cpu(0)``), it is told where."""
    if device is None:
        device = current_device()
        if not needs_placing(device):
            return invoke(op, inputs, params, cls)
        return invoke_on(device, op, inputs, params, cls)
    device = device if isinstance(device, Device) else Device(device)
    return place(invoke_on(device, op, inputs, params, cls), device)


def place(result: Any, device: Device | str) -> Any:
    """Commit op output(s) to ``device`` (creation functions' ``ctx=``/``device=``); values traced
    into a graph (Symbols, deferred compute) are left as they are."""
    device = device if isinstance(device, Device) else Device(device)
    if isinstance(result, tuple):
        return tuple(place(r, device) for r in result)
    if not isinstance(result, NDArray) or tracing_graph():
        return result
    target = device.jax_device
    data = result.to_jax()
    if target not in data.devices():
        result._data = jax.device_put(data, target)
    return result
