"""MXNet 1.x's ``hybrid_forward(self, F, x, *args, **params)`` idiom, and blocks called on Symbols.

A HybridBlock that defines ``hybrid_forward`` (and no ``forward``) runs as in MXNet
1.9.1: imperatively ``F`` is ``mx.nd`` and the parameters arrive as keyword arrays
named by their attributes (``weight=``, ``bias=``); hybridized, ``F`` is ``mx.sym``,
the inputs are variables ``data``/``data0``... and the parameters variables named
structurally (``out.weight``), and the Symbol it returns is the graph the cached op
compiles.  Inside that build a child block is called on Symbols: a 1.x child builds
its part the same way, a 2.0 child (``forward`` on ``mx.np`` ops) is traced under
deferred compute on arrays of the inferred shapes and its graph spliced in.

``ParameterDict`` is the ``Block.params`` and ``collect_params()`` dictionary; its
``get(name, shape=...)``, ``get_constant``, ``initialize``, ``setattr`` and ``zero_grad``
keep 1.x's ``self.params.get`` and ``net.collect_params().initialize()`` working.
"""
from __future__ import annotations

import contextvars
import inspect
from collections import OrderedDict
from typing import Any, Sequence

import jax.numpy as jnp

from .. import initializer
from .. import ndarray as nd
from .. import symbol as sym
from .._ndarray import NDArray
from .._invoke import np_class
from ..base import MXNetError
from ..symbol import Symbol
from ._nesting import flat_inputs, flat_outputs, regroup
from .parameter import Constant, Parameter

__all__ = ["ParameterDict", "call_imperative", "trace_symbolic", "call_on_symbols", "has_symbol", "input_names",
           "infer_parameter_shapes"]


class ParameterDict(OrderedDict):
    """A block's own parameters by attribute name (``Block.params``).

    ``get(name)`` is a dict look-up; with keyword arguments (MXNet 1.x's
    ``self.params.get('weight', shape=(10, 0))``) it creates the Parameter when
    it is missing and registers it under ``name``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._created: set[str] = set()  # keys get() made: an attribute assignment renames them

    def get(self, name: str, default: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        if name in self or not kwargs:
            return super().get(name, default)
        param = Parameter(name, **kwargs)
        self[name] = param
        self._created.add(name)
        return param

    def register(self, name: str, param: Parameter) -> None:
        """``param`` under attribute ``name`` (1.x's ``self.w = self.params.get('weight')`` is ``w``)."""
        for key in [k for k in self._created if k != name and self[k] is param]:
            del self[key]
            self._created.discard(key)
        self[name] = param

    def initialize(self, init: Any = None, device: Any = None, verbose: bool = False, force_reinit: bool = False,
                   ctx: Any = None) -> None:
        """1.x's ``net.collect_params().initialize(...)``: initialize every parameter in the dict."""
        default = init if init is not None else initializer.Uniform()
        for param in self.values():
            param.initialize(None, device or ctx, default_init=default, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        for param in self.values():
            param.zero_grad()

    def setattr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` (``grad_req``, ``lr_mult``...) on every parameter in the dict."""
        for param in self.values():
            setattr(param, name, value)

    def reset_device(self, device: Any) -> None:
        for param in self.values():
            param.reset_device(device)

    reset_ctx = reset_device

    def get_constant(self, name: str, value: Any = None) -> Constant:
        """1.x's constant parameter: the one registered as ``name``, or a new ``Constant(value)``."""
        if name in self:
            return self[name]
        if value is None:
            raise MXNetError(f"params.get_constant: no constant {name!r} yet, and no value to create it from")
        self[name] = constant = Constant(value, name=name)
        return constant


def _invoke(block: Any, F: Any, args: Sequence, params: dict, kwargs: dict) -> Any:  # noqa: N803
    try:
        return block.hybrid_forward(F, *args, **params, **kwargs)
    except TypeError as err:  # a signature that does not fit the block's parameters: say which
        try:
            inspect.signature(block.hybrid_forward).bind(F, *args, **params, **kwargs)
        except TypeError as mismatch:
            raise MXNetError(f"{type(block).__name__}.hybrid_forward(F, {len(args)} inputs, **params) does not "
                             f"fit the block's parameters {sorted(params)}: {mismatch}") from None
        raise err


def call_imperative(block: Any, args: Sequence, kwargs: dict) -> Any:
    """``hybrid_forward`` on arrays: ``F`` is ``mx.nd``, the parameters their arrays (as MXNet 1.9.1)."""
    params = {name: p.data() for name, p in block._reg_params.items()}
    return _invoke(block, nd, args, params, kwargs)


# -- building symbols -----------------------------------------------------------------------------

class _Build:
    """What a symbolic build knows: each parameter's variable, and shapes/dtypes of the graph inputs."""

    def __init__(self, variables: dict, shapes: dict, dtypes: dict, training: bool) -> None:
        self.variables, self.shapes, self.dtypes, self.training = variables, shapes, dtypes, training


_build: contextvars.ContextVar[_Build | None] = contextvars.ContextVar("mxjax_gluon_build", default=None)


def has_symbol(args: Sequence) -> bool:
    return any(isinstance(a, Symbol) for a in args)


def input_names(arrays: Sequence) -> list[str]:
    """MXNet's names for the data inputs: ``data``, or ``data0``, ``data1``... (None: an omitted input)."""
    return [f"data{i}" if len(arrays) > 1 else "data" for i, a in enumerate(arrays) if a is not None]


def trace_symbolic(block: Any, arrays: Sequence, training: bool, nesting: Any = None) -> tuple:
    """The cached graph of a 1.x root: ``hybrid_forward(mx.sym, data..., **parameter variables)``;
    ``nesting``, the format of nested inputs (a list of states), whose arrays ``arrays`` lists flat.

    Returns (Symbol, data input names, [(structural name, Parameter)], multi-output: as
    ``_nesting.flat_outputs`` gives it).
    """
    named = block.collect_params()
    names = input_names(arrays)
    present = [a for a in arrays if a is not None]
    variables = {id(p): sym.var(n) for n, p in named.items()}
    shapes = {n: tuple(a.shape) for n, a in zip(names, present)}
    dtypes = {n: a.dtype for n, a in zip(names, present)}
    for name, param in named.items():
        shapes[name], dtypes[name] = tuple(param.data().shape), param.data().dtype
    outs, multi = _symbolic_outputs(block, arrays, names, nesting, _Build(variables, shapes, dtypes, training))
    for i, o in enumerate(outs):
        if not isinstance(o, Symbol):
            raise MXNetError(f"{type(block).__name__}.hybrid_forward returned {type(o).__name__} as output {i} "
                             "when hybridized; it must return Symbols built with F")
    return (sym.Group(outs) if multi else outs[0]), names, list(named.items()), multi


def _symbolic_outputs(block: Any, arrays: Sequence, names: list, nesting: Any, build: _Build) -> tuple:
    """``hybrid_forward(mx.sym, ...)`` under ``build`` on data variables ``names`` standing for
    ``arrays`` (regrouped as ``nesting``): its outputs, flat, and multi-output as
    ``_nesting.flat_outputs`` gives it."""
    data = iter(sym.var(n) for n in names)
    inputs = [None if a is None else next(data) for a in arrays]
    token = _build.set(build)
    try:
        out = _symbolic(block, inputs if nesting is None else regroup(inputs, nesting), {})
    finally:
        _build.reset(token)
    return flat_outputs(out)


def _symbolic(block: Any, inputs: Sequence, kwargs: dict) -> Any:
    build = _build.get()
    if build is None:  # called on Symbols outside a build: variables named as the block's structure
        named = block.collect_params()
        build = _Build({id(p): sym.var(n) for n, p in named.items()}, {}, {}, False)
    params = {name: build.variables.get(id(p)) or p.var() for name, p in block._reg_params.items()}
    return _invoke(block, sym, inputs, params, kwargs)


def call_on_symbols(block: Any, args: Sequence, kwargs: dict) -> Any:
    """A block called with Symbols: its graph on those Symbols (1.x's symbolic call)."""
    if block._is_legacy():
        return _symbolic(block, args, kwargs)
    build = _build.get()
    if build is None or kwargs:
        raise MXNetError(f"{type(block).__name__}: a block defined by forward() cannot be called on Symbols "
                         "outside a hybridized 1.x block (its input shapes are unknown); call it on arrays")
    placeholders = [None if a is None else _placeholder(block, a, build) for a in args]
    graph, names, named, multi = block._trace(placeholders, build.training)
    present = [a for a in args if a is not None]
    replace = dict(zip(names, present))
    replace.update({name: build.variables[id(p)] for name, p in named if id(p) in build.variables})
    inputs = set(graph.list_inputs())
    composed = graph(**{k: v for k, v in replace.items() if k in inputs})
    return [composed[i] for i in range(len(composed))] if multi else composed


def _placeholder(block: Any, symbol: Symbol, build: _Build) -> NDArray:
    """Zeros of the shape and dtype inference gives ``symbol`` in the graph being built."""
    if not isinstance(symbol, Symbol):
        raise MXNetError(f"{type(block).__name__}: inputs must all be Symbols inside a hybridized 1.x block, "
                         f"got {type(symbol).__name__}")
    inputs = set(symbol.list_inputs())
    _, shapes, _ = symbol.infer_shape(**{k: v for k, v in build.shapes.items() if k in inputs})
    _, dtypes, _ = symbol.infer_type(**{k: v for k, v in build.dtypes.items() if k in inputs})
    if shapes is None or dtypes is None or len(shapes) != 1:
        raise MXNetError(f"{type(block).__name__}: cannot infer the shape of its Symbol input "
                         f"{symbol.name!r} from the graph inputs {build.shapes}")
    return np_class()._wrap(jnp.zeros(shapes[0], dtypes[0]))


def infer_parameter_shapes(block: Any, args: Sequence) -> None:
    """1.x's deferred initialization: parameter shapes from the symbolic graph's shape inference."""
    arrays, nesting = flat_inputs(args)
    named = block.collect_params()
    names = input_names(arrays)
    present = [a for a in arrays if a is not None]
    variables = {id(p): sym.var(n, shape=p.shape) for n, p in named.items()}
    outs, multi = _symbolic_outputs(block, arrays, names, nesting, _Build(variables, {}, {}, False))
    graph = sym.Group(outs) if multi else outs[0]
    given = {n: tuple(a.shape) for n, a in zip(names, present) if n in graph.list_inputs()}
    arg_shapes, _, aux_shapes = graph.infer_shape_partial(**given)
    inferred = dict(zip(graph.list_arguments(), arg_shapes or []))
    inferred.update(zip(graph.list_auxiliary_states(), aux_shapes or []))
    for name, param in named.items():
        if name in inferred and inferred[name] and all(d > 0 for d in inferred[name]):
            param.shape = inferred[name]
    unknown = [n for n, p in block._reg_params.items() if p.shape is None or not all(d > 0 for d in p.shape)]
    if unknown:
        raise MXNetError(f"{type(block).__name__}: cannot infer the shapes of parameters {unknown} from inputs "
                         f"of shapes {[tuple(a.shape) for a in present]}")
