"""``Executor``: a bound Symbol, run as one ``jax.jit``-compiled program per input signature.

``forward(is_train=True)`` runs the graph and, where arguments need gradients,
also keeps JAX's VJP closure from the same compiled call; ``backward`` applies it
in a second compiled call and writes or adds into the gradient arrays.  Training
forwards update auxiliary states (BatchNorm's moving statistics) in place.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _rng
from ..base import MXNetError, MXNetValueError, normalize_dtype
from ..device import Device
from ..ndarray import NDArray, _default_class, array
from .interpret import graph_function

_GRAD_REQS = ("write", "add", "null")


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
        return array(onp.asarray(value), cls=_default_class())
    except Exception:
        raise MXNetValueError(f"bind: {name} must be an array, got {type(value).__name__}") from None


class Executor:
    """A Symbol bound to arrays (``sym.bind(...)`` / ``sym.simple_bind(...)``)."""

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
        self.outputs: list = []
        self._vjp = None
        self._diff: tuple[str, ...] = tuple(n for n in self.arg_names if self._grad_req[n] != "null"
                                            and jnp.issubdtype(self.arg_dict[n].dtype, jnp.inexact))
        self._compiled: dict = {}

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
    def _program(self, train: bool, with_vjp: bool) -> Any:
        key = (train, with_vjp)
        program = self._compiled.get(key)
        if program is None:
            fn = graph_function(self._symbol._outputs, train)
            diff = self._diff

            if with_vjp:
                def program(args: dict, aux: dict, rng: Any) -> Any:
                    fixed = {k: v for k, v in args.items() if k not in diff}

                    def of_diff(diff_args: dict) -> Any:
                        return fn({**fixed, **diff_args, **aux}, rng)  # (outputs, aux updates)
                    outs, vjp, updates = jax.vjp(of_diff, {k: args[k] for k in diff}, has_aux=True)
                    return outs, updates, vjp
            else:
                def program(args: dict, aux: dict, rng: Any) -> Any:
                    outs, updates = fn({**args, **aux}, rng)
                    return outs, updates, None
            program = self._compiled[key] = jax.jit(program)
        return program

    def forward(self, is_train: bool = False, **kwargs: Any) -> list:
        """Run the graph (copying any keyword arrays into the arguments first); returns the outputs."""
        for name, value in kwargs.items():
            if name not in self.arg_dict:
                raise MXNetValueError(f"forward: {name!r} is not an argument; arguments are {self.arg_names}")
            target = self.arg_dict[name]
            source = value.to_jax() if isinstance(value, NDArray) else jnp.asarray(value)
            if tuple(source.shape) != target.shape:
                raise MXNetValueError(f"forward: {name!r} has shape {tuple(source.shape)}, "
                                      f"the executor was bound with {target.shape}")
            target._write(source.astype(target.dtype))
        with_vjp = bool(is_train and self._diff)
        args = {n: a.to_jax() for n, a in self.arg_dict.items()}
        aux = {n: a.to_jax() for n, a in self.aux_dict.items()}
        try:
            outs, updates, vjp = self._program(bool(is_train), with_vjp)(args, aux, _rng.next_key())
        except MXNetError:
            raise
        except Exception as err:
            raise MXNetError(f"forward: {str(err).splitlines()[0]}") from None
        self._vjp = vjp
        for name, value in updates.items():
            if name in self.aux_dict:
                self.aux_dict[name]._write(value)
        cls = _default_class()
        self.outputs = [cls._wrap(o) for o in outs]
        return self.outputs

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Gradients of the outputs (seeded with ``out_grads``, ones by default) into ``grad_dict``."""
        if self._vjp is None:
            raise MXNetError("backward: call forward(is_train=True) first (with arguments that need gradients)")
        if out_grads is None:
            cts = [jnp.ones(o.shape, o.dtype) for o in self.outputs]
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
        grads = _apply(self._vjp, cts)
        for name, value in grads.items():
            buf = self.grad_dict[name]
            value = value.astype(buf.dtype)
            buf._write(value if self._grad_req[name] == "write" else buf.to_jax() + value)

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

    def debug_str(self) -> str:
        lines = [f"Symbol outputs: {self._symbol.list_outputs()}"]
        for name, arr in {**self.arg_dict, **self.aux_dict}.items():
            lines.append(f"  {name}: {arr.shape} {onp.dtype(arr.dtype).name}")
        return "\n".join(lines)


@jax.jit
def _apply(vjp: Any, cts: list) -> Any:
    return vjp(cts)[0]


def allocate_and_bind(symbol: Any, ctx: Device, grad_req: Any, type_dict: dict, shapes: dict) -> Executor:
    """``simple_bind``: infer every shape, allocate zero arrays, bind."""
    arg_shapes, _, aux_shapes = symbol.infer_shape(**shapes)
    if arg_shapes is None:
        _, _, _ = symbol.infer_shape_partial(**shapes)
        raise MXNetValueError(f"simple_bind: cannot infer all argument shapes from {shapes}; give more shapes")
    cls = _default_class()

    def zeros(name: str, shape: tuple) -> NDArray:
        dtype = normalize_dtype(type_dict.get(name)) or onp.dtype(onp.float32)
        return cls._wrap(jnp.zeros(shape, dtype))
    args = {n: zeros(n, s) for n, s in zip(symbol.list_arguments(), arg_shapes)}
    aux = {n: zeros(n, s) for n, s in zip(symbol.list_auxiliary_states(), aux_shapes)}
    return Executor(symbol, ctx, args, None, grad_req, aux)
