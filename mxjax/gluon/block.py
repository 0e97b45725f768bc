"""Gluon ``Block`` (children, parameters, hooks, save/load) and ``HybridBlock`` (hybridize into XLA).

``HybridBlock.hybridize()`` makes the block trace its ``forward`` under deferred
compute into a Symbol the first time it sees an input signature, then run that
graph as one ``jax.jit`` program.  Under ``autograd.record()`` a hybridized call
is ONE tape node whose VJP is compiled with it; BatchNorm's running statistics
come back from the same program and are written into their parameters.
"""
from __future__ import annotations

import itertools
import operator
import re
from collections import OrderedDict
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config, _deferred_compute as dc
from .. import _rng, _tape, autograd, initializer
from .. import profiler as _profiler
from ..base import MXNetError, MXNetValueError
from ..device import Device
from .._ndarray import NDArray, np_class
from ..ndarray._io import load, save
from ..subgraph import get_backend
from ..symbol import var
from ..dynamic.segments import SegmentedGraph, dynamic_ops
from ..symbol.interpret import graph_program, is_random
from .parameter import DeferredInitializationError, Parameter, _known

__all__ = ["Block", "HybridBlock"]

_serials = itertools.count()  # one per compiled cached-op entry: its tape key


class Block:
    """The base of every Gluon layer and model: owns child blocks and parameters."""

    def __init__(self) -> None:
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        object.__setattr__(self, "_forward_hooks", [])
        object.__setattr__(self, "_forward_pre_hooks", [])

    # -- registration (MXNet's attribute-assignment API) -------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def register_child(self, block: "Block", name: str | None = None) -> None:
        """Add a child block (named by its attribute, or by its position for Sequential)."""
        if "_children" not in self.__dict__:
            raise MXNetError(f"{type(self).__name__}: call super().__init__() before assigning children")
        self._children[name if name is not None else str(len(self._children))] = block

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

    def collect_params(self, select: str | None = None) -> dict[str, Parameter]:
        """Parameters by structural name (``0.weight``, ``features.1.bias``), optionally regex-selected."""
        out: dict[str, Parameter] = OrderedDict()
        seen: set[int] = set()
        pattern = re.compile(select) if select else None
        for name, param in self._collect():
            if id(param) in seen or (pattern is not None and not pattern.match(name)):
                continue
            seen.add(id(param))
            out[name] = param
        return out

    def initialize(self, init: Any = None, device: Device | None = None, verbose: bool = False,
                   force_reinit: bool = False, ctx: Device | None = None) -> None:
        """Initialize every parameter (deferred for those whose shape waits for the first input)."""
        default = init if init is not None else initializer.Uniform()
        for param in self.collect_params().values():
            param.initialize(None, device or ctx, default_init=default, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        for param in self.collect_params().values():
            param.zero_grad()

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
        """Load a ``save_parameters`` (or ``export``: ``arg:``/``aux:``) file into this block's parameters."""
        loaded = load(filename)
        if not isinstance(loaded, dict):
            raise MXNetError(f"load_parameters: {filename} holds an unnamed list of arrays, not parameters")
        loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
        params = self.collect_params()
        missing = [n for n in params if n not in loaded]
        if missing and not allow_missing:
            raise MXNetError(f"load_parameters: {filename} has no values for parameters {missing} of "
                             f"{type(self).__name__}; pass allow_missing=True to keep their current values")
        extra = [n for n in loaded if n not in params]
        if extra and not ignore_extra:
            raise MXNetError(f"load_parameters: {filename} has values for {extra}, which "
                             f"{type(self).__name__} does not have; pass ignore_extra=True to skip them")
        for name, param in params.items():
            if name not in loaded:
                continue
            value = loaded[name]
            if param.shape is not None and all(d > 0 for d in param.shape) and tuple(param.shape) != value.shape:
                raise MXNetError(f"load_parameters: parameter {name!r} of {type(self).__name__} has shape "
                                 f"{param.shape}, the file has {value.shape}")
            if cast_dtype and dtype_source == "current":
                value = value.astype(param.dtype)
            elif cast_dtype:
                param.dtype = onp.dtype(value.dtype)
            param.set_data(value)

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
        rows: list[tuple[str, str, int]] = []
        handles = []
        seen: set[int] = set()

        def visit(block: "Block", name: str) -> None:
            def hook(blk: "Block", args: Any, out: Any) -> None:
                outs = out if isinstance(out, (tuple, list)) else [out]
                shapes = ", ".join(str(tuple(o.shape)) for o in outs if isinstance(o, NDArray))
                count = 0
                for p in blk._reg_params.values():
                    if id(p) not in seen and p.shape is not None:
                        seen.add(id(p))
                        count += int(onp.prod(p.shape))
                rows.append((f"{name}({type(blk).__name__})", shapes, count))
            handles.append(block.register_forward_hook(hook))
            for child_name, child in block._children.items():
                visit(child, f"{name}.{child_name}" if name else child_name)

        visit(self, type(self).__name__.lower())
        flags = [(b, b._active) for b in _hybrid_blocks(self)]
        try:
            for block, _ in flags:  # imperatively, so every child's hook fires
                object.__setattr__(block, "_active", False)
            with autograd.pause():
                self(*inputs)
        finally:
            for block, active in flags:
                object.__setattr__(block, "_active", active)
            for handle in handles:
                handle.detach()
        width = max(len(r[0]) for r in rows) + 2
        line = "-" * (width + 45)
        print(line)
        print(f"{'Layer (type)':<{width}}{'Output Shape':<30}{'Param #':>15}")
        print("=" * (width + 45))
        print(f"{'Input':<{width}}{', '.join(str(tuple(x.shape)) for x in inputs):<30}{0:>15}")
        for name, shape, count in rows:
            print(f"{name:<{width}}{shape:<30}{count:>15}")
        total = sum(r[2] for r in rows)
        trainable = sum(int(onp.prod(p.shape)) for p in self.collect_params().values()
                        if p.grad_req != "null" and p.shape is not None)
        print("=" * (width + 45))
        print(f"Parameters in forward computation graph, duplicate included\n   Total params: {total}\n"
              f"   Trainable params: {trainable}\n   Non-trainable params: {total - trainable}")
        print(line)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize every HybridBlock child (a plain Block itself stays imperative)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}("]
        for name, child in self._children.items():
            lines.append("  (" + name + "): " + repr(child).replace("\n", "\n  "))
        return "\n".join(lines) + "\n)" if self._children else f"{type(self).__name__}()"


def _hybrid_blocks(block: Block) -> list:
    found = [block] if isinstance(block, HybridBlock) else []
    for child in block._children.values():
        found.extend(_hybrid_blocks(child))
    return found


class _CachedGraph:
    """One entry of a HybridBlock's cached op: the traced graph, compiled as one program, or as
    static segments around its dynamic-shape ops."""

    def __init__(self, symbol: Any, data_names: list[str], by_name: dict, multi: bool, training: bool,
                 partition_if_dynamic: bool) -> None:
        self.symbol, self.multi = symbol, multi
        inputs = symbol.list_inputs()
        self.params = [by_name[n] for n in inputs if n in by_name]
        input_names = list(data_names) + [n for n in inputs if n in by_name]
        # in training the program also returns the new auxiliary states (BatchNorm's running stats)
        aux_names = [n for n in symbol.list_auxiliary_states() if n in by_name] if training else []
        self.aux_targets = [by_name[n] for n in aux_names]
        self.n_out = len(symbol._outputs)
        self.random = is_random(symbol._outputs)
        self.serial = next(_serials)
        self.segmented = None
        dynamic = dynamic_ops(symbol._outputs)
        if dynamic:
            if not partition_if_dynamic:
                raise MXNetError(f"hybridize(partition_if_dynamic=False): the graph has dynamic-shape ops "
                                 f"{dynamic}, which cannot be part of one static program; leave "
                                 "partition_if_dynamic=True to run them between compiled segments")
            self.segmented = SegmentedGraph(symbol._outputs, input_names, aux_names, training)
            return
        self.compiled = compiled = jax.jit(graph_program(symbol._outputs, input_names, aux_names, training))
        # what the autograd tape records for a call: one node (the rng key rides along as the last input)
        self.tape_key = ("hybrid", self.serial)
        self.tape_fn = lambda *a: compiled(a[:-1], a[-1])


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

    def __init__(self) -> None:
        super().__init__()
        object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_cache", {})

    def hybridize(self, active: bool = True, static_alloc: bool = False, static_shape: bool = False,
                  **kwargs: Any) -> None:
        object.__setattr__(self, "_active", bool(active))
        flags = dict(static_alloc=static_alloc, static_shape=static_shape, **kwargs)
        backend = flags.pop("backend", None)
        if isinstance(backend, str):  # hybridize(backend=..., backend_opts=...), as optimize_for
            get_backend(backend)
            flags["backend"] = (backend, dict(flags.pop("backend_opts", None) or {}))
        object.__setattr__(self, "_flags", flags)
        object.__setattr__(self, "_cache", {})  # re-hybridizing rebuilds
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape, **kwargs)

    def optimize_for(self, x: Any, *args: Any, backend: str | None = None, clear: bool = False,
                     partition_if_dynamic: bool = True, static_alloc: bool = False, static_shape: bool = False,
                     backend_opts: dict | None = None, **kwargs: Any) -> None:
        """Hybridize with the graph partitioned by ``backend`` and build it with one forward pass
        (no ``backend``: keep the previous one, unless ``clear``)."""
        previous = None if clear else self._flags.get("backend")
        chosen = {"backend": backend, "backend_opts": dict(backend_opts or {}, **kwargs)} if backend else {}
        self.hybridize(True, static_alloc=static_alloc, static_shape=static_shape,
                       partition_if_dynamic=partition_if_dynamic, **chosen)
        if backend is None:
            self._flags["backend"] = previous
        self(x, *args)

    def _imperative(self, *args: Any) -> Any:
        return self._forward_compat(*args)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if not self._active or dc.is_deferred_compute() or kwargs:
            return self._forward_compat(*args, **kwargs)
        if _profiler._program_hook is not None:  # the profiler records the call as one event
            return _profiler._program_hook(type(self).__name__, self._call_cached, args)
        return self._call_cached(*args)

    def _forward_compat(self, *args: Any, **kwargs: Any) -> Any:
        """``forward``; or MXNet 1.x's ``hybrid_forward(F, x, *params)`` with F the imperative namespace."""
        if type(self).forward is HybridBlock.forward and hasattr(self, "hybrid_forward"):
            from .. import numpy as np_namespace, nd
            F = np_namespace if _config.is_np_array() else nd  # noqa: N806  (MXNet's name)
            params = {name: p.data() for name, p in self._reg_params.items()}
            return self.hybrid_forward(F, *args, **params, **kwargs)
        return self.forward(*args, **kwargs)

    # -- the cached op -------------------------------------------------------------------------
    @_config.with_x64  # traces, compiles and runs the graph: 64-bit types on
    def _call_cached(self, *args: Any) -> Any:
        # an omitted optional input (None) is part of the signature: forward sees it as None
        arrays = [a if a is None or isinstance(a, NDArray) else np_class()._wrap(jnp.asarray(a)) for a in args]
        training = _config.is_training()
        key = (tuple(None if a is None else (a._data.shape, a._data.dtype) for a in arrays), training)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._build(arrays, training)
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
                raw = entry.compiled(tuple(x.to_jax() for x in inputs), rng)
            except MXNetError:
                raise
            except Exception as err:  # a check inside the program (while_loop's max_iterations) failed
                lines = [line for line in str(err).splitlines() if line.strip()]
                raise MXNetError(f"{type(self).__name__}: {lines[-1] if lines else err}") from None
            results = tuple(np_class()._wrap(o) for o in raw)
        results = results if isinstance(results, tuple) else (results,)
        outs, updates = results[:entry.n_out], results[entry.n_out:]
        for param, value in zip(entry.aux_targets, updates):
            param.data()._take_value(value)
        return outs if entry.multi else outs[0]

    def _build(self, arrays: list[NDArray], training: bool) -> "_CachedGraph":
        """One entry of the cached op: the graph of ``forward`` for this signature, compiled."""
        symbol, data_names, named, multi = self._trace(arrays, training)
        if self._flags.get("backend"):
            name, options = self._flags["backend"]
            symbol = symbol.optimize_for(name, **options)
        return _CachedGraph(symbol, data_names, dict(named), multi, training,
                            self._flags.get("partition_if_dynamic", True))

    def compile_stats(self) -> dict:
        """What the cached op compiled, per input signature: for graphs with dynamic-shape ops, the
        static segments, how many input signatures each compiled and how many calls ran eagerly."""
        stats = {}
        for (signature, training), entry in self._cache.items():
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
        named = self.collect_params()  # structural names, relative to this block
        params = list(named.values())
        present = [a for a in arrays if a is not None]
        names = [f"data{i}" if len(arrays) > 1 else "data" for i, a in enumerate(arrays) if a is not None]
        values = [p.data() for p in params]
        with autograd.pause(training), dc.context():
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
    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> tuple[str, str]:
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` keys), as MXNet does."""
        if not self._cache:
            raise MXNetError(f"{type(self).__name__}.export: call hybridize() and run a forward pass first")
        symbol = next(iter(self._cache.values())).symbol
        symbol_file, params_file = f"{path}-symbol.json", f"{path}-{epoch:04d}.params"
        symbol.save(symbol_file)
        by_name = self.collect_params()
        aux = set(symbol.list_auxiliary_states())
        arrays = {}
        for name in symbol.list_inputs():
            if name in by_name:
                arrays[("aux:" if name in aux else "arg:") + name] = by_name[name].data()
        save(params_file, arrays)
        return symbol_file, params_file

    def forward(self, *args: Any) -> Any:
        raise MXNetError(f"{type(self).__name__} must define forward(self, *args)")

