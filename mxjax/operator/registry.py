"""The operator registry: one ``OpDef`` per operator, every front-end derived from it.

An op is a pure JAX function whose signature says what is what: positional
parameters are array inputs (a default of ``None`` makes one optional, ``*arrays``
makes the op variadic), keyword-only parameters are the op's parameters, typed
by their annotations so they can be read from and written to MXNet's attribute
strings.  Shape/dtype inference defaults to ``jax.eval_shape`` and the gradient to
``jax.vjp`` of the same function; an op may override either.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import jax

from .. import _config
from ..graph import compile_cache
from ..base import MXNetError, MXNetValueError, decode_attr, encode_attr, normalize_dtype

__all__ = ["OpDef", "Param", "defop", "register_op", "get_op", "OPS", "list_ops", "clear_caches",
           "DynamicShapeError", "dynamic_shape_error"]

OPS: dict[str, "OpDef"] = {}      # canonical name and every alias → OpDef
_CANONICAL: dict[str, "OpDef"] = {}


class DynamicShapeError(MXNetError):
    """A ``dynamic_shape`` op met abstract inputs: its output shape needs their values."""


def dynamic_shape_error(op: str, what: str = "its inputs") -> DynamicShapeError:
    """The error of a dynamic-shape op asked for its output shape without concrete input values."""
    return DynamicShapeError(
        f"{op} is a dynamic-shape op: its output shape depends on the values of {what}, so it runs only on "
        "concrete arrays and cannot be traced into one static program (an outer jax.jit or jax.vmap, shape "
        "inference without data). Call the block without wrapping it in jax.jit: hybridized, it compiles "
        "its static parts and runs dynamic ops eagerly between compiled segments; or run the op imperatively")


# JAX's errors for a value needed at trace time (what a dynamic-shape op hits under eval_shape/jit)
_NOT_CONCRETE = (jax.errors.ConcretizationTypeError, jax.errors.NonConcreteBooleanIndexError,
                 jax.errors.TracerArrayConversionError, jax.errors.TracerIntegerConversionError)


@dataclass(frozen=True)
class Param:
    """One op parameter: its name, default and annotated type (used to decode attribute strings)."""

    name: str
    default: Any
    kind: str  # annotation text: 'int', 'float', 'bool', 'str', 'shape', 'axis', 'dtype', 'any', ...

    def decode(self, text: Any) -> Any:
        value = decode_attr(text) if isinstance(text, str) else text
        if value is None:
            return None
        base = self.kind.replace(" | None", "").replace("Optional[", "").rstrip("]")
        try:
            if base == "int":
                return int(value)
            if base == "float":
                return float(value)
            if base == "bool":
                if isinstance(value, str):  # MXNet's parser: true/false/1/0 in any case
                    if value.strip().lower() not in ("true", "false", "1", "0"):
                        raise ValueError(value)
                    return value.strip().lower() in ("true", "1")
                return bool(int(value)) if isinstance(value, (int, float)) else bool(value)
            if base == "str":
                return str(text) if isinstance(text, str) else str(value)
            if base == "dtype":
                return normalize_dtype(value).name
            if base in ("shape", "tuple"):
                return tuple(value) if isinstance(value, (tuple, list)) else (int(value),)
            if base == "axis":
                return tuple(value) if isinstance(value, (tuple, list)) else int(value)
        except (TypeError, ValueError) as e:
            raise MXNetValueError(f"parameter {self.name}: cannot read {text!r} as {self.kind}") from e
        return value


@dataclass(eq=False)
class OpDef:
    """Everything mxjax knows about one operator."""

    name: str
    compute: Callable[..., Any]
    aliases: tuple[str, ...] = ()
    num_outputs: int | Callable[[dict], int] = 1  # or a function of the parameters (SliceChannel)
    dynamic_shape: bool = False
    needs_key: bool = False                      # first input is a PRNG key the front-end supplies
    infer: Callable[..., Any] | None = None      # (*avals, **params) -> avals; default jax.eval_shape
    # param_shapes(shapes, params) -> {input slot: shape}: the shapes of the op's parameter inputs
    # from its data's (input 0), as MXNet's shape inference gives them (FullyConnected's weight from
    # num_hidden).  Symbol inference, graph evaluation and Gluon's deferred initialization use it.
    param_shapes: Callable[[list, dict], dict] | None = None
    differentiable: bool = True
    # input slots the op updates in training (BatchNorm's moving statistics, 3 and 4) and
    # aux_update(*inputs, **params) -> their new values; graphs call these "auxiliary states"
    aux_inputs: tuple[int, ...] = ()
    aux_update: Callable[..., Any] | None = None
    # check(*inputs, **params): a NumPy error XLA cannot raise (an out-of-range take index),
    # run on concrete inputs before the compiled call; skipped under an outer trace
    check: Callable[..., None] | None = None
    # output_names(params) -> the names MXNet gives a node's outputs (``<node>_<name>``) when it has
    # several; without it they are ``output0``, ``output1``, ...
    output_names: Callable[[dict], list] | None = None
    doc: str = ""
    inputs: tuple[str, ...] = field(init=False)
    optional_inputs: frozenset = field(init=False)
    input_defaults: dict[str, Any] = field(init=False)
    variadic: bool = field(init=False)
    params: dict[str, Param] = field(init=False)
    _bound: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sig = inspect.signature(self.compute)
        inputs, optional, params, variadic, input_defaults = [], [], {}, False, {}
        for p in sig.parameters.values():
            if p.kind is p.VAR_POSITIONAL:
                variadic = True
                inputs.append(p.name)
            elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                inputs.append(p.name)
                if p.default is None:
                    optional.append(p.name)
                if p.default is not p.empty:
                    input_defaults[p.name] = p.default
            elif p.kind is p.KEYWORD_ONLY:
                kind = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "any")
                params[p.name] = Param(p.name, p.default, "any" if kind is inspect._empty else kind)
        if self.needs_key and (not inputs or inputs[0] != "key"):
            raise TypeError(f"op {self.name}: a random op takes its PRNG key as the first input, named 'key'")
        self.inputs, self.optional_inputs = tuple(inputs), frozenset(optional)
        self.input_defaults = input_defaults
        self.params, self.variadic = params, variadic
        self.doc = self.doc or inspect.getdoc(self.compute) or ""
        self._bound = {}

    # -- parameters -----------------------------------------------------------------
    def check_params(self, params: dict[str, Any]) -> None:
        unknown = [k for k in params if k not in self.params]
        if unknown:
            raise MXNetValueError(
                f"{self.name}: unknown parameter(s) {unknown}; expected some of {sorted(self.params)}")

    def decode_params(self, attrs: dict[str, str], strict: bool = True) -> dict[str, Any]:
        """Read MXNet attribute strings into typed parameter values (unknown keys: error or skip)."""
        out = {}
        for key, text in attrs.items():
            spec = self.params.get(key)
            if spec is None:
                if strict:
                    self.check_params({key: text})
                continue
            out[key] = spec.decode(text)
        return out

    def encode_params(self, params: dict[str, Any]) -> dict[str, str]:
        """The attribute strings MXNet would store for these parameter values."""
        self.check_params(params)
        return {k: encode_attr(v) for k, v in params.items()}

    # -- compiled callables -------------------------------------------------------
    def bind(self, params: dict[str, Any] | None = None) -> Callable[..., Any]:
        """A ``jax.jit``-compiled callable of the arrays, with these parameters fixed (cached)."""
        key = tuple(params.items()) if params else ()
        try:
            fn = self._bound.get(key)
        except TypeError:  # an unhashable parameter value (an array): run eagerly, uncached
            compute = self.compute
            return lambda *a: compute(*a, **params)
        if fn is None:
            fn = self._bound[key] = self._make_callable(params or {})
        return fn

    def _make_callable(self, params: dict[str, Any]) -> Callable[..., Any]:
        compute = self.compute
        if self.dynamic_shape:  # output shape depends on values: cannot be one XLA program
            name = self.name

            def eager(*arrays: Any) -> Any:
                try:
                    return compute(*arrays, **params)
                except _NOT_CONCRETE:  # traced by an outer jax.jit/vmap: say which op and what to do
                    raise dynamic_shape_error(name) from None
            return eager
        return _compiled(self, params)

    def count_outputs(self, params: dict[str, Any]) -> int:
        """How many outputs the op returns with these parameters."""
        n = self.num_outputs
        return n(params) if callable(n) else n

    @_config.with_x64
    def eval_shape(self, *avals: Any, **params: Any) -> Any:
        """Output shape/dtype structs for input avals (``jax.ShapeDtypeStruct``) without computing
        (with 64-bit types on, as in every mxjax call: an int64 aval stays int64)."""
        if self.infer is not None:
            return self.infer(*avals, **params)
        try:
            return jax.eval_shape(lambda *a: self.compute(*a, **params), *avals)
        except DynamicShapeError as err:  # the op's own message, without the note JAX appends
            raise DynamicShapeError(str(err).split("\n--------------------")[0]) from None
        except _NOT_CONCRETE:
            if not self.dynamic_shape:
                raise
            raise dynamic_shape_error(self.name) from None

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


def register_op(op: OpDef) -> OpDef:
    """Add an op under its name and aliases; a name may be registered once."""
    for name in (op.name, *op.aliases):
        if name in OPS:
            raise MXNetError(f"operator {name!r} is already registered (as {OPS[name].name})")
    for name in (op.name, *op.aliases):
        OPS[name] = op
    _CANONICAL[op.name] = op
    return op


# The old name, for op modules that still import it (``mx.operator.register`` is MXNet's custom-op
# decorator, so the package exports this function as ``register_op`` only).
register = register_op


def defop(name: str, **options: Any) -> Callable[[Callable], OpDef]:
    """Decorator: ``@defop("add", aliases=("_npi_add", "broadcast_add"))`` over the JAX compute function."""

    def wrap(compute: Callable) -> OpDef:
        return register_op(OpDef(name, compute, **options))

    return wrap


def get_op(name: str) -> OpDef:
    op = OPS.get(name)
    if op is None:
        raise MXNetError(f"operator {name!r} is not registered")
    return op


def list_ops() -> list[OpDef]:
    """Every registered op once, in registration order."""
    return list(_CANONICAL.values())


def clear_caches() -> None:
    """Drop every compiled callable (they hold what ops computed when traced: dtype default, AMP)."""
    for op in _CANONICAL.values():
        for bound in op._bound.values():
            programs = getattr(bound, "programs", None)
            if programs is not None:
                compile_cache.drop(programs)
        op._bound.clear()


def _compiled(op: OpDef, params: dict[str, Any]) -> Callable[..., Any]:
    """``op`` with its parameters fixed: one ``jax.jit`` function (its C++ dispatch is the imperative hot
    path) kept in the process-wide compile cache (``mxjax.graph.compile_cache``) as one unit that counts every
    signature it compiled; past the cache's limits the least recently used units are dropped and compile
    again when next called.  The function is made anew then (and by ``clear_caches``), which frees the old
    executables and re-traces (ops read the default dtype at trace time).  ``programs`` (an attribute of
    the returned closure) holds it."""
    compute, check = op.compute, op.check
    programs = compile_cache.Programs("op")
    find, store, grow = programs.get, compile_cache.store, compile_cache.grow
    hits, mark_used, size = compile_cache.hits, compile_cache.mark_used, compile_cache.executable_bytes
    known = [0]  # executables the current function had compiled after its last call

    def pure(*arrays: Any) -> Any:  # the op as a function of its inputs (a bulk segment's program traces it)
        return compute(*arrays, **params)

    def first(arrays: tuple) -> Any:
        fn = jax.jit(lambda *a: pure(*a))  # a new function each time: JAX's caches of a dropped one go with it
        out = fn(*arrays)
        known[0] = count = fn._cache_size()
        store(programs, None, fn, size(fn, *arrays) if count else 0, count)
        return out

    def call(*arrays: Any) -> Any:
        if check is not None and not any(isinstance(x, jax.core.Tracer) for x in arrays):
            check(*arrays, **params)
        found = find(None)
        if found is None:
            return first(arrays)
        fn = found[0]
        out = fn(*arrays)
        count = fn._cache_size()
        if count == known[0]:  # the hot path: a signature compiled before
            next(hits)
            try:
                mark_used(found[1])
            except KeyError:  # dropped by another thread just now: this call is done anyway
                pass
        else:
            known[0] = count
            grow(programs, None, size(fn, *arrays), 1)
        return out

    call.programs = programs
    # what a bulk segment's program traces; None for an op with a host-side check (run at once)
    call.pure = pure if check is None else None
    return call


_config.on_drop_compiled(clear_caches)
