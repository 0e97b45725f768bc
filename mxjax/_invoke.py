"""The one invoke path: every op of every front-end (``mx.np``, ``mx.npx``, ``mx.nd``, NDArray's
operators) ends in :func:`invoke`.

With no mode active the op is recorded into this thread's bulk segment (``graph.bulk``),
which runs as one program when a value is read; with bulk execution off, or for an op that
cannot be recorded, it is a cached ``jax.jit`` call and JAX's asynchronous dispatch carries
the work; an input with pending engine work sends it through the engine.  Higher layers
(autograd, deferred compute) install a handler (:func:`set_handler`); this module never
imports them, nor the array class, which registers itself (:func:`configure`).
"""
from __future__ import annotations

import contextvars
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from . import _config
from . import engine as _engine
from .base import MXNetError, MXNetIndexError, MXNetTypeError, MXNetValueError
from .graph import bulk as _bulk
from .graph.lazy import Lazy
from .operator import OpDef

_swap_x64, _restore_x64 = _config.swap_x64, _config.restore_x64
_Tracer = jax.core.Tracer
_array_type: type = type(None)  # NDArray, once it registers (configure)


def configure(array_type: type) -> None:
    """Called once by the NDArray module: the array class ops take and give."""
    global _array_type
    _array_type = array_type
    _bulk.configure(array_type, op_error, lambda op, inputs, params: infer_outputs(op, _avals(inputs), params, inputs))
    _bulk.configure_methods(_handler, globals())


# A handler object with ``invoke(op, inputs, params, out_cls)``: set by autograd /
# deferred compute while they are active, ``None`` for plain imperative execution.
_handler: contextvars.ContextVar = contextvars.ContextVar("mxjax_invoke_handler", default=None)


def set_handler(handler: Any) -> contextvars.Token:
    """Install a dispatch handler (used by autograd and deferred compute); returns a reset token."""
    return _handler.set(handler)


def reset_handler(token: contextvars.Token) -> None:
    _handler.reset(token)


def current_handler() -> Any:
    return _handler.get()


_graph_probe: Any = lambda: False  # noqa: E731  (deferred compute installs its probe: set_graph_probe)


def set_graph_probe(probe: Any) -> None:
    """Installed by ``_deferred_compute``: ``probe()`` tells whether ops are being traced into a graph."""
    global _graph_probe
    _graph_probe = probe


def tracing_graph() -> bool:
    """Whether ops are being traced into a graph (deferred compute is on)."""
    return _graph_probe()


# Set by ``mxjax.profiler`` while it records operators: ``hook(_dispatch, op, inputs, params, out_cls)``
# times ``_dispatch(op, inputs, params, out_cls)``.  ``None`` (one global test per op) when off.
_profile_hook: Any = None


def invoke(op: OpDef, inputs: Sequence[Any], params: dict | None = None, out_cls: type | None = None) -> Any:
    """Run ``op`` on NDArrays/scalars; returns NDArray(s) of ``out_cls`` (default: the first input's class).

    The op runs with JAX's 64-bit types on for this thread (MXNet's int64/float64 arrays),
    restored after, so the user's own JAX code keeps JAX's defaults.  Under the user's own
    ``jax.jit``/``grad``/``vmap`` (traced inputs) the op follows that trace's 64-bit mode instead:
    one program cannot mix both.
    """
    if _profile_hook is not None:
        return _profile_hook(_dispatch, op, inputs, params, out_cls)
    handler = _handler.get()
    if handler is not None:
        return _invoke_handled(handler, op, inputs, params, out_cls)
    return invoke_eager(op, inputs, params, out_cls)


def _dispatch(op: OpDef, inputs: Sequence[Any], params: dict | None, out_cls: type | None) -> Any:
    """:func:`invoke` without the profiler test (what the profiler's hook times: the op runs now,
    not held back for bulk execution)."""
    handler = _handler.get()
    if handler is not None:
        return _invoke_handled(handler, op, inputs, params, out_cls)
    return run_now(op, inputs, params, out_cls)


def _invoke_handled(handler: Any, op: OpDef, inputs: Sequence[Any], params: dict | None,
                    out_cls: type | None) -> Any:
    """``handler.invoke`` (autograd, deferred compute) with 64-bit types on: it infers shapes or records."""
    previous = _swap_x64(True)
    try:
        return handler.invoke(op, inputs, params, out_cls)
    finally:
        _restore_x64(previous)


def invoke_eager(op: OpDef, inputs: Sequence[Any], params: dict | None = None,
                 out_cls: type | None = None) -> Any:
    """The imperative op: recorded into this thread's bulk segment (``graph.bulk``), which runs
    as one program when a value is read; or, where it cannot be recorded, run now."""
    segment = _bulk.current()
    if segment is not None:
        fn = op.bind(params)
        if getattr(fn, "pure", None) is not None:
            out = _bulk.record(segment, op, fn, inputs, params, out_cls or _class_of(inputs))
            if out is not None:
                return out
    return run_now(op, inputs, params, out_cls)


def invoke_on(device: Any, op: OpDef, inputs: Sequence[Any], params: dict | None = None,
              out_cls: type | None = None) -> Any:
    """:func:`invoke` for an op that makes new arrays on ``device`` (an ``mx.Device``): it runs at
    once with JAX's default device set to that one, so its results are made there.  (Held back
    for bulk execution, it would run later under whatever device JAX then defaults to.)"""
    with jax.default_device(device.jax_device):
        if _profile_hook is not None:
            return _profile_hook(_dispatch, op, inputs, params, out_cls)
        return _dispatch(op, inputs, params, out_cls)


def _class_of(inputs: Sequence[Any]) -> type:
    for x in inputs:
        if isinstance(x, _array_type):
            return type(x)
    return default_class()


def _avals(inputs: Sequence[Any]) -> list:
    return [jax.ShapeDtypeStruct(x._data.shape, x._data.dtype, weak_type=getattr(x._data, "weak_type", False))
            if isinstance(x, _array_type) else x for x in inputs]


def run_now(op: OpDef, inputs: Sequence[Any], params: dict | None = None, out_cls: type | None = None) -> Any:
    """Compute now (JAX dispatch is asynchronous) and wrap the outputs.

    If an input still has engine work pending (a host write, a failure), the op
    goes onto the engine instead, ordered after that work: see :func:`_invoke_on_engine`.
    """
    datas = []
    traced = False  # an input of the user's own jax transformation: keep its 64-bit mode
    for x in inputs:
        if isinstance(x, _array_type):
            var = x._var
            if var is not None:
                if type(var) is _bulk.Pending:
                    x.to_jax()
                elif var.pending or var.exception is not None:
                    return _invoke_on_engine(op, inputs, params, out_cls)
            data = x._data
            if isinstance(data, _Tracer):
                traced = True
            datas.append(data)
            if out_cls is None:
                out_cls = type(x)
        else:
            if isinstance(x, _Tracer):
                traced = True
            datas.append(x)
    previous = _swap_x64(True) if not traced else None
    try:
        out = op.bind(params)(*datas)
    except MXNetError:
        raise
    except Exception as err:  # JAX/XLA errors become MXNetError naming the op and inputs
        raise op_error(op, inputs, params, err) from None
    finally:
        if not traced:
            _restore_x64(previous)
    return wrap_outputs(out, out_cls or default_class())


@_config.with_x64  # infers the outputs now; ``run`` sets the scope again where the engine runs it
def _invoke_on_engine(op: OpDef, inputs: Sequence[Any], params: dict | None, out_cls: type | None) -> Any:
    """Push ``op`` onto the engine, reading its inputs' vars and writing fresh output vars.

    The outputs exist at once with their inferred shape and dtype (a
    ``ShapeDtypeStruct`` stands in for the buffer); their values arrive when the
    engine runs the op.  An input var holding a failure makes the op inherit it:
    the error is re-raised by the next wait on an output, as in MXNet.
    """
    arrays = [x for x in inputs if isinstance(x, _array_type)]
    out_cls = out_cls or type(arrays[0])
    if any(isinstance(x._var, Lazy) for x in arrays):  # lazy arrays used eagerly: compute them first
        for x in arrays:
            x.to_jax()
        return run_now(op, inputs, params, out_cls)
    if op.dynamic_shape:  # the output shape needs the values: wait for them
        for x in arrays:
            x.to_jax()
        return run_now(op, [x.detach() if isinstance(x, _array_type) else x for x in inputs], params, out_cls)
    outs = wrap_outputs(infer_outputs(op, _avals(inputs), params, inputs), out_cls)
    results = outs if isinstance(outs, tuple) else (outs,)
    for r in results:
        r._var = _engine.new_variable()
    compiled = op.bind(params)

    def run() -> None:  # on an engine thread, or later at a bulk flush: set the 64-bit scope again
        datas = [settled(x._data) if isinstance(x, _array_type) else x for x in inputs]
        previous = _swap_x64(True)
        try:
            out = compiled(*datas)
        except MXNetError:
            raise
        except Exception as err:
            raise op_error(op, inputs, params, err) from None
        finally:
            _restore_x64(previous)
        for r, data in zip(results, out if isinstance(out, (tuple, list)) else (out,)):
            r._set_data(data)

    read_vars = list({id(x.engine_var): x.engine_var for x in arrays}.values())
    _engine.push_sync(run, const_vars=read_vars, mutate_vars=[r._var for r in results], name=op.name)
    return outs


def settled(data: Any) -> Any:
    """``data``, or zeros in its place when the op that should have written it never ran (it
    inherited a failure that has since been reported and cleared: MXNet leaves such memory
    uninitialised; mxjax gives zeros rather than a placeholder no op can read)."""
    if isinstance(data, jax.ShapeDtypeStruct):
        with _config.x64():
            return jnp.zeros(data.shape, data.dtype)
    return data


def infer_outputs(op: OpDef, avals: Sequence[Any], params: dict | None, inputs: Sequence[Any]) -> Any:
    """The op's output ShapeDtypeStructs, with errors named after the op and its inputs."""
    try:
        return op.eval_shape(*avals, **(params or {}))
    except MXNetError:
        raise
    except Exception as err:
        raise op_error(op, inputs, params, err) from None


def wrap_outputs(out: Any, cls: type) -> Any:
    if isinstance(out, (tuple, list)):
        return tuple(cls._wrap(o) for o in out)
    return cls._wrap(out)


def op_error(op: OpDef, inputs: Sequence[Any], params: dict | None, err: Exception) -> MXNetError:
    """An ``MXNetError`` (of the builtin kind matching ``err``) naming the op, input shapes and the cause."""
    described = ", ".join(_describe(x) for x in inputs)
    message = str(err).split("\n--------------------")[0].strip()
    text = f"{op.name}: {message} (inputs: {described}"
    text += f"; params: {params})" if params else ")"
    if isinstance(err, IndexError):
        return MXNetIndexError(text)
    if "ncompatible shapes for broadcasting" in message:  # say it as NumPy does, whatever JAX's path
        shapes = " ".join(str(tuple(getattr(getattr(x, "_data", x), "shape", ()))) for x in inputs)
        return MXNetValueError(f"{op.name}: operands could not be broadcast together with shapes {shapes} "
                               f"(inputs: {described})")
    if isinstance(err, TypeError):
        # JAX reports shape mismatches as TypeError; NumPy calls them ValueError
        if "shape" in message:
            return MXNetValueError(text)
        return MXNetTypeError(text)
    if isinstance(err, ValueError):
        return MXNetValueError(text)
    return MXNetError(text)


def _describe(x: Any) -> str:
    data = getattr(x, "_data", x)
    shape, dtype = getattr(data, "shape", None), getattr(data, "dtype", None)
    if shape is None:
        return type(x).__name__ if x is not None else "None"
    return f"{tuple(shape)} {onp.dtype(dtype).name}"


class _DeferredComputeLazy(Lazy):
    """Deferred compute's marker: the array's graph entry (``_dc``) computes it."""

    def compute(self, array: "Any") -> Any:
        return array._dc.compute()


LAZY = _DeferredComputeLazy()
_default_class_box: list = []


def default_class() -> type:
    """``mx.np.ndarray`` when NumPy array semantics are on, else the legacy ``NDArray``."""
    if _config.is_np_array() and _default_class_box:
        return _default_class_box[0]
    return _array_type


def np_class() -> type:
    """``mx.np.ndarray`` (registered by ``mxjax.numpy``)."""
    return _default_class_box[0]


def set_np_class(cls: type) -> None:
    """Called once by ``mxjax.numpy`` to register ``mx.np.ndarray`` for NumPy mode."""
    _default_class_box[:] = [cls]
