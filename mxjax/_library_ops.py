"""Operators of MXNet 2.0 extension libraries, run through mxjax's custom-operator machinery.

Each library op becomes a registered op (``OPS``; so ``mx.sym.<name>`` and symbol JSON
know it) and an ``mx.nd.<name>`` function.  Both paths reuse what runs Python custom
operators (:mod:`mxjax.operator.custom`): a :class:`LibraryProp` answers the shape and
dtype questions with the library's ``inferShape``/``inferType`` callbacks, and the
:class:`LibraryCompute` it creates runs the library's forward and backward on host
buffers.  Imperatively that is ``_custom_host``'s tape node; in a hybridized block or a
bound symbol it is ``_graph_call``'s host callback under a ``custom_vjp``.

Inputs the library mutates (``mutateInputs``) play the part of a Python custom op's
auxiliary states: an imperative call updates the caller's arrays in place, as MXNet does.
"""
from __future__ import annotations

import weakref
from typing import Any, Sequence

import jax
import numpy as onp

from . import _config, autograd
from . import _deferred_compute as dc
from ._custom_host import _ImperativeCall
from ._library_abi import Extension, OpEntry, code_dtype, dtype_code
from ._ndarray import NDArray
from ._invoke import invoke
from ._tape import differentiable
from .base import MXNetError, MXNetTypeError
from .operator.custom import CustomOp, CustomOpDef, CustomOpProp, Signature, _graph_call

__all__ = ["LibraryOp"]

# front-end keywords that are not the op's attributes (mxjax's own training flag included)
_NOT_ATTRS = frozenset({"_train", "num_args", "name", "attr", "out", "ctx", "device"})


def _input_names(count: int) -> list[str]:
    """nnvm's default input names: ``data`` for one input, ``arg0``, ``arg1``, ... otherwise."""
    return ["data"] if count == 1 else [f"arg{i}" for i in range(count)]


def _output_names(count: int) -> list[str]:
    return ["output"] if count == 1 else [f"output{i}" for i in range(count)]


class LibraryCompute(CustomOp):
    """Forward and backward of one library op instance, on the host (a state, if stateful)."""

    def __init__(self, prop: "LibraryProp") -> None:
        super().__init__()
        self.prop = prop
        self.state: int | None = None

    def _inputs(self, in_data: Sequence, aux: Sequence) -> list[onp.ndarray]:
        """All inputs in the library's order, as writable C-contiguous host copies."""
        prop = self.prop
        ordered: list = [None] * prop.num_in
        for pos, x in zip(prop.arg_positions, in_data):
            ordered[pos] = x
        for pos, x in zip(prop.mutate, aux):
            ordered[pos] = x
        return [onp.array(x.asnumpy(), order="C", copy=True) for x in ordered]

    def _ensure_state(self, inputs: Sequence[onp.ndarray]) -> int:
        if self.state is None:
            lib, entry = self.prop.lib, self.prop.entry
            self.state = lib.ext.create_state(entry, self.prop.attrs, [a.shape for a in inputs],
                                              [dtype_code(a.dtype) for a in inputs])
            weakref.finalize(self, lib.ext.destroy_state, self.state)
        return self.state

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        prop, lib = self.prop, self.prop.lib
        inputs = self._inputs(in_data, aux)
        outputs = [onp.zeros(o.shape, onp.dtype(o.dtype)) for o in out_data]
        if prop.entry.create_state:
            lib.ext.compute(prop.entry, None, prop.attrs, inputs, outputs, "stateful Forward",
                            state=self._ensure_state(inputs), is_forward=True)
        else:
            lib.ext.compute(prop.entry, prop.entry.forward, prop.attrs, inputs, outputs, "Forward")
        for dst, r, src in zip(out_data, req, outputs):
            self.assign(dst, r, src)
        for pos, dst in zip(prop.mutate, aux):
            dst[()] = inputs[pos]

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list,
                 aux: list) -> None:
        prop, lib = self.prop, self.prop.lib
        stateful = bool(prop.entry.create_state)
        if not stateful and not prop.entry.backward:
            raise MXNetError(f"Custom operator {prop.entry.name!r} is non-differentiable: its library "
                             "registered no backward")
        if stateful and self.state is None:
            raise MXNetError(f"Custom operator {prop.entry.name!r}: backward before any forward of this state")
        inputs = self._inputs(in_data, aux)
        # MXNet's gradient node reads the output gradients, then the inputs, then the outputs
        heads = ([onp.array(g.asnumpy(), order="C", copy=True) for g in out_grad] + inputs
                 + [onp.array(o.asnumpy(), order="C", copy=True) for o in out_data])
        grads = [onp.zeros(a.shape, a.dtype) for a in inputs]
        if stateful:
            lib.ext.compute(prop.entry, None, prop.attrs, heads, grads, "stateful Backward", state=self.state,
                            is_forward=False)
        else:
            lib.ext.compute(prop.entry, prop.entry.backward, prop.attrs, heads, grads, "Backward")
        for dst, r, pos in zip(in_grad, req, prop.arg_positions):
            self.assign(dst, r, grads[pos])


class LibraryProp(CustomOpProp):
    """A library op with fixed attributes: its inputs, outputs and the library's inference."""

    def __init__(self, lib: "LibraryOp", attrs: dict[str, str]) -> None:
        super().__init__(need_top_grad=True)
        self.lib, self.entry, self.attrs = lib, lib.entry, attrs
        self.num_in, self.num_out = lib.ext.parse_attrs(lib.entry, attrs)
        mutate = lib.ext.mutate_inputs(lib.entry, attrs)
        bad = [i for i in mutate if not 0 <= i < self.num_in]
        if bad:
            raise MXNetError(f"Custom operator {lib.name!r}: mutateInputs names inputs {bad}, but the op has "
                             f"{self.num_in} inputs")
        self.mutate = tuple(sorted(set(mutate)))
        self.arg_positions = tuple(i for i in range(self.num_in) if i not in self.mutate)
        names = _input_names(self.num_in)
        self._args = [names[i] for i in self.arg_positions]
        self._aux = [names[i] for i in self.mutate]

    def list_arguments(self) -> list:
        return list(self._args)

    def list_auxiliary_states(self) -> list:
        return list(self._aux)

    def list_outputs(self) -> list:
        return _output_names(self.num_out)

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        return LibraryCompute(self)

    def signature(self, shapes: Sequence[tuple], dtypes: Sequence[Any]) -> Signature:
        """Shapes and dtypes of everything, for inputs given in the library's order."""
        name, ext = self.entry.name, self.lib.ext
        if len(shapes) != self.num_in:
            raise MXNetError(f"Operator {name} expects {self.num_in} inputs, but got {len(shapes)} instead")
        shapes = [tuple(int(d) for d in s) for s in shapes]
        codes = [dtype_code(d) for d in dtypes]
        lib_shapes, out_shapes = ext.infer_shape(self.entry, self.attrs, shapes, self.num_out)
        lib_codes, out_codes = ext.infer_type(self.entry, self.attrs, codes, self.num_out)
        for i, (given, seen) in enumerate(zip(shapes, lib_shapes)):
            if given != seen:
                raise MXNetError(f"Custom operator {name!r}: inferShape wants input {i} of shape {seen}, got {given}")
        for i, (given, seen) in enumerate(zip(codes, lib_codes)):
            if given != seen:
                raise MXNetError(f"Custom operator {name!r}: inferType wants input {i} of "
                                 f"{code_dtype(seen, name)}, got {code_dtype(given, name)}")
        out_dtypes = tuple(code_dtype(c, f"Custom operator {name!r} (inferType)") for c in out_codes)
        in_dtypes = [onp.dtype(d) for d in dtypes]
        pick = lambda seq, idx: tuple(seq[i] for i in idx)  # noqa: E731
        return Signature(name, self, tuple(self._args), tuple(self.list_outputs()), tuple(self._aux),
                         pick(shapes, self.arg_positions), tuple(out_shapes), pick(shapes, self.mutate),
                         pick(in_dtypes, self.arg_positions), out_dtypes, pick(in_dtypes, self.mutate))

    def ordered(self, inputs: Sequence) -> list:
        """Inputs in the library's order rearranged as Signature orders them: arguments, then mutated."""
        return [inputs[i] for i in self.arg_positions] + [inputs[i] for i in self.mutate]


class LibraryOp:
    """One operator of a loaded library: its registered op and its ``mx.nd`` function."""

    def __init__(self, ext: Extension, entry: OpEntry) -> None:
        self.ext, self.entry, self.name = ext, entry, entry.name
        missing = [what for what, fn in (("parseAttrs", entry.parse_attrs), ("inferType", entry.infer_type),
                                         ("inferShape", entry.infer_shape)) if not fn]
        if not (entry.forward or entry.create_state):
            missing.append("a CPU forward or createOpState" + (f" (it has {list(entry.contexts)} only)"
                                                                if entry.contexts else ""))
        self.missing = missing
        self._props: dict[tuple, LibraryProp] = {}
        self.mutated = self._mutated_without_attrs()
        self.opdef = CustomOpDef(self.name, self._graph_compute, num_outputs=self._count_outputs,
                                 infer=self._infer, aux_inputs=self.mutated,
                                 aux_update=self._aux_update if self.mutated else None,
                                 doc=f"Operator {self.name!r} of the extension library {ext.path}.")
        self.function = self._make_function()

    def _mutated_without_attrs(self) -> tuple:
        """The inputs the op mutates, asked once at load: graphs list them as auxiliary states (one
        set per op in mxjax's registry, so an op whose set depends on its attributes gets an error)."""
        if not self.entry.mutate_inputs:
            return ()
        try:
            return tuple(sorted(set(self.ext.mutate_inputs(self.entry, {}))))
        except MXNetError:
            return ()

    # -- attributes -------------------------------------------------------------------
    def prop(self, params: dict) -> LibraryProp:
        """The prop for these keyword arguments, as the strings MXNet passes the library (cached)."""
        if self.missing:
            raise MXNetError(f"Custom operator {self.name!r} from {self.ext.path!r} cannot run in mxjax: the "
                             f"library does not register {', '.join(self.missing)}")
        attrs = {k: str(v) for k, v in params.items() if k not in _NOT_ATTRS and not k.startswith("__")}
        key = tuple(sorted(attrs.items()))
        prop = self._props.get(key)
        if prop is None:
            prop = LibraryProp(self, attrs)
            if self.entry.mutate_inputs and prop.mutate != self.mutated:
                raise MXNetError(f"Custom operator {self.name!r}: mutateInputs gives inputs {list(prop.mutate)} "
                                 f"for attributes {attrs}, but {list(self.mutated)} without them; mxjax needs "
                                 "one set of mutated inputs per op")
            self._props[key] = prop
        return prop

    # -- the registered op (graphs: hybridized blocks, symbols) -----------------------
    def _graph_compute(self, *data: Any, **params: Any) -> Any:
        prop = self.prop(params)
        sig = prop.signature([x.shape for x in data], [x.dtype for x in data])
        run = lambda xs: _graph_call(sig, _config.is_training(), xs)[:prop.num_out]  # noqa: E731
        if not (self.entry.backward or self.entry.create_state):
            run = self._without_backward(run)
        results = run(tuple(prop.ordered(data)))
        return results[0] if len(results) == 1 else tuple(results)

    def _without_backward(self, run: Any) -> Any:
        """``run`` whose gradient, when a program asks for one, is an MXNetError raised while the
        backward is built (inside the host callback it would surface as a JAX runtime error)."""
        name = self.name

        @jax.custom_vjp
        def forward_only(xs: tuple) -> Any:
            return run(xs)

        def no_backward(residuals: Any, cts: Any) -> Any:
            raise MXNetError(f"Custom operator {name!r} is non-differentiable: its library registered no backward")

        forward_only.defvjp(lambda xs: (run(xs), None), no_backward)
        return forward_only

    def _aux_update(self, *data: Any, **params: Any) -> tuple:
        """New values of the mutated inputs after a forward (graphs in training mode write them back)."""
        prop = self.prop(params)
        sig = prop.signature([x.shape for x in data], [x.dtype for x in data])
        return tuple(_graph_call(sig, _config.is_training(), tuple(prop.ordered(data)))[prop.num_out:])

    def _infer(self, *avals: Any, **params: Any) -> Any:
        prop = self.prop(params)
        structs = prop.signature([a.shape for a in avals], [a.dtype for a in avals]).out_structs()
        return structs[0] if len(structs) == 1 else tuple(structs)

    def _count_outputs(self, params: dict) -> int:
        return self.prop(params).num_out

    # -- mx.nd.<name> -----------------------------------------------------------------
    def _make_function(self) -> Any:
        op = self

        @_config.with_x64
        def function(*data: Any, out: Any = None, name: str | None = None, attr: Any = None, **kwargs: Any) -> Any:
            arrays = list(data)
            for i, x in enumerate(arrays):
                if not isinstance(x, NDArray):
                    raise MXNetTypeError(f"{op.name}: input {i} must be an NDArray, got {type(x).__name__}")
            out_cls = type(arrays[0]) if arrays else NDArray
            if dc.is_deferred_compute():  # a hybridizing block: one graph node
                result = invoke(op.opdef, arrays, kwargs, out_cls)
            else:
                prop = op.prop(kwargs)
                sig = prop.signature([x.shape for x in arrays], [x.dtype for x in arrays])
                ordered = prop.ordered(arrays)
                diff = tuple(i for i, x in enumerate(ordered[:len(sig.arguments)]) if differentiable(x))
                result = _ImperativeCall(sig, sig.create_operator(), autograd.is_training(), out_cls, diff)(*ordered)
            if isinstance(result, tuple):  # MXNet returns several outputs as a list
                result = list(result)
            return result if out is None else _write_out(op.name, out, result)

        function.__name__ = function.__qualname__ = self.name
        function.__module__ = "mxjax.ndarray"
        function.__doc__ = (f"Run operator {self.name!r} of the extension library {self.ext.path}.\n\n"
                            "data: the op's input arrays, in order; keyword arguments reach the library's "
                            "callbacks as strings.\nReturns one array, or a list when the op has several "
                            "outputs.")
        function.op = self.opdef  # type: ignore[attr-defined]
        return function


def _write_out(name: str, out: Any, result: Any) -> Any:
    """Copy the results into the caller's ``out`` array(s) and return them."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    results = result if isinstance(result, (list, tuple)) else [result]
    if len(outs) != len(results):
        raise MXNetError(f"{name}: out= has {len(outs)} arrays for {len(results)} outputs")
    for dst, src in zip(outs, results):
        dst[()] = src
    return out
