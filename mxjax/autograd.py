"""Autograd (``mx.autograd``): record imperative ops on a tape, then walk it backward.

While ``record()`` is active, every op with an input that needs a gradient runs
through one cached, jit-compiled "forward with VJP" function, which returns the
outputs and JAX's VJP closure (a pytree of residuals).  The tape node keeps that
closure; ``backward`` applies it with another cached jitted call, so neither pass
re-traces anything and the forward is never recomputed.  A node is just a pure
function of arrays plus its VJP, so a hybridized block can be one node with one
compiled VJP.  With ``create_graph=True`` the backward pass is itself recorded
(each node's gradient becomes a recorded op), giving higher derivatives.  The tape
itself (nodes, deferred nodes of hybridized blocks, the fused backward) is in
``mxjax/_tape.py``; this module is the public API over it.
"""
from __future__ import annotations

import contextvars
import functools
import itertools
from typing import Any, Sequence

import jax.numpy as jnp

from . import _config, _tape
from .graph import ir
from ._tape import Leaf as _Leaf, Node as _Node, differentiable as _differentiable
from ._tape import recording as _tape_recording
from ._tape.backward import as_list as _as_list, head_gradients as _head_gradients, run_backward as _run_backward
from .base import MXNetError
from .base import MXCallbackList, c_array, c_array_buf, c_handle_array, check_call, string_types  # noqa: F401
from ._config import is_np_array  # noqa: F401  (mx.base names MXNet's autograd carries)
from .graph import bulk as _bulk
from ._ndarray import NDArray, _autograd_link
from ._invoke import current_handler, invoke_eager, reset_handler, set_handler
from .operator import OpDef
from .operator.naming import json_name

__all__ = [
    "record", "pause", "train_mode", "predict_mode", "is_recording", "is_training", "set_recording",
    "set_training", "mark_variables", "backward", "grad", "Function", "get_symbol", "pending_backward",
]

_recording = contextvars.ContextVar("mxjax_autograd_recording", default=False)
_GRAD_REQS = ("write", "add", "null")


# ----------------------------------------------------------------------------- modes

def is_recording() -> bool:
    return _recording.get()


def is_training() -> bool:
    return _config.is_training()


def set_recording(is_recording: bool) -> bool:  # noqa: A002  (MXNet's argument name)
    """Turn recording on or off for this thread; returns the previous state.

    An enclosing ``record()``/``pause()`` scope restores its own state on exit.
    """
    previous = _recording.get()
    _recording.set(bool(is_recording))
    if is_recording:
        set_handler(_RECORDER)
    elif current_handler() is _RECORDER:
        set_handler(None)
    return previous


def set_training(train_mode: bool) -> bool:  # noqa: A002
    """Turn training mode on or off for this thread; returns the previous state."""
    return _config.set_training(train_mode)


class _scope:  # noqa: N801  (used like the function it replaces; a class is cheaper than a generator)
    """Recording on/off (and optionally the training flag) for a ``with`` block."""

    __slots__ = ("recording", "training", "tokens")

    def __init__(self, recording: bool, training: bool | None) -> None:
        self.recording, self.training = recording, training

    def __enter__(self) -> None:
        self.tokens = (_recording.set(self.recording), set_handler(_RECORDER if self.recording else None),
                       None if self.training is None else _config.set_training_token(self.training))

    def __exit__(self, *exc: Any) -> None:
        rec_token, handler_token, training_token = self.tokens
        if training_token is not None:
            _config.reset_training_token(training_token)
        reset_handler(handler_token)
        _recording.reset(rec_token)


def record(train_mode: bool = True) -> Any:  # noqa: A002
    """Scope in which ops are recorded for ``backward`` (training mode on by default)."""
    return _scope(True, train_mode)


def pause(train_mode: bool = False) -> Any:  # noqa: A002
    """Scope in which nothing is recorded (inference mode by default)."""
    return _scope(False, train_mode)


def train_mode() -> Any:
    """Scope with training mode on, recording unchanged."""
    return _config.training(True)


def predict_mode() -> Any:
    """Scope with training mode off, recording unchanged."""
    return _config.training(False)


# ----------------------------------------------------------------------------- recording

class _Recorder:
    """The dispatch handler installed while recording: runs ops and puts them on the tape."""

    def invoke(self, op: OpDef, inputs: Sequence[Any], params: dict | None, out_cls: type | None) -> Any:
        for x in inputs:  # (a loop, not any(): this runs for every op while recording)
            if isinstance(x, NDArray) and x._ag is not None:
                break
        else:  # nothing to differentiate: run it, unless it reads a value of the open region
            if op.check is not None or op.dynamic_shape or not _tape_recording.reads_region(inputs):
                return invoke_eager(op, inputs, params, out_cls)
            return self._record(op, inputs, params, out_cls, False)  # (a detached value: no run forced)
        if not op.differentiable:
            return invoke_eager(op, inputs, params, out_cls)
        if op.check is not None:  # NumPy's value errors (out-of-range take indices) also while recording
            op.check(*(x.to_jax() if isinstance(x, NDArray) else x for x in inputs), **(params or {}))
        # with bulk execution on, a recorded op is deferred: the forward, the backward and an
        # optimizer update that follows run as one program (see _tape); a read runs it sooner
        return self._record(op, inputs, params, out_cls, True)

    @staticmethod
    def _record(op: OpDef, inputs: Sequence[Any], params: dict | None, out_cls: type | None,
                tracked: bool) -> Any:
        defer = _bulk.current() is not None
        if not params:
            return _tape.record((op, ()), op.compute, inputs, out_cls, op.name, op.dynamic_shape, defer, True,
                                tracked)
        key = (op, tuple(params.items()))
        fn = _BOUND.get(key)
        if fn is None:  # one function per op and parameters: the tape's caches are keyed by it anyway
            fn = _tape.bounded(_BOUND)[key] = functools.partial(op.compute, **params)
        return _tape.record(key, fn, inputs, out_cls, op.name, op.dynamic_shape, defer, True, tracked)

    def on_write(self, array: NDArray) -> None:
        raise MXNetError(
            "in-place writes (x[...] = v, x += v, out=) to an array that autograd is tracking are not "
            "supported while recording; compute a new array instead")


_RECORDER = _Recorder()
_BOUND: dict = {}  # (op, parameters) -> op.compute with the parameters bound
_bulk.configure_tape(_RECORDER, vars(_tape_recording), _BOUND)  # (operators and functions reach the tape in C)


# ----------------------------------------------------------------------------- variables

def _drop_grad(array: NDArray) -> None:
    if isinstance(array._ag, _Leaf):
        array._ag = None


@_config.with_x64
def _attach_grad(array: NDArray, grad_req: str = "write", stype: Any = None) -> None:
    if grad_req not in _GRAD_REQS:
        raise MXNetError(f"attach_grad: grad_req must be one of {_GRAD_REQS}, got {grad_req!r}")
    if stype not in (None, "default"):
        raise MXNetError(f"attach_grad: only dense gradients (stype='default') are supported, got {stype!r}")
    grad = None if grad_req == "null" else type(array)._wrap(jnp.zeros_like(array.to_jax()))
    array._ag = _Leaf(grad, grad_req)


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """Mark arrays as variables whose gradients go into the given buffers."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise MXNetError(f"mark_variables: got {len(variables)} variables, {len(gradients)} gradients and "
                         f"{len(grad_reqs)} grad_reqs; expected equal counts")
    for var, buf, req in zip(variables, gradients, grad_reqs):
        if req not in _GRAD_REQS:
            raise MXNetError(f"mark_variables: grad_req must be one of {_GRAD_REQS}, got {req!r}")
        if buf is not None and buf.shape != var.shape:
            raise MXNetError(f"mark_variables: gradient buffer shape {buf.shape} does not match "
                             f"the variable's shape {var.shape}")
        var._ag = _Leaf(buf, req)


def _grad_of(array: NDArray) -> NDArray | None:
    leaf = array._ag
    return leaf.grad if isinstance(leaf, _Leaf) else None


# ----------------------------------------------------------------------------- backward

@_config.with_x64
def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False, train_mode: bool = True) -> None:
    """Compute gradients of ``heads`` and store them in the variables' ``.grad`` (per ``grad_req``)."""
    heads = _as_list(heads)
    region = _tape.region_of(heads[0]) if len(heads) == 1 and not retain_graph else None
    if region is not None and _tape.defer_region_backward(region, heads[0],
                                                          _head_gradients(heads, head_grads, False)[0]):
        return  # the gradients are lazy results of one program, planned while recording
    with _scope(False, train_mode):
        leaves = _run_backward(heads, head_grads, retain_graph, create_graph=False, lazy=True)
    for leaf, value in leaves.values():
        if leaf.grad_req == "null" or leaf.grad is None:
            continue
        buffer = leaf.grad
        if value.dtype != buffer._data.dtype:
            value = value.astype(buffer._data.dtype)
        buffer._set_data(value if leaf.grad_req == "write" else buffer.to_jax() + value)
        leaf.fresh = True


def pending_backward(grads: Sequence[NDArray]) -> "tuple[Any, list[int]] | None":
    """The step boundary between ``backward`` and an optimizer update (an mxjax extension).

    When these gradient buffers are all lazy results of one backward pass that has not run yet,
    returns ``(backward, positions)``: ``backward.run(update=(key, fn, positions, weights, states,
    extra))`` runs it and ``fn(weights, grads, states, *extra) -> (new weights, new states)`` in
    ONE compiled program (cached by ``key``), donating the weights and states, and returns the
    new ones -- or None if the backward ran meanwhile (another thread read one of its results):
    the caller then updates with the gradients as they are.  ``Optimizer.update`` (and so
    ``Trainer.step``) use it, which makes forward, backward and update of a training step one XLA
    program.  None when the backward ran already, or the buffers come from several.
    """
    return _tape.pending_backward_of(list(grads))


@_config.with_x64
def grad(heads: Any, variables: Any, head_grads: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True) -> list:
    """Gradients of ``heads`` w.r.t. ``variables``, returned (not stored in ``.grad``).

    With ``create_graph=True`` the returned gradients are themselves recorded, so
    they can be differentiated again (second and higher derivatives).
    """
    single = isinstance(variables, NDArray)
    heads, variables = _as_list(heads), _as_list(variables)
    for i, var in enumerate(variables):
        if not isinstance(var, NDArray) or not isinstance(var._ag, _Leaf):
            raise MXNetError(f"grad: variable {i} is not marked for gradients; call attach_grad() on it first")
    retain = create_graph if retain_graph is None else retain_graph
    with _scope(create_graph, train_mode):
        leaves = _run_backward(heads, head_grads, retain, create_graph)
    out = []
    for i, var in enumerate(variables):
        found = leaves.get(id(var._ag))
        if found is None:
            raise MXNetError(f"grad: variable {i} (shape {var.shape}) is not on the path of the heads; "
                             "the heads do not depend on it")
        value = found[1]
        out.append(value if isinstance(value, NDArray) else type(var)._wrap(value))
    return out[0] if single else out


# ----------------------------------------------------------------------------- the tape as a graph

def get_symbol(x: NDArray) -> Any:
    """The recorded computation of ``x`` as a Symbol: variables ``var0, var1, ...`` for the marked arrays."""
    if not isinstance(x, NDArray) or not isinstance(x._ag, tuple):
        raise MXNetError("get_symbol: the array was not computed under autograd.record() from variables")
    built: dict[int, ir.Node] = {}
    names = itertools.count()

    def entry_of(value: Any, entry: Any) -> Any:
        if isinstance(entry, tuple):
            return (build(entry[0]), entry[1])
        key = id(entry) if entry is not None else id(value)
        if key not in built:  # a variable (marked array) or an untracked array used as an input
            built[key] = ir.Node("null", f"var{next(names)}")
        return (built[key], 0)

    def build(node: _Node) -> ir.Node:
        if id(node) in built:
            return built[id(node)]
        if not (isinstance(node.key, tuple) and isinstance(node.key[0], OpDef)):
            raise MXNetError(f"get_symbol: {node.name} (a custom Function or a gradient) has no graph form")
        op, params = node.key[0], dict(node.key[1])
        inputs, constants = [], []
        for slot, value in enumerate(node.inputs):
            if isinstance(value, NDArray):
                inputs.append(entry_of(value, node.entries[slot] if slot in node.diff else value._ag))
            elif value is not None:
                constants.append((slot, value))
        if constants:
            params["__constants__"] = tuple(constants)
        built[id(node)] = ir.Node(json_name(op), f"{op.name.lower().lstrip('_')}{node.seq}", params=params,
                                   inputs=inputs, num_outputs=len(node.out_avals))
        return built[id(node)]
    return ir.symbol_class()([(build(x._ag[0]), x._ag[1])])


# ----------------------------------------------------------------------------- custom functions

class Function:
    """A user-defined differentiable function: override ``forward`` and ``backward``.

    ``forward(*inputs)`` computes outputs from NDArrays (not recorded);
    ``backward(*output_grads)`` returns one gradient per input.  Call
    ``save_for_backward`` in ``forward`` to keep arrays for ``backward``::

        class Sigmoid(autograd.Function):
            def forward(self, x):
                y = 1 / (1 + np.exp(-x))
                self.save_for_backward(y)
                return y

            def backward(self, dy):
                y, = self.saved_tensors
                return dy * y * (1 - y)
    """

    def __init__(self) -> None:
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *arrays: Any) -> None:
        self.saved_tensors = arrays

    def forward(self, *inputs: Any) -> Any:
        raise MXNetError(f"{type(self).__name__} must define forward(self, *inputs)")

    def backward(self, *output_grads: Any) -> Any:
        raise MXNetError(f"{type(self).__name__} must define backward(self, *output_grads)")

    def __call__(self, *inputs: Any) -> Any:
        with _scope(False, None):
            outputs = self.forward(*inputs)
        if not is_recording():
            return outputs
        diff = tuple(i for i, x in enumerate(inputs) if _differentiable(x))
        if not diff:
            return outputs
        results = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        for r in results:
            if not isinstance(r, NDArray):
                raise MXNetError(f"{type(self).__name__}.forward must return NDArrays, got {type(r).__name__}")
        cls = type(results[0])
        function = self

        def custom(cts: list) -> tuple:
            wrapped = [c if isinstance(c, NDArray) else cls._wrap(c) for c in cts]
            grads = function.backward(*wrapped)
            grads = grads if isinstance(grads, (tuple, list)) else (grads,)
            if len(grads) != len(inputs):
                raise MXNetError(f"{type(function).__name__}.backward returned {len(grads)} gradients for "
                                 f"{len(inputs)} inputs")
            picked = [grads[i] for i in diff]
            return tuple(g if is_recording() else (g.to_jax() if isinstance(g, NDArray) else jnp.asarray(g))
                         for g in picked)

        avals = tuple((r.shape, r._data.dtype) for r in results)
        entries = tuple(x._ag if i in diff else None for i, x in enumerate(inputs))
        node = _Node(None, None, tuple(inputs), entries, diff, True, avals, len(results) > 1,
                     type(self).__name__, custom=custom)
        fresh = tuple(type(r)._wrap(r.to_jax()) for r in results)
        for i, r in enumerate(fresh):
            r._ag = (node, i)
        return fresh if isinstance(outputs, (tuple, list)) else fresh[0]


_autograd_link.attach_grad = _attach_grad
_autograd_link.drop_grad = _drop_grad
_autograd_link.grad_of = _grad_of
_autograd_link.backward = backward


def __getattr__(name: str) -> Any:
    """``mx.autograd.Symbol``: the Symbol class lives in a higher layer, which registers it in ``mxjax.graph.ir``."""
    if name == "Symbol":
        return ir.symbol_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
