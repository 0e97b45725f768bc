"""``Executor``: a bound Symbol, run as one ``jax.jit``-compiled program per input signature.

``forward(is_train=True)`` runs the graph and, where arguments need gradients,
also keeps JAX's VJP closure from the same compiled call; ``backward`` applies it
in a second compiled call and writes or adds into the gradient arrays.  Once a
``backward()`` with the default head gradients has followed a training forward,
later training forwards run forward and backward as ONE compiled program (as
``jax.jit(jax.value_and_grad(f))`` would) and ``backward()`` only writes the
gradients; an explicit ``out_grads``, or a training forward without a backward,
goes back to the two-call form (rebuilding the VJP if needed), so results never
depend on which form ran.  Training forwards update auxiliary states
(BatchNorm's moving statistics) in place.

Memory: ``memory_plan`` runs MXNet's static planner (``memory.py``) on the bound
shapes; ``memory_analysis`` reports what XLA planned for the compiled programs;
``debug_str`` prints both.  Auxiliary-state inputs of training forwards are
donated to XLA when they are dead after the call (see ``_donatable``).  Mirroring
(``MXNET_BACKWARD_DO_MIRROR=1`` or ``executor.mirror = True``) recomputes cheap
values in the backward instead of keeping them (``_mirror_policy``).

This module holds the compiled path; ``Executor`` inherits the dynamic-shape path
(``_executor_dynamic``), the donation checks (``_executor_donation``) and the
memory reports (``_executor_memory``) from mixins.
"""
from __future__ import annotations

import os
import threading
from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp
from jax import lax

from .. import _config, _rng
from .. import profiler as _profiler
from ..base import MXNetError, MXNetValueError, normalize_dtype
from ..device import Device
from ..dynamic import has_dynamic_ops
from .._ndarray import NDArray, array, device_copy
from .._invoke import np_class
from ..graph import bulk as _bulk
from ..graph.interpret import graph_function, node_op
from ._executor_donation import _Donation
from ._executor_dynamic import _SegmentedRun
from ._executor_memory import _MemoryReports
from ._executor_outputs import _HeldOutputs, zeros_on
from ._executor_reshape import _Reshaping

_GRAD_REQS = ("write", "add", "null")
MIRROR_ENV = "MXNET_BACKWARD_DO_MIRROR"


def _mirror_policy(prim: Any, *_: Any, **__: Any) -> bool:
    """``jax.checkpoint`` policy for mirroring: keep what MXNet's mirror keeps.

    MXNet's ``MXNET_BACKWARD_DO_MIRROR`` recomputes the outputs of cheap ops
    (element-wise, activations, normalization) in the backward pass and keeps the
    outputs of the expensive ones (FullyConnected, Convolution); here: save the
    results of matrix products and convolutions, recompute everything else.
    """
    return prim is lax.dot_general_p or prim is lax.conv_general_dilated_p


def _summary(err: Exception) -> str:
    """One line for an error out of a compiled program: the MXNetError a host callback (a custom op)
    raised, found in XLA's report of it, or else the report's first line."""
    text = str(err)
    marker = text.rfind("MXNetError: ")
    if marker >= 0:
        return text[marker + len("MXNetError: "):].splitlines()[0]
    return text.splitlines()[0] if text else type(err).__name__


def _by_name(values: Any, names: list[str], what: str, allow_missing: bool = False) -> dict:
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = [k for k in values if k not in names]
        if unknown:
            raise MXNetValueError(f"bind: unknown {what} {unknown}; expected names from {names}")
        return dict(values)
    values = list(values)
    if len(values) != len(names) and not allow_missing:
        raise MXNetValueError(f"bind: {len(values)} {what} given for {len(names)} ({names})")
    return dict(zip(names, values))


def _as_array(value: Any, name: str) -> NDArray:
    if isinstance(value, NDArray):
        return value
    try:
        return array(onp.asarray(value), cls=NDArray)
    except Exception:
        raise MXNetValueError(f"bind: {name} must be an array, got {type(value).__name__}") from None


class Executor(_SegmentedRun, _Donation, _MemoryReports, _HeldOutputs, _Reshaping):
    """A Symbol bound to arrays (``sym.bind(...)`` / ``sym.simple_bind(...)``)."""

    @_config.with_x64
    def __init__(self, symbol: Any, ctx: Device, args: Any, args_grad: Any = None, grad_req: Any = "write",
                 aux_states: Any = None) -> None:
        self._symbol = symbol
        self._ctx = ctx
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        args = _by_name(args, self.arg_names, "arguments")
        missing = [n for n in self.arg_names if n not in args]
        if missing:
            raise MXNetValueError(f"bind: no array given for arguments {missing}")
        self.arg_dict = {n: _as_array(args[n], n) for n in self.arg_names}
        aux = _by_name(aux_states, self.aux_names, "auxiliary states")
        missing = [n for n in self.aux_names if n not in aux]
        if missing:
            raise MXNetValueError(f"bind: no array given for auxiliary states {missing}")
        self.aux_dict = {n: _as_array(aux[n], n) for n in self.aux_names}
        self._grad_req = self._grad_reqs(grad_req)
        grads = _by_name(args_grad, self.arg_names, "gradients", allow_missing=True)
        self.grad_dict = {}
        for name in self.arg_names:
            if self._grad_req[name] == "null":
                continue
            buf = grads.get(name)
            if buf is None:
                if args_grad is not None:
                    self._grad_req[name] = "null"
                    continue
                buf = type(self.arg_dict[name])._wrap(jnp.zeros_like(self.arg_dict[name].to_jax()))
            if buf.shape != self.arg_dict[name].shape:
                raise MXNetValueError(f"bind: gradient for {name!r} has shape {buf.shape}, "
                                      f"argument has {self.arg_dict[name].shape}")
            self.grad_dict[name] = buf
        self._held: list | None = None  # the output arrays (see _HeldOutputs)
        self._vjp = None
        self._diff: tuple[str, ...] = tuple(n for n in self.arg_names if self._grad_req[n] != "null"
                                            and jnp.issubdtype(self.arg_dict[n].dtype, jnp.inexact))
        self._compiled: dict = {}
        self._mirror = os.environ.get(MIRROR_ENV, "0") == "1"
        nodes = [n for n in symbol._nodes() if not n.is_variable]
        self._random = any(node_op(n).needs_key for n in nodes)
        # aux states a training forward replaces (the only inputs that may die in a call)
        self._updated_aux = tuple(dict.fromkeys(
            n.inputs[slot][0].name for n in nodes if node_op(n).aux_update is not None
            for slot in node_op(n).aux_inputs if slot < len(n.inputs) and n.inputs[slot][0].is_variable))
        self._owned: dict[str, Any] = {}   # aux name -> the buffer this executor's last training call made (_Owned)
        self._donation_lock = threading.RLock()  # held while a training call donates (see _Owned)
        self._reads_aux: bool | None = None
        self._pending = None               # gradients a fused forward computed with ones head gradients
        self._replay = None                # (args, aux or None, key) of the last fused forward
        self._fuse = False                 # run the next training forward fused with its backward
        self._awaiting_backward = False
        self._last_donated: tuple[str, ...] = ()
        # dynamic-shape ops: run as compiled static segments around eager dynamic ops, per training flag
        self._dynamic = has_dynamic_ops(symbol._outputs)
        self._segmented: dict = {}
        self._seg_inputs: dict | None = None

    @property
    def mirror(self) -> bool:
        """Whether training programs recompute cheap values in the backward (``MXNET_BACKWARD_DO_MIRROR``)."""
        return self._mirror

    @mirror.setter
    def mirror(self, value: bool) -> None:
        self._mirror = bool(value)

    def _grad_reqs(self, grad_req: Any) -> dict:
        if isinstance(grad_req, str):
            reqs = {n: grad_req for n in self.arg_names}
        elif isinstance(grad_req, dict):
            reqs = {n: grad_req.get(n, "null") for n in self.arg_names}
        else:
            reqs = dict(zip(self.arg_names, grad_req))
        bad = {k: v for k, v in reqs.items() if v not in _GRAD_REQS}
        if bad:
            raise MXNetValueError(f"bind: grad_req must be one of {_GRAD_REQS}, got {bad}")
        return reqs

    # -- views MXNet offers -------------------------------------------------------------
    @property
    def arg_arrays(self) -> list:
        return [self.arg_dict[n] for n in self.arg_names]

    @property
    def grad_arrays(self) -> list:
        return [self.grad_dict.get(n) for n in self.arg_names]

    @property
    def aux_arrays(self) -> list:
        return [self.aux_dict[n] for n in self.aux_names]

    @property
    def output_dict(self) -> dict:
        return dict(zip(self._symbol.list_outputs(), self.outputs))

    # -- running ----------------------------------------------------------------------
    def _program(self, train: bool, mode: str, mirror: bool | None = None) -> Any:
        """The compiled ``(args, aux, donated_aux, key) -> (aux updates, outputs, extra)``.

        The aux updates come first: a donated buffer becomes the first output of its shape and
        dtype, which must be the new value of that state (not an output that happens to match).

        ``mode`` "plain": no gradients (extra None); "vjp": extra is the VJP closure;
        "step": extra is the gradients for ones head gradients (forward+backward fused).
        """
        mirror = self._mirror if mirror is None else bool(mirror)
        key = (train, mode, mirror and mode != "plain")
        program = self._compiled.get(key)
        if program is not None:
            return program
        fn = graph_function(self._symbol._outputs, train)
        diff = self._diff

        def linearize(args: dict, aux: dict, rng: Any) -> Any:
            fixed = {k: v for k, v in args.items() if k not in diff}

            def of_diff(diff_args: dict) -> Any:
                return fn({**fixed, **diff_args, **aux}, rng)  # (outputs, aux updates)
            if key[2]:
                of_diff = jax.checkpoint(of_diff, policy=_mirror_policy)
            return jax.vjp(of_diff, {k: args[k] for k in diff}, has_aux=True)

        if mode == "vjp":
            def program(args: dict, aux: dict, donated: dict, rng: Any) -> Any:
                outs, vjp, updates = linearize(args, {**aux, **donated}, rng)
                return updates, outs, vjp
        elif mode == "step":
            def program(args: dict, aux: dict, donated: dict, rng: Any) -> Any:
                outs, vjp, updates = linearize(args, {**aux, **donated}, rng)
                return updates, outs, vjp([jnp.ones(o.shape, o.dtype) for o in outs])[0]
        else:
            def program(args: dict, aux: dict, donated: dict, rng: Any) -> Any:
                outs, updates = fn({**args, **aux, **donated}, rng)
                return updates, outs, None
        program = self._compiled[key] = jax.jit(program, donate_argnums=(2,))
        return program

    @_config.with_x64
    def forward(self, is_train: bool = False, **kwargs: Any) -> list:
        """Run the graph (copying any keyword arrays into the arguments first); returns the outputs."""
        for name, value in kwargs.items():
            if name not in self.arg_dict:
                raise MXNetValueError(f"forward: {name!r} is not an argument; arguments are {self.arg_names}")
            target = self.arg_dict[name]
            source = value.to_jax() if isinstance(value, NDArray) else value
            if not isinstance(source, jax.Array):
                source = onp.asarray(source)
            if tuple(source.shape) != target.shape:
                raise MXNetValueError(f"forward: {name!r} has shape {tuple(source.shape)}, "
                                      f"the executor was bound with {target.shape}")
            # copied onto the argument's device, as MXNet copies into it
            target._write(device_copy(source, target.dtype, target._where()))
        if self._dynamic:
            return self._forward_segmented(bool(is_train))
        if self._awaiting_backward:  # the last training forward had no backward: fusing wasted work
            self._fuse = False
        train = bool(is_train)
        mode = ("step" if self._fuse else "vjp") if train and self._diff else "plain"
        with self._donation_lock:  # another thread's read of an aux state waits meanwhile (see _Owned)
            donated = self._donatable(mode) if train else ()
            if donated:  # recorded imperative ops may still read the aux buffers given away
                _bulk.flush_all()
            args = {n: a.to_jax() for n, a in self.arg_dict.items()}
            aux = {n: a.to_jax() for n, a in self.aux_dict.items() if n not in donated}
            gone = {n: self._owned[n].value for n in donated}  # (taken, not handed out: see _own)
            key = _rng.next_key() if self._random else None
            try:
                program, hook = self._program(train, mode), _profiler._program_hook
                if hook is None:
                    updates, outs, extra = program(args, aux, gone, key)
                else:  # the profiler records the run as one event
                    updates, outs, extra = hook("Executor.forward", program, (args, aux, gone, key))
            except MXNetError:
                raise
            except Exception as err:
                raise MXNetError(f"forward: {_summary(err)}") from None
            del gone
            self._last_donated = donated
            self._vjp = extra if mode == "vjp" else None
            self._pending = extra if mode == "step" else None
            # the fused form keeps its inputs to rebuild the VJP should backward get explicit out_grads;
            # donated aux states are not needed for that (the outputs do not read them, see _donatable)
            self._replay = (args, None if donated else aux, key) if mode == "step" else None
            self._awaiting_backward = mode != "plain"
            for name, value in updates.items():
                if name in self.aux_dict:
                    self._own(name, value, name in donated)
        self.outputs = self._settled(outs)
        return self.outputs

    def _output_class(self) -> type:
        """``mx.np.ndarray`` for a symbol of NumPy semantics (``mx.sym.np``, ``as_np_ndarray``), else
        the legacy ``NDArray``, as MXNet 2.0's executor gives them (and 1.9.1's, whose symbols are all
        legacy), whether NumPy semantics are on or not."""
        return np_class() if self._symbol._np else NDArray

    @_config.with_x64
    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Gradients of the outputs (seeded with ``out_grads``, ones by default) into ``grad_dict``."""
        if self._dynamic:
            return self._backward_segmented(out_grads)
        if self._vjp is None and self._pending is None:
            raise MXNetError("backward: call forward(is_train=True) first (with arguments that need gradients)")
        if out_grads is None:
            grads = self._pending
            if grads is None:
                grads = _apply(self._vjp, [jnp.ones(o.shape, o.dtype) for o in self.outputs])
            self._fuse = True
        else:
            out_grads = out_grads if isinstance(out_grads, (list, tuple)) else [out_grads]
            if len(out_grads) != len(self.outputs):
                raise MXNetValueError(f"backward: {len(out_grads)} output gradients for {len(self.outputs)} outputs")
            cts = []
            for i, (g, o) in enumerate(zip(out_grads, self.outputs)):
                g = g.to_jax() if isinstance(g, NDArray) else jnp.asarray(g)
                if tuple(g.shape) != o.shape:
                    raise MXNetValueError(f"backward: output gradient {i} has shape {tuple(g.shape)}, "
                                          f"output has {o.shape}")
                cts.append(g.astype(o.dtype))
            grads = _apply(self._vjp if self._vjp is not None else self._rebuild_vjp(), cts)
            self._fuse = False
        self._awaiting_backward = False
        for name, value in grads.items():
            buf = self.grad_dict[name]
            if value.dtype != buf.dtype:
                value = value.astype(buf.dtype)
            buf._write(value if self._grad_req[name] == "write" else buf.to_jax() + value)

    def _rebuild_vjp(self) -> Any:
        """The VJP of the last (fused) training forward, recomputed from the inputs it ran on."""
        args, aux, key = self._replay
        if aux is None:  # donated: the outputs do not read them, any values will do
            aux = {n: a.to_jax() for n, a in self.aux_dict.items()}
        try:
            _, _, self._vjp = self._program(True, "vjp")(args, aux, {}, key)
        except Exception as err:
            raise MXNetError(f"backward: {_summary(err)}") from None
        return self._vjp

    def copy_params_from(self, arg_params: dict, aux_params: dict | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values into the bound arrays (by name)."""
        for source, target, what in ((arg_params, self.arg_dict, "argument"),
                                     (aux_params or {}, self.aux_dict, "auxiliary state")):
            for name, value in source.items():
                if name not in target:
                    if allow_extra_params:
                        continue
                    raise MXNetValueError(f"copy_params_from: unknown {what} {name!r}")
                value.copyto(target[name])


@jax.jit
def _apply(vjp: Any, cts: list) -> Any:
    return vjp(cts)[0]


@_config.with_x64
def allocate_and_bind(symbol: Any, ctx: Device, grad_req: Any, type_dict: dict, shapes: dict) -> Executor:
    """``simple_bind``: infer every shape, allocate zero arrays, bind."""
    arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
    if arg_shapes is None:
        raise MXNetValueError(f"simple_bind: cannot infer all argument shapes from {shapes}; give more shapes")
    cls = NDArray  # MXNet allocates legacy arrays, whatever the symbol
    # parameters take the dtypes inference gives them (float16 data: float16 weights, as in MXNet);
    # auxiliary states stay float32 unless given, as MXNet keeps BatchNorm's statistics
    inferred = {}
    if type_dict:
        arg_types, _, _ = symbol.infer_type(**{k: v for k, v in type_dict.items() if k in symbol.list_inputs()})
        inferred = {n: t for n, t in zip(symbol.list_arguments(), arg_types) if t is not None}

    def zeros(name: str, shape: tuple) -> NDArray:
        dtype = normalize_dtype(type_dict.get(name) or inferred.get(name)) or onp.dtype(onp.float32)
        return zeros_on(cls, shape, dtype, ctx.jax_device)  # on ctx, as MXNet
    args = {n: zeros(n, s) for n, s in zip(symbol.list_arguments(), arg_shapes)}
    aux = {n: zeros(n, s) for n, s in zip(symbol.list_auxiliary_states(), aux_shapes)}
    return Executor(symbol, ctx, args, None, grad_req, aux)
