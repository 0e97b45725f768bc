"""Gluon ``Block`` (children, parameters, hooks, save/load) and ``HybridBlock`` (hybridize into XLA).

``HybridBlock.hybridize()`` makes the block trace its ``forward`` under deferred
compute into a Symbol the first time it sees an input signature, then run that
graph as one ``jax.jit`` program.  Under ``autograd.record()`` a hybridized call
is ONE tape node whose VJP is compiled with it; BatchNorm's running statistics
come back from the same program and are written into their parameters.  A block
written in MXNet 1.x's style (``hybrid_forward(F, x, **params)``) runs too: see
``_hybrid_forward``.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import operator
import re
import threading
from collections import OrderedDict
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config, _deferred_compute as dc
from ..graph import compile_cache
from .._atomic import atomic_write_group
from .. import _rng, _tape, autograd
from .. import profiler as _profiler
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from ..device import Device
from .._ndarray import NDArray
from .._invoke import np_class
from .._value_reads import tracing
from ..ndarray._io import load, save
from ..serialization import file_label, reading
from ..subgraph.property import PARTITION_OPTIONS, check_backend_options
from ..symbol import Symbol, var
from ._arguments import check_hybridize_options, has_array, init_keywords, reject_unknown
from ._cached_graph import CachedGraph, run_op_hook
from ._hybrid_forward import (ParameterDict, call_imperative, call_on_symbols, has_symbol,
                              infer_parameter_shapes, input_names, trace_symbolic)
from ._model_io import load_model, save_model
from ._weight_layout import relaid_inputs
from ._summary import print_summary
from .parameter import DeferredInitializationError, Parameter, _known

__all__ = ["Block", "HybridBlock"]

_ARRAY_TYPES = (NDArray, Symbol, onp.ndarray, jax.Array)  # what a HybridBlock's inputs must include


# Bumped by every change of any block tree's structure (a child or parameter added, replaced or
# removed, a cast): a hybridized block compares its structure again only when this moved.
_structure_epoch = [0]
_serials = itertools.count()


def _structure_changed() -> None:
    _structure_epoch[0] += 1


class _LoadMismatch(MXNetError, AssertionError):
    """A saved parameter whose shape or dtype does not fit: MXNet 2.0 raises AssertionError here."""


class Block:
    """The base of every Gluon layer and model: owns child blocks and parameters."""

    def __init__(self, **kwargs: Any) -> None:
        if kwargs:  # what no constructor along the subclass chain consumed
            reject_unknown(type(self).__name__, kwargs, init_keywords(type(self)))
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", ParameterDict())
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_forward_pre_hooks", [])
        object.__setattr__(self, "_serial", next(_serials))  # names this block in structure fingerprints

    # -- registration (MXNet's attribute-assignment API) -------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params.register(name, value)
            _structure_changed()
        elif name in self.__dict__.get("_children", ()):  # a child replaced by something else: gone
            del self._children[name]
            _structure_changed()
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        """Deleting a child or parameter attribute removes it from the block (and re-traces hybridized
        ancestors at their next call)."""
        if name in self.__dict__.get("_children", ()):
            del self._children[name]
            _structure_changed()
        if name in self.__dict__.get("_reg_params", ()):
            del self._reg_params[name]
            _structure_changed()
        object.__delattr__(self, name)

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters by attribute name (not its children's: see ``collect_params``)."""
        return self._reg_params

    def name_scope(self) -> Any:
        """MXNet 1.x's naming scope, kept so 1.x code runs: names are structural (``out.weight``)
        whatever the scope, so it changes nothing."""
        return contextlib.nullcontext()

    def register_child(self, block: "Block", name: str | None = None) -> None:
        """Add a child block (named by its attribute, or by its position for Sequential)."""
        if "_children" not in self.__dict__:
            raise MXNetError(f"{type(self).__name__}: call super().__init__() before assigning children")
        self._children[name if name is not None else str(len(self._children))] = block
        _structure_changed()

    def register_forward_hook(self, hook: Callable) -> Any:
        self._forward_hooks.append(hook)
        return _HookHandle(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook: Callable) -> Any:
        self._forward_pre_hooks.append(hook)
        return _HookHandle(self._forward_pre_hooks, hook)

    # -- parameters -------------------------------------------------------------------------
    def _collect(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        for name, param in self._reg_params.items():
            yield prefix + name, param
        for child_name, child in self._children.items():
            yield from child._collect(f"{prefix}{child_name}.")

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """Parameters by structural name (``0.weight``, ``features.1.bias``), optionally regex-selected."""
        out = ParameterDict()
        seen: set[int] = set()
        if select is not None and not isinstance(select, str):
            raise MXNetTypeError(f"{type(self).__name__}.collect_params: select must be a regular expression "
                                 f"string (e.g. '.*weight|.*bias'), got {type(select).__name__}")
        try:
            pattern = re.compile(select) if select else None
        except re.error as err:
            raise MXNetValueError(f"{type(self).__name__}.collect_params: select {select!r} is not a valid "
                                  f"regular expression: {err}") from None
        for name, param in self._collect():
            if id(param) in seen or (pattern is not None and not pattern.match(name)):
                continue
            seen.add(id(param))
            out[name] = param
        return out

    def initialize(self, init: Any = None, device: Device | None = None, verbose: bool = False,
                   force_reinit: bool = False, ctx: Device | None = None) -> None:
        """Initialize every parameter (deferred for those whose shape waits for the first input)."""
        self.collect_params().initialize(init, device, verbose, force_reinit, ctx)

    def setattr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` (``grad_req``, ``lr_mult``...) to ``value`` on every parameter."""
        self.collect_params().setattr(name, value)

    def zero_grad(self) -> None:
        self.collect_params().zero_grad()

    def apply(self, fn: Callable[["Block"], Any]) -> "Block":
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def share_parameters(self, shared: dict[str, Parameter]) -> "Block":
        """Use the given parameters (by structural name) instead of this block's own."""
        for name, param in shared.items():
            owner, attr = self._owner_of(name)
            if attr not in owner._reg_params:
                raise MXNetValueError(f"share_parameters: {type(self).__name__} has no parameter {name!r}")
            owner._reg_params[attr] = param
            object.__setattr__(owner, attr, param)
        _structure_changed()
        return self

    def _owner_of(self, name: str) -> tuple["Block", str]:
        *path, attr = name.split(".")
        block: Block = self
        for part in path:
            if part not in block._children:
                raise MXNetValueError(f"{type(self).__name__} has no child {part!r} (in {name!r})")
            block = block._children[part]
        return block, attr

    def cast(self, dtype: Any) -> None:
        for child in self._children.values():
            child.cast(dtype)
        for param in self._reg_params.values():
            param.cast(dtype)
        _structure_changed()

    def _structure(self) -> tuple:
        """What a traced graph of this block depends on besides its inputs: every descendant block
        by name and identity, every parameter by name, identity and dtype."""
        blocks = [self._serial]
        for name, child in self._children.items():
            blocks.append((name, child._structure()))
        params = tuple((name, id(p), str(p.dtype)) for name, p in self._reg_params.items())
        return (tuple(blocks), params)

    def reset_device(self, device: Device) -> None:
        for param in self.collect_params().values():
            param.reset_device(device)

    reset_ctx = reset_device

    # -- saving and loading ------------------------------------------------------------------
    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save by structural name (``0.weight``) in MXNet's ``.params`` format (NumPy-mode v3 records)."""
        arrays = {}
        seen: set[int] = set()
        for name, param in self._collect():
            if deduplicate and id(param) in seen:
                continue
            seen.add(id(param))
            arrays[name] = param.data()
        save(filename, arrays)

    def load_parameters(self, filename: str, device: Device | None = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current",
                        ctx: Device | None = None) -> None:
        """Load a ``save_parameters`` (or ``export``: ``arg:``/``aux:``) file into this block's parameters.

        A saved dtype that differs from a parameter's is an error unless ``cast_dtype``; then
        ``dtype_source='current'`` converts the values to the parameter's dtype and ``'saved'``
        gives the parameter the file's dtype.  A corrupt file raises MXNetValueError naming it.
        """
        try:
            with reading(filename, "parameter file"):
                loaded = load(filename)
        except MXNetError as err:  # MXNet 2.0 raises ValueError for a file it cannot read
            raise MXNetValueError(f"load_parameters: {err}") from None
        if not isinstance(loaded, dict):
            raise MXNetValueError(f"load_parameters: {file_label(filename)} holds an unnamed "
                                  f"{type(loaded).__name__} of arrays, not parameters by name")
        self._load("load_parameters", loaded, file_label(filename), allow_missing, ignore_extra, cast_dtype,
                   dtype_source)

    def load_dict(self, param_dict: dict, device: Device | None = None, allow_missing: bool = False,
                  ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load parameters from a dict of arrays keyed by structural name (``arg:``/``aux:`` allowed)."""
        if not isinstance(param_dict, dict):
            raise MXNetTypeError(f"{type(self).__name__}.load_dict: expected a dict of arrays by parameter "
                                 f"name, got {type(param_dict).__name__}")
        self._load("load_dict", param_dict, "param_dict", allow_missing, ignore_extra, cast_dtype, dtype_source)

    @_config.with_x64  # float64/int64 values load as they are
    def _load(self, caller: str, loaded: dict, source: str, allow_missing: bool, ignore_extra: bool,
              cast_dtype: bool, dtype_source: str) -> None:
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise MXNetValueError(f"{caller}: dtype_source must be 'current' or 'saved', got {dtype_source!r}")
        loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
        params = self.collect_params()
        missing = [n for n in params if n not in loaded]
        if missing and not allow_missing:
            raise MXNetError(f"{caller}: {source} has no values for parameters {missing} of "
                             f"{type(self).__name__}; pass allow_missing=True to keep their current values")
        extra = [n for n in loaded if n not in params]
        if extra and not ignore_extra:
            raise MXNetValueError(f"{caller}: {source} has values for {extra}, which "
                                  f"{type(self).__name__} does not have; pass ignore_extra=True to skip them")
        updates = []  # every value checked before any parameter changes: a refused file loads nothing
        for name, param in params.items():
            if name not in loaded:
                continue
            value = loaded[name]
            saved = onp.dtype(value.dtype)  # before any conversion (jnp.asarray would narrow float64)
            value = value if isinstance(value, NDArray) else np_class()._wrap(jnp.asarray(value, saved))
            if param.shape is not None and all(d > 0 for d in param.shape) and tuple(param.shape) != value.shape:
                raise _LoadMismatch(f"{caller}: parameter {name!r} of {type(self).__name__} has shape "
                                    f"{param.shape}, {source} has {value.shape}")
            if saved != onp.dtype(param.dtype) and not cast_dtype:  # MXNet 2.0 refuses too (AssertionError)
                raise _LoadMismatch(f"{caller}: parameter {name!r} of {type(self).__name__} is "
                                    f"{onp.dtype(param.dtype).name}, {source} holds {saved.name}; pass "
                                    "cast_dtype=True to convert it (dtype_source='current' keeps the "
                                    "parameter's dtype, 'saved' takes the file's)")
            updates.append((param, value, saved))
        for param, value, saved in updates:
            if saved != onp.dtype(param.dtype):
                if dtype_source == "current":
                    value = value.astype(param.dtype)
                else:
                    param.cast(saved)
            param.set_data(value)

    def save(self, prefix: str) -> None:
        """Save the structure (``prefix-model.json``) and the parameters (``prefix-model.params``)."""
        save_model(self, prefix)

    def load(self, prefix: str) -> None:
        """Load what ``save(prefix)`` wrote into this block, built the same way as the saved one."""
        load_model(self, prefix)

    # -- calling ----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in self._forward_pre_hooks:
            hook(self, args)
        try:
            out = self._call(*args, **kwargs)
        except DeferredInitializationError:
            self._finish_deferred(*args)
            out = self._call(*args, **kwargs)
        for hook in self._forward_hooks:
            hook(self, args, out)
        return out

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def _finish_deferred(self, *args: Any) -> None:
        self.infer_shape(*args)
        for param in self._reg_params.values():
            param._finish_deferred_init()

    def infer_shape(self, *args: Any) -> None:
        """Fill in unknown parameter shapes from the inputs.

        Layers with parameters of deferred shape override this; a container fills its
        children's by running them once in predict mode (no recording, running statistics
        untouched), which is what their own deferred initialization does.
        """
        unknown = [n for n, p in self._reg_params.items() if not _known(p.shape)]
        if unknown:
            raise MXNetError(f"{type(self).__name__} has parameters {unknown} of unknown shape and no "
                             "infer_shape(); give the parameters full shapes (e.g. in_units=...)")
        with autograd.pause(False):
            self._imperative(*args)

    def _imperative(self, *args: Any) -> Any:
        return self.forward(*args)

    def forward(self, *args: Any) -> Any:
        raise MXNetError(f"{type(self).__name__} must define forward(self, *args)")

    def summary(self, *inputs: Any) -> None:
        """Print each block's output shape and parameter count for these inputs (MXNet's table)."""
        print_summary(self, inputs)

    def register_op_hook(self, callback: Callable, monitor_all: bool = False) -> None:
        """Call ``callback(tensor_name, op_name, array)`` on the op outputs (and inputs with
        ``monitor_all``) of every hybridized block in this tree, as MXNet 2.0's cached op does;
        imperative calls are not monitored (as in MXNet)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize every HybridBlock child (a plain Block itself stays imperative)."""
        check_hybridize_options(type(self).__name__, kwargs)
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        for name, child in self._children.items():
            lines.append("  (" + name + "): " + repr(child).replace("\n", "\n  "))
        return "\n".join(lines) + "\n)" if self._children else f"{type(self).__name__}()"


_autograd_entry = operator.attrgetter("_ag")


class _HookHandle:
    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def detach(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class HybridBlock(Block):
    """A block whose ``forward`` uses only ``mx.np``/``mx.npx`` ops, so it can be compiled.

    ``hybridize()``: the first call per input signature traces ``forward`` into a
    Symbol (deferred compute) and compiles it with ``jax.jit``; later calls run the
    compiled program.  ``hybridize(active=False)`` goes back to imperative calls.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_cache", compile_cache.Programs("block"))
        object.__setattr__(self, "_op_hook", None)
        object.__setattr__(self, "_trace_lock", threading.RLock())  # one thread traces a signature
        object.__setattr__(self, "_checked_epoch", -1)  # the structure epoch last compared
        object.__setattr__(self, "_traced_structure", None)

    def __getstate__(self) -> dict:
        """Pickled without compiled programs and locks (a copy traces again on its first call), so a
        hybridized block can go to DataLoader workers."""
        state = dict(self.__dict__)
        for name in ("_cache", "_trace_lock", "_checked_epoch", "_traced_structure"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        object.__setattr__(self, "_cache", compile_cache.Programs("block"))
        object.__setattr__(self, "_trace_lock", threading.RLock())
        object.__setattr__(self, "_checked_epoch", -1)
        object.__setattr__(self, "_traced_structure", None)

    def hybridize(self, active: bool = True, static_alloc: bool = False, static_shape: bool = False,
                  **kwargs: Any) -> None:
        check_hybridize_options(type(self).__name__, kwargs)
        object.__setattr__(self, "_active", bool(active))
        flags = dict(static_alloc=static_alloc, static_shape=static_shape, **kwargs)
        backend = flags.pop("backend", None)
        if isinstance(backend, str):  # hybridize(backend=..., backend_opts=...), as optimize_for
            options = dict(flags.pop("backend_opts", None) or {})
            check_backend_options(f"{type(self).__name__}.hybridize", backend, options)
            flags["backend"] = (backend, options)
        object.__setattr__(self, "_flags", flags)
        compile_cache.drop(self._cache)  # re-hybridizing rebuilds
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape, **kwargs)

    def optimize_for(self, x: Any, *args: Any, backend: str | None = None, clear: bool = False,
                     partition_if_dynamic: bool = True, static_alloc: bool = False, static_shape: bool = False,
                     inline_limit: int = 2, forward_bulk_size: int | None = None,
                     backward_bulk_size: int | None = None, backend_opts: dict | None = None,
                     **kwargs: Any) -> None:
        """Hybridize with the graph partitioned by ``backend`` and build it with one forward pass
        (no ``backend``: keep the previous one, unless ``clear``).

        The backend options are ``backend_opts`` (MXNet 1.9) and the other keywords (MXNet 2.0);
        a name the backend does not declare is an MXNetError (a backend that declares no
        options takes any, see ``SubgraphProperty.accepted_options``).
        """
        owner = f"{type(self).__name__}.optimize_for"
        options = dict(backend_opts or {}, **kwargs)
        chosen: dict = {}
        if backend:
            check_backend_options(owner, backend, options)
            chosen = {"backend": backend, "backend_opts": options}
        elif any(k not in PARTITION_OPTIONS for k in options):
            # MXNet drops these unread (so a misspelled ``backend=`` went unnoticed): refuse instead
            raise MXNetError(f"{owner}: backend options {sorted(options)} given without a backend")
        previous = None if clear else self._flags.get("backend")
        self.hybridize(True, static_alloc=static_alloc, static_shape=static_shape,
                       partition_if_dynamic=partition_if_dynamic, inline_limit=inline_limit,
                       forward_bulk_size=forward_bulk_size, backward_bulk_size=backward_bulk_size, **chosen)
        if backend is None:
            self._flags["backend"] = previous
        self(x, *args)

    def _imperative(self, *args: Any) -> Any:
        return self._forward_compat(*args)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if not (args and isinstance(args[0], NDArray)) and not has_array((args, kwargs), _ARRAY_TYPES):
            raise ValueError(f"{type(self).__name__}: a HybridBlock needs at least one array among its "
                             f"inputs, got ({', '.join(type(a).__name__ for a in args)})")
        if has_symbol(args):  # 1.x: a block called on Symbols builds its graph on them
            return call_on_symbols(self, args, kwargs)
        if not self._active or dc.is_deferred_compute() or kwargs:
            return self._forward_compat(*args, **kwargs)
        if _profiler._program_hook is not None:  # the profiler records the call as one event
            return _profiler._program_hook(type(self).__name__, self._call_cached, args)
        return self._call_cached(*args)

    def _is_legacy(self) -> bool:
        """Whether this block computes through MXNet 1.x's ``hybrid_forward`` (it has no ``forward``)."""
        return type(self).forward is HybridBlock.forward and hasattr(self, "hybrid_forward")

    def _forward_compat(self, *args: Any, **kwargs: Any) -> Any:
        """``forward``; or MXNet 1.x's ``hybrid_forward(F, x, **params)`` with F = ``mx.nd``."""
        if self._is_legacy():
            return call_imperative(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def infer_shape(self, *args: Any) -> None:
        """Fill in unknown parameter shapes from the inputs (a 1.x block: from its symbolic graph)."""
        if self._is_legacy() and any(not _known(p.shape) for p in self._reg_params.values()):
            infer_parameter_shapes(self, args)
            return
        super().infer_shape(*args)

    def infer_type(self, *args: Any) -> None:
        """Set each parameter's dtype to what the graph infers from the inputs' dtypes."""
        arrays = [a if a is None or isinstance(a, NDArray) else np_class()._wrap(jnp.asarray(a)) for a in args]
        symbol, names, named, _ = self._trace(arrays, _config.is_training())
        given = {n: a.dtype for n, a in zip(names, [a for a in arrays if a is not None])}
        arg_types, _, aux_types = symbol.infer_type(**given)
        if arg_types is None:
            raise MXNetError(f"{type(self).__name__}.infer_type: cannot infer the parameters' dtypes from "
                             f"inputs {given}")
        inferred = dict(zip(symbol.list_arguments(), arg_types))
        inferred.update(zip(symbol.list_auxiliary_states(), aux_types))
        for name, param in named:
            if name in inferred:
                param.dtype = onp.dtype(inferred[name])

    def register_op_hook(self, callback: Callable, monitor_all: bool = False) -> None:
        object.__setattr__(self, "_op_hook", (callback, bool(monitor_all)))
        super().register_op_hook(callback, monitor_all)

    # -- the cached op -------------------------------------------------------------------------
    @_config.with_x64  # traces, compiles and runs the graph: 64-bit types on
    def _call_cached(self, *args: Any) -> Any:
        # an omitted optional input (None) is part of the signature: forward sees it as None
        arrays = [a if a is None or isinstance(a, NDArray) else np_class()._wrap(jnp.asarray(a)) for a in args]
        training = _config.is_training()
        key = (tuple(None if a is None else (a._data.shape, a._data.dtype) for a in arrays), training)
        if self._checked_epoch != _structure_epoch[0]:
            self._check_structure()
        entry = compile_cache.lookup(self._cache, key)
        first = entry is None
        if first:
            entry = self._build_once(key, arrays, training)
        rng = _rng.next_key() if entry.random else None
        inputs = [a for a in arrays if a is not None]
        inputs.extend([p._check() for p in entry.params])  # their arrays (initialized: traced already)
        if entry.segmented is not None:  # dynamic-shape ops: static segments compiled, dynamic ops eager
            results = tuple(entry.segmented(inputs, rng))
        elif autograd.is_recording() and any(map(_autograd_entry, inputs)):
            # ONE tape node: the compiled program (the key rides along as an input), deferred so that
            # backward can compile forward, loss and VJP together
            inputs.append(rng)
            results = _tape.record(entry.tape_key, entry.tape_fn, inputs, None, type(self).__name__, defer=True)
        else:
            try:
                args = tuple(x.to_jax() for x in inputs)
                if entry.relaid is not None:
                    raw = entry.relaid(relaid_inputs(args, entry.weight_layouts, entry.relaid_held), rng)
                else:
                    raw = entry.compiled(args, rng)
            except MXNetError:
                raise
            except Exception as err:  # a check inside the program (while_loop's max_iterations) failed
                lines = [line for line in str(err).splitlines() if line.strip()]
                raise MXNetError(f"{type(self).__name__}: {lines[-1] if lines else err}") from None
            results = tuple(np_class()._wrap(o) for o in raw)
            if first:  # the program is compiled now: count its size
                compile_cache.grow(self._cache, key, compile_cache.executable_bytes(entry.compiled, args, rng), 0)
        results = results if isinstance(results, tuple) else (results,)
        outs, updates = results[:entry.n_out], results[entry.n_out:]
        if self._op_hook is not None:
            run_op_hook(entry, inputs[:len(entry.input_names)], rng, *self._op_hook)
        for param, value in zip(entry.aux_targets, updates):
            param.data()._take_value(value)
        return outs if entry.multi else outs[0]

    def _check_structure(self) -> None:
        """Some block tree changed: if it is this one (a child or parameter added, replaced or removed,
        a cast), drop the traced graphs so the next call traces the new structure."""
        with self._trace_lock:
            epoch = _structure_epoch[0]
            structure = self._structure()
            if self._traced_structure is not None and structure != self._traced_structure:
                compile_cache.drop(self._cache)
            object.__setattr__(self, "_traced_structure", structure)
            object.__setattr__(self, "_checked_epoch", epoch)

    def _build_once(self, key: tuple, arrays: list[NDArray], training: bool) -> CachedGraph:
        """The entry for ``key``, traced by one thread while others calling with it wait."""
        with self._trace_lock:
            entry = self._cache.program(key)
            if entry is None:
                entry = compile_cache.store(self._cache, key, self._build(arrays, training))
        return entry

    def _build(self, arrays: list[NDArray], training: bool) -> CachedGraph:
        """One entry of the cached op: the graph of ``forward`` for this signature, compiled."""
        symbol, data_names, named, multi = self._trace(arrays, training)
        if self._flags.get("backend"):
            name, options = self._flags["backend"]
            symbol = symbol.optimize_for(name, **options)
        return CachedGraph(symbol, data_names, dict(named), multi, training,
                            self._flags.get("partition_if_dynamic", True))

    def compile_stats(self) -> dict:
        """What the cached op compiled, per input signature: for graphs with dynamic-shape ops, the
        static segments, how many input signatures each compiled and how many calls ran eagerly."""
        stats = {}
        for (signature, training), entry in self._cache.programs():
            shapes = tuple(s[0] if s else None for s in signature)
            if entry.segmented is not None:
                stats[(shapes, training)] = entry.segmented.compile_stats()
            else:
                stats[(shapes, training)] = {"segments": 1, "dynamic_ops": 0, "compiled": [1],
                                             "calls": None, "eager_calls": [0]}
        return stats

    def _trace(self, arrays: list[NDArray | None], training: bool) -> tuple:
        """``forward`` under deferred compute: (Symbol, data input names, [(name, Parameter)], multi-output).

        ``None`` entries are omitted optional inputs: ``forward`` gets None there, the graph no input.
        """
        try:  # deferred-shape parameters get their shapes from an imperative first call
            for p in self.collect_params().values():
                p._check()
        except DeferredInitializationError:  # in predict mode, so BatchNorm's running stats stay put
            with autograd.pause(False):
                self._forward_compat(*arrays)
        if self._is_legacy():  # 1.x: hybrid_forward(mx.sym, ...) builds the graph itself
            return trace_symbolic(self, arrays, training)
        named = self.collect_params()  # structural names, relative to this block
        params = list(named.values())
        present = [a for a in arrays if a is not None]
        names = input_names(arrays)
        values = [p.data() for p in params]
        with autograd.pause(training), dc.context(), tracing(type(self).__name__):
            dc.set_variable(present, [var(n) for n in names])
            dc.set_variable(values, [var(n) for n in named])
            out = self._forward_compat(*arrays)
            multi = isinstance(out, (tuple, list))
            outs = list(out) if multi else [out]
            for i, o in enumerate(outs):
                if not isinstance(o, NDArray):
                    raise MXNetError(f"{type(self).__name__}.forward returned {type(o).__name__} as output {i}; "
                                     "a hybridized forward must return arrays")
            symbol = dc.get_symbol(outs, check_inputs=False)  # unused parameters are fine in Gluon
        dc.clear(present + values)
        return symbol, names, list(named.items()), multi

    # -- export --------------------------------------------------------------------------------
    def _traced_graph(self) -> CachedGraph | None:
        """The graph traced for the first signature still kept (what ``export`` writes), or None."""
        programs = self._cache.programs()
        return programs[0][1] if programs else None

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> tuple[str, str]:
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` keys), as MXNet does."""
        graph = self._traced_graph()
        if graph is None:
            raise MXNetError(f"{type(self).__name__}.export: call hybridize() and run a forward pass first")
        symbol = graph.symbol
        symbol_file, params_file = f"{path}-symbol.json", f"{path}-{epoch:04d}.params"
        by_name = self.collect_params()
        aux = set(symbol.list_auxiliary_states())
        arrays = {}
        for name in symbol.list_inputs():
            if name in by_name:
                arrays[("aux:" if name in aux else "arg:") + name] = by_name[name].data()
        params = io.BytesIO()
        save(params, arrays)
        # both files are complete before either replaces an old one: the pair is never mixed
        atomic_write_group({symbol_file: symbol.tojson(), params_file: params.getvalue()})
        return symbol_file, params_file

    def forward(self, *args: Any) -> Any:
        raise MXNetError(f"{type(self).__name__} must define forward(self, *args)")

