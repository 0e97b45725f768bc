"""Gluon ``Block`` (children, parameters, hooks; saving and loading in ``_block_files``) and
``HybridBlock`` (hybridize into XLA; the cached op in ``_cached_op``).

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
import itertools
import re
import threading
from collections import OrderedDict
from typing import Any, Callable, Iterator

import jax
import numpy as onp

from .. import _deferred_compute as dc
from ..graph import compile_cache
from .. import autograd
from .. import profiler as _profiler
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from ..device import Device
from .._ndarray import NDArray
from ..subgraph.property import PARTITION_OPTIONS, check_backend_options
from ..symbol import Symbol
from ._arguments import check_hybridize_options, has_array, init_keywords, reject_unknown
from ._block_files import ParameterFiles
from ._cached_op import CachedOp, children_imperative, structure_changed
from ._nesting import as_class
from ._hybrid_forward import ParameterDict, call_imperative, call_on_symbols, has_symbol, infer_parameter_shapes
from ._summary import print_summary
from .parameter import DeferredInitializationError, Parameter, _known

__all__ = ["Block", "HybridBlock"]

_ARRAY_TYPES = (NDArray, Symbol, onp.ndarray, jax.Array)  # what a HybridBlock's inputs must include


_serials = itertools.count()


class Block(ParameterFiles):
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
            structure_changed()
        elif name in self.__dict__.get("_children", ()):  # a child replaced by something else: gone
            del self._children[name]
            structure_changed()
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        """Deleting a child or parameter attribute removes it from the block (and re-traces hybridized
        ancestors at their next call)."""
        if name in self.__dict__.get("_children", ()):
            del self._children[name]
            structure_changed()
        if name in self.__dict__.get("_reg_params", ()):
            del self._reg_params[name]
            structure_changed()
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
        structure_changed()

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
        structure_changed()
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
        structure_changed()

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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hook in self._forward_pre_hooks:
            hook(self, args)
        try:
            out = self._call(*args, **kwargs)
        except DeferredInitializationError:
            self._finish_deferred(*args)
            out = self._call(*args, **kwargs)
        if args and type(args[0]) is NDArray:  # 1.x: mx.nd arrays in, mx.nd arrays out, as MXNet 1.9.1
            out = as_class(out, NDArray)        # gives them (MXNet 2.0's blocks refuse mx.nd inputs)
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
        return "\n".join(lines) + "\n)" if self._children else f"{type(self).__name__}(\n\n)"  # (MXNet's, empty)




class _HookHandle:
    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def detach(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class HybridBlock(CachedOp, Block):
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
        if not self._active or dc.is_deferred_compute() or kwargs or children_imperative():
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

    def register_op_hook(self, callback: Callable, monitor_all: bool = False) -> None:
        object.__setattr__(self, "_op_hook", (callback, bool(monitor_all)))
        super().register_op_hook(callback, monitor_all)

    def forward(self, *args: Any) -> Any:
        raise MXNetError(f"{type(self).__name__} must define forward(self, *args)")

