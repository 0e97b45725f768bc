"""A hybridized block's cached op: the graph of ``forward`` traced once per input signature,
compiled, kept in the compile cache, and run -- as one tape node under ``autograd.record()``;
``infer_type`` reads the parameters' dtypes off the traced graph, ``export`` writes it.

:class:`CachedOp` is a base class of ``HybridBlock``.  Any change of a block tree's structure
moves ``_structure_epoch`` (``structure_changed``); a hybridized block compares its structure
again only when it moved.
"""
from __future__ import annotations

import contextlib
import contextvars
import io
import operator
from typing import Any

import jax.numpy as jnp
import numpy as onp

from .. import _config, _deferred_compute as dc
from .. import _rng, _tape, autograd
from .._atomic import atomic_write_group
from .._invoke import np_class
from .._ndarray import NDArray
from .._value_reads import tracing
from ..base import MXNetError
from ..graph import compile_cache
from ..ndarray._io import save
from ..symbol import var
from ._cached_graph import CachedGraph, run_op_hook
from ._hybrid_forward import input_names, trace_symbolic
from ._nesting import flat_inputs, flat_outputs, regroup
from .parameter import DeferredInitializationError

__all__ = ["CachedOp", "children_imperative", "structure_changed"]

# Bumped by every change of any block tree's structure (a child or parameter added, replaced or
# removed, a cast): a hybridized block compares its structure again only when this moved.
_structure_epoch = [0]


def structure_changed() -> None:
    _structure_epoch[0] += 1


# True while a block runs imperatively to learn its deferred parameter shapes: its hybridized
# children run their forward as it is instead of compiling programs of their own (resnet18_v1
# compiled 44 programs nobody would call again; MXNet infers the shapes without them too).
_shape_run: contextvars.ContextVar = contextvars.ContextVar("mxjax_shape_run", default=False)
# Whether hybridized blocks run imperatively now (a parent is learning its parameter shapes).
children_imperative = _shape_run.get


@contextlib.contextmanager
def _imperative_children():
    token = _shape_run.set(True)
    try:
        yield
    finally:
        _shape_run.reset(token)


_autograd_entry = operator.attrgetter("_ag")


def _placement_error(block: str, inputs: list, n_data: int, params: list) -> MXNetError | None:
    """The error of a call whose inputs and parameters are not all on one device (MXNet refuses it
    too), naming where each is; None when they are on one device."""
    where: dict = {}
    for k, x in enumerate(inputs):
        label = f"input {k}" if k < n_data else f"parameter {params[k - n_data].name!r}"
        where.setdefault(x._where(), []).append((label, x.device))
    if len(where) < 2:
        return None
    groups = "; ".join(f"{', '.join(label for label, _ in found)} on {found[0][1]}" for found in where.values())
    return MXNetError(f"{block}: the inputs and parameters of one call must be on one device, got {groups}; "
                      "move the inputs (x.as_in_context(device)) or the block (block.reset_device(device))")


def _input_arrays(args: tuple) -> tuple[list, Any]:
    """A call's inputs as the cached op takes them: flat (the arrays of its lists of arrays, an LSTM's
    states, are inputs of their own; their nesting, or None, is returned beside), other values as
    arrays; an omitted optional input (None) stays None, part of the signature: ``forward`` sees it."""
    flat, nesting = flat_inputs(args)
    return [a if a is None or isinstance(a, NDArray) else np_class()._wrap(jnp.asarray(a)) for a in flat], nesting


class CachedOp:
    """The cached op of a hybridized block (a base class of ``HybridBlock``)."""

    @_config.with_x64  # traces, compiles and runs the graph: 64-bit types on
    def _call_cached(self, *args: Any) -> Any:
        arrays, nesting = _input_arrays(args)
        training = _config.is_training()
        key = (tuple(None if a is None else (a._data.shape, a._data.dtype) for a in arrays), training)
        if nesting is not None:
            key += (nesting,)
        if self._checked_epoch != _structure_epoch[0]:
            self._check_structure()
        entry = compile_cache.lookup(self._cache, key)
        first = entry is None
        if first:
            entry = self._build_once(key, arrays, training, nesting)
        rng = _rng.next_key() if entry.random else None
        inputs = [a for a in arrays if a is not None]
        out_cls = np_class()  # (mx.nd arrays in: Block.__call__ gives them back as mx.nd)
        inputs.extend([p._check() for p in entry.params])  # their arrays (initialized: traced already)
        if entry.segmented is not None:  # dynamic-shape ops: static segments compiled, dynamic ops eager
            results = tuple(entry.segmented(inputs, rng))
        elif autograd.is_recording() and any(map(_autograd_entry, inputs)):
            # ONE tape node: the compiled program (the key rides along as an input), deferred so that
            # backward can compile forward, loss and VJP together
            inputs.append(rng)
            results = _tape.record(entry.tape_key, entry.tape_fn, inputs, out_cls, type(self).__name__, defer=True)
        else:
            try:
                args = tuple(x.to_jax() for x in inputs)
                program, call = (entry.compiled, (args, rng)) if entry.inference is None else \
                    entry.inference.prepare(args, rng)
                raw = program(*call)
            except MXNetError:
                raise
            except Exception as err:  # a check inside the program (while_loop's max_iterations) failed
                placement = _placement_error(type(self).__name__, inputs, len(inputs) - len(entry.params),
                                             entry.params)
                if placement is not None:
                    raise placement from None
                lines = [line for line in str(err).splitlines() if line.strip()]
                raise MXNetError(f"{type(self).__name__}: {lines[-1] if lines else err}") from None
            results = tuple(out_cls._wrap(o) for o in raw)
            if first:  # the program is compiled now: count its size
                compile_cache.grow(self._cache, key, compile_cache.executable_bytes(program, *call), 0)
        results = results if isinstance(results, tuple) else (results,)
        outs, updates = results[:entry.n_out], results[entry.n_out:]
        if self._op_hook is not None:
            run_op_hook(entry, inputs[:len(entry.input_names)], rng, *self._op_hook)
        for param, value in zip(entry.aux_targets, updates):
            param.data()._take_value(value)
        if type(entry.multi) is tuple:  # nested outputs (the new states beside the output)
            return regroup(outs, entry.multi)
        return list(outs) if entry.multi else outs[0]  # (a list, as MXNet's hybridized blocks give)

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

    def _build_once(self, key: tuple, arrays: list[NDArray], training: bool, nesting: Any = None) -> CachedGraph:
        """The entry for ``key``, traced by one thread while others calling with it wait."""
        with self._trace_lock:
            entry = self._cache.program(key)
            if entry is None:
                entry = compile_cache.store(self._cache, key, self._build(arrays, training, nesting))
        return entry

    def _build(self, arrays: list[NDArray], training: bool, nesting: Any = None) -> CachedGraph:
        """One entry of the cached op: the graph of ``forward`` for this signature, compiled."""
        symbol, data_names, named, multi = self._trace(arrays, training, nesting)
        if self._flags.get("backend"):
            name, options = self._flags["backend"]
            symbol = symbol.optimize_for(name, **options)
        return CachedGraph(symbol, data_names, dict(named), multi, training,
                            self._flags.get("partition_if_dynamic", True))

    def compile_stats(self) -> dict:
        """What the cached op compiled, per input signature: for graphs with dynamic-shape ops, the
        static segments, how many input signatures each compiled and how many calls ran eagerly."""
        stats = {}
        for (signature, training, *_), entry in self._cache.programs():
            shapes = tuple(s[0] if s else None for s in signature)
            if entry.segmented is not None:
                stats[(shapes, training)] = entry.segmented.compile_stats()
            else:
                stats[(shapes, training)] = {"segments": 1, "dynamic_ops": 0, "compiled": [1],
                                             "calls": None, "eager_calls": [0]}
        return stats

    def _trace(self, arrays: list[NDArray | None], training: bool, nesting: Any = None) -> tuple:
        """``forward`` under deferred compute: (Symbol, data input names, [(name, Parameter)], multi-output:
        False, True, or the format of nested outputs (see ``_nesting.flatten``)).

        ``None`` entries are omitted optional inputs: ``forward`` gets None there, the graph no input.
        ``nesting``: the format of nested inputs, whose arrays ``arrays`` lists flat.
        """
        call = arrays if nesting is None else regroup(arrays, nesting)
        try:  # deferred parameters: initialized where their shapes are known (after infer_shape), else
            for p in self.collect_params().values():  # they get their shapes from an imperative first call
                p._finish_deferred_init()
                p._check()
        except DeferredInitializationError:  # in predict mode, so BatchNorm's running stats stay put
            with autograd.pause(False), _imperative_children():
                self._forward_compat(*call)
        if self._is_legacy():  # 1.x: hybrid_forward(mx.sym, ...) builds the graph itself
            return trace_symbolic(self, arrays, training, nesting)
        named = self.collect_params()  # structural names, relative to this block
        params = list(named.values())
        present = [a for a in arrays if a is not None]
        names = input_names(arrays)
        values = [p.data() for p in params]
        with autograd.pause(training), dc.context(), tracing(type(self).__name__):
            dc.set_variable(present, [var(n) for n in names])
            dc.set_variable(values, [var(n) for n in named])
            out = self._forward_compat(*call)
            outs, multi = flat_outputs(out)
            for i, o in enumerate(outs):
                if not isinstance(o, NDArray):
                    raise MXNetError(f"{type(self).__name__}.forward returned {type(o).__name__} as output {i}; "
                                     "a hybridized forward must return arrays")
            symbol = dc.get_symbol(outs, check_inputs=False)  # unused parameters are fine in Gluon
        dc.clear(present + values)
        return symbol, names, list(named.items()), multi

    def infer_type(self, *args: Any) -> None:
        """Set each parameter's dtype to what the graph infers from the inputs' dtypes."""
        arrays, nesting = _input_arrays(args)
        try:
            symbol, names, named, _ = self._trace(arrays, _config.is_training(), nesting)
        except DeferredInitializationError:  # its own parameters' shapes first, as a call finds them
            self._finish_deferred(*args)
            symbol, names, named, _ = self._trace(arrays, _config.is_training(), nesting)
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

