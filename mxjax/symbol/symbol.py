"""``Symbol``: a handle on output entries of the graph IR, with MXNet's symbolic API.

A Symbol names one or more ``(node, index)`` outputs.  It lists its arguments,
auxiliary states and outputs in MXNet's orders, composes with other symbols,
infers shapes and dtypes, reads and writes MXNet's JSON, and binds into an
``Executor`` that runs the graph as one compiled JAX program.

This module holds the handle itself (outputs, composition, operators,
partitioning), ``var``/``Group`` and the node builder behind every symbol
function.  ``Symbol`` inherits its name lists and attributes (``_graph_views``),
inference (``_infer_methods``) and JSON/binding (``_program_methods``) from
mixins; the naming rules are in ``_naming``.
"""
from __future__ import annotations

import contextlib
import copy as _copy
from typing import Any, Callable, Iterator

import numpy as onp

from ..graph import ir
from ..graph.ir import Entry, Node, copy_graph
from ..base import MXNetError, MXNetValueError, encode_attr, normalize_dtype
from .._invoke import reset_handler, set_handler
from ..operator import OpDef, get_op
from ..subgraph import get_backend, partition
from ..subgraph.property import check_backend_options
from ..serialization import DTYPE_TO_FLAG
from . import _attrs
from ._graph_views import _GraphViews
from ._hints import apply_init_hints
from ._infer_methods import _InferMethods
from ._naming import _BROADCAST_NAMES, _OPERATOR_HINTS, _visible_outputs, auto_name, name_hint
from ._naming import _output_name  # noqa: F401  (re-exported: control_flow imports it from here)
from ._program_methods import _ProgramMethods
from ..operator.naming import json_name, scalar_twin
from ..graph.interpret import CONSTANTS

__all__ = ["Symbol", "var", "Variable", "Group", "symbol_function"]

# MXNet 2.0's NumPy ops for the operators of a NumPy-semantics symbol, where the name differs
_NUMPY_OPERATORS = {"broadcast_equal": "equal", "broadcast_not_equal": "not_equal", "broadcast_greater": "greater",
                    "broadcast_greater_equal": "greater_equal", "broadcast_lesser": "less",
                    "broadcast_lesser_equal": "less_equal"}


class Symbol(_GraphViews, _InferMethods, _ProgramMethods):
    """One or more outputs of a graph (``mx.sym.Symbol``)."""

    __slots__ = ("_outputs", "__weakref__")
    _np = False  # NumPy semantics (see _Symbol): its operators build NumPy ops, its executors give mx.np arrays

    def __init__(self, outputs: list[Entry]) -> None:
        self._outputs = list(outputs)

    # -- naming and structure ---------------------------------------------------------
    @property
    def name(self) -> str | None:
        return self._outputs[0][0].name if len(self._outputs) == 1 else None

    def __repr__(self) -> str:
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(n.name for n, _ in self._outputs)}]>"

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Iterator["Symbol"]:
        return (type(self)([e]) for e in self._outputs)

    def __getitem__(self, index: int | str) -> "Symbol":
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise MXNetValueError(f"Symbol has no output named {index!r}; outputs are {names}")
            index = names.index(index)
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"Symbol output index {index} out of range for {len(self._outputs)} outputs")
        return type(self)([self._outputs[index]])

    def get_internals(self) -> "Symbol":
        """Every output of every node, in topological order (``sym.get_internals()['fc1_output']``)."""
        entries = []
        for node in self._nodes():
            entries.extend((node, i) for i in range(_visible_outputs(node)))
        return Symbol(entries)

    def get_children(self) -> "Symbol | None":
        """The inputs of this symbol's (single) head node, or None for a variable."""
        node = self._outputs[0][0]
        return type(self)(list(node.inputs)) if node.inputs else None

    # -- composition ------------------------------------------------------------------
    def __call__(self, *args: "Symbol", **kwargs: "Symbol") -> "Symbol":
        """A copy with some arguments replaced by other symbols (``net(data=other)``)."""
        result = _copy.deepcopy(self)
        result._compose(*args, **kwargs)
        return result

    def _compose(self, *args: "Symbol", name: str | None = None, **kwargs: "Symbol") -> None:
        arguments = self.list_arguments()
        if len(args) > len(arguments):
            raise MXNetValueError(f"compose: {len(args)} positional symbols for {len(arguments)} arguments")
        replace = dict(zip(arguments, args))
        for key, value in kwargs.items():
            if key not in self.list_inputs():
                raise MXNetValueError(f"compose: the symbol has no argument {key!r}; "
                                      f"arguments are {arguments}")
            replace[key] = value
        for key, value in replace.items():
            if not isinstance(value, Symbol) or len(value._outputs) != 1:
                raise MXNetValueError(f"compose: argument {key!r} must be a single-output Symbol")
        if not replace:
            return
        for node in self._nodes():
            node.inputs = [replace[n.name]._outputs[0] if n.is_variable and n.name in replace else (n, i)
                           for n, i in node.inputs]
        self._outputs = [replace[n.name]._outputs[0] if n.is_variable and n.name in replace else (n, i)
                         for n, i in self._outputs]

    def __deepcopy__(self, memo: dict) -> "Symbol":
        return type(self)(copy_graph(self._outputs))

    def __copy__(self) -> "Symbol":
        return self.__deepcopy__({})

    # -- operators (MXNet 1.x: broadcast ops, scalar twins for Python numbers) -------------------
    def __add__(self, other: Any) -> "Symbol":
        return _operator("add", self, other)

    def __radd__(self, other: Any) -> "Symbol":
        return _operator("add", other, self)

    def __sub__(self, other: Any) -> "Symbol":
        return _operator("subtract", self, other)

    def __rsub__(self, other: Any) -> "Symbol":
        return _operator("subtract", other, self)

    def __mul__(self, other: Any) -> "Symbol":
        return _operator("multiply", self, other)

    def __rmul__(self, other: Any) -> "Symbol":
        return _operator("multiply", other, self)

    def __truediv__(self, other: Any) -> "Symbol":
        return _operator("true_divide", self, other)

    def __rtruediv__(self, other: Any) -> "Symbol":
        return _operator("true_divide", other, self)

    def __mod__(self, other: Any) -> "Symbol":
        return _operator("mod", self, other)

    def __pow__(self, other: Any) -> "Symbol":
        return _operator("power", self, other)

    def __rpow__(self, other: Any) -> "Symbol":
        return _operator("power", other, self)

    def __neg__(self) -> "Symbol":
        if self._np:
            with building(None, None, legacy=False) as builder:
                return builder.invoke(get_op("negative"), [self], None, None)
        return _operator("multiply", self, -1.0)

    def __eq__(self, other: Any) -> "Symbol":  # type: ignore[override]
        return _operator("broadcast_equal", self, other)

    def __ne__(self, other: Any) -> "Symbol":  # type: ignore[override]
        return _operator("broadcast_not_equal", self, other)

    def __gt__(self, other: Any) -> "Symbol":
        return _operator("broadcast_greater", self, other)

    def __ge__(self, other: Any) -> "Symbol":
        return _operator("broadcast_greater_equal", self, other)

    def __lt__(self, other: Any) -> "Symbol":
        return _operator("broadcast_lesser", self, other)

    def __le__(self, other: Any) -> "Symbol":
        return _operator("broadcast_lesser_equal", self, other)

    __hash__ = object.__hash__

    # -- partitioning -----------------------------------------------------------------
    def optimize_for(self, backend: str, args: Any = None, aux: Any = None, ctx: Any = None,
                     shape_dict: dict | None = None, type_dict: dict | None = None, stype_dict: dict | None = None,
                     skip_infer: bool = False, **kwargs: Any) -> "Symbol":
        """A copy partitioned by the subgraph properties registered as ``backend``
        (``mx.subgraph.register_backend``); ``kwargs`` are the backend's options, and one it does not
        declare is an MXNetError (see ``SubgraphProperty.accepted_options``).  ``shape_dict`` and
        ``type_dict`` are checked against the graph by inference first, unless ``skip_infer``."""
        check_backend_options("Symbol.optimize_for", backend, kwargs)
        if (shape_dict or type_dict) and not skip_infer:
            if shape_dict:
                self.infer_shape_partial(**shape_dict)
            if type_dict:
                self.infer_type(**type_dict)
        outputs = self.__deepcopy__({})._outputs
        for prop in get_backend(backend):
            outputs = partition(outputs, prop(**kwargs))
        return type(self)(outputs)

class _Symbol(Symbol):
    """A symbol of NumPy semantics, as MXNet 2.0's ``mxnet.symbol.numpy._Symbol``: what ``mx.sym.np``
    and ``mx.sym.npx`` functions and ``as_np_ndarray`` give.  Its operators build NumPy ops (``a * 2``
    is ``_npi_multiply_scalar``, ``a == b`` is ``_npi_equal``), and an executor bound to it gives
    ``mx.np`` arrays, where a legacy ``Symbol``'s gives ``mx.nd`` arrays (MXNet 2.0 and 1.9.1 alike)."""

    __slots__ = ()
    _np = True


def var(name: str, attr: dict | None = None, shape: Any = None, lr_mult: float | None = None,
        wd_mult: float | None = None, dtype: Any = None, init: Any = None, stype: Any = None,
        **kwargs: Any) -> Symbol:
    """A variable (placeholder, parameter or auxiliary state) named ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"var: name must be a string, got {type(name).__name__}")
    attrs = _attrs.creation_attrs(attr)
    if shape is not None:
        attrs["__shape__"] = encode_attr(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = encode_attr(float(lr_mult))
    if wd_mult is not None:
        attrs["__wd_mult__"] = encode_attr(float(wd_mult))
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_TO_FLAG[normalize_dtype(dtype)])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = {"default": "0", "row_sparse": "1", "csr": "2"}[stype]
    for key, value in kwargs.items():
        if not (key.startswith("__") and key.endswith("__")):
            raise MXNetValueError(f"var: attribute {key!r} must look like __name__")
        attrs[key] = str(value)
    return Symbol([(Node("null", name, attrs=attrs), 0)])


Variable = var


def Group(symbols: list[Symbol]) -> Symbol:  # noqa: N802  (MXNet's name)
    """One symbol whose outputs are the outputs of all ``symbols``, in order."""
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise MXNetValueError("Group: expected a non-empty list of Symbols")
    return Symbol([e for s in symbols for e in s._outputs])


# ----------------------------------------------------------------------------- building nodes

class _Builder:
    """Dispatch handler that records nodes instead of computing."""

    def __init__(self, name: str | None, attr: dict | None, legacy: bool) -> None:
        self.name, self.attr, self.legacy = name, attr, legacy
        self.hint: str | None = None  # the auto-name hint when it is not the written op's (a + b: _plus)
        self.json_override: str | None = None  # the op name to write (broadcast_add for a + b, or the
        # alias the caller used: mx.sym.elemwise_add writes elemwise_add)

    def invoke(self, op: OpDef, inputs: list, params: dict | None, out_cls: Any) -> Any:
        params = dict(params or {})
        entries, constants = [], []
        if op.needs_key:  # the executor supplies keys at run time (mxjax.graph.interpret), not the graph
            inputs = list(inputs)[1:]
        for slot, x in enumerate(inputs):
            if isinstance(x, Symbol):
                if len(x._outputs) != 1:
                    raise MXNetError(f"{op.name}: input {slot} is a group of {len(x._outputs)} symbols; "
                                     "pass one output (sym[i])")
                entries.append(x._outputs[0])
            elif x is None:
                continue
            else:
                constants.append((slot, _constant(x, op)))
        written = self.json_override
        twin = scalar_twin(op, [x if not isinstance(x, Symbol) else None for x in inputs], self.legacy) \
            if constants and entries else None
        hint = self.hint
        if twin is not None:  # x * 2.5 is written as MXNet's scalar op (_mul_scalar / _npi_multiply_scalar)
            op, params, constants, written = twin[0], twin[1], [], None
            if not self.legacy:  # and named after it (multiply_scalar0), as MXNet 2 names NumPy ops
                hint = None
        if op.variadic and "num_args" in op.params and params.get("num_args") is None:
            params["num_args"] = len(entries) + len(constants)  # MXNet writes the count (add_n, Concat)
        if constants:
            params[CONSTANTS] = tuple(constants)
            written = None
        written = written or json_name(op)
        name = self.name or auto_name(hint or name_hint(written))
        node = Node(written, name, params=params, attrs=_attrs.creation_attrs(self.attr),
                    inputs=entries, num_outputs=max(1, op.count_outputs(params)))
        apply_init_hints([node])
        return (Symbol if self.legacy else _Symbol)([(node, i) for i in range(node.num_outputs)])  # one, as MXNet

    def on_write(self, array: Any) -> None:
        raise MXNetError("symbols are immutable")


def _constant(x: Any, op: OpDef) -> Any:
    if isinstance(x, (int, float, bool, onp.generic)):
        return x.item() if isinstance(x, onp.generic) else x
    raise MXNetError(f"{op.name}: a symbol function takes Symbols and Python scalars, got {type(x).__name__}")


@contextlib.contextmanager
def building(name: str | None = None, attr: dict | None = None, legacy: bool = True) -> Any:
    """Scope in which front-end calls build nodes (the dispatch handler is a node builder)."""
    builder = _Builder(name, attr, legacy)
    token = set_handler(builder)
    try:
        yield builder
    finally:
        reset_handler(token)


def symbol_function(front: Callable, legacy: bool = True, write_as: str | None = None,
                    variables: bool = True) -> Callable:
    """The symbolic twin of an imperative front-end function (same arguments, plus ``name``/``attr``).

    write_as: the op name the nodes are written with, where it is not the one ``legacy`` implies
    (``npx.cast`` writes ``Cast`` with NumPy scalar semantics).  variables: make a variable for each
    op input the caller left out, as MXNet's symbol API does (off for fronts whose arguments are not
    the op's inputs, such as ``np.random.chisquare(df)`` over the gamma op)."""
    op: OpDef = front.op
    positional = list(getattr(front, "positional", ()))
    renames = getattr(front, "keywords", {})

    # nodes are named after the function called (mx.sym.split: split0, mx.sym.np.abs: abs0), as MXNet
    # names them (but NumPy ops written as a scalar twin: see _Builder.invoke)
    hint = name_hint(write_as or front.__name__)

    def function(*args: Any, name: str | None = None, attr: dict | None = None, **kwargs: Any) -> Any:
        made = []
        if variables and not op.variadic:
            given = set(positional[:len(args)]) | {renames.get(k, k) for k in kwargs}
            for slot, input_name in enumerate(op.inputs):
                if input_name in given or input_name == "key":
                    continue
                if _needs_variable(op, input_name, {**kwargs}):
                    name = name or auto_name(hint)  # (the variables' prefix)
                    kwargs[input_name] = var(f"{name}_{input_name}")
                    made.append(kwargs[input_name]._outputs[0][0])
        with building(name, attr, legacy) as builder:
            builder.hint = hint
            if write_as:
                builder.json_override = write_as
            elif legacy and (front.__name__ == op.name or front.__name__ in op.aliases):
                builder.json_override = front.__name__  # write the 1.x name the caller used
            result = front(*args, **kwargs)
        if made and isinstance(result, Symbol):
            _attrs.inherit(made, result._outputs[0][0])
        return result

    function.__name__ = function.__qualname__ = front.__name__
    function.__doc__ = front.__doc__
    function.op = op  # type: ignore[attr-defined]
    return function


def _needs_variable(op: OpDef, input_name: str, kwargs: dict) -> bool:
    """Whether MXNet's symbol API creates a variable for an input the caller left out."""
    if input_name == "bias":
        return not kwargs.get("no_bias", op.params["no_bias"].default if "no_bias" in op.params else False)
    if input_name == "gamma" and op.name == "LeakyReLU":
        return kwargs.get("act_type") == "prelu"
    if op.name == "RNN" and input_name in ("state_cell", "sequence_length"):  # what the mode uses
        return kwargs.get("mode") == "lstm" if input_name == "state_cell" else bool(kwargs.get("use_sequence_length"))
    return input_name not in op.input_defaults



def _operator(name: str, lhs: Any, rhs: Any) -> Symbol:
    """``lhs <op> rhs`` as a node: a broadcast op for two symbols, a scalar twin with a number; with
    a NumPy-semantics symbol, MXNet 2.0's NumPy op (``_npi_add``, ``_npi_multiply_scalar``)."""
    numpy = getattr(lhs, "_np", False) or getattr(rhs, "_np", False)
    op = get_op(_NUMPY_OPERATORS.get(name, name) if numpy else name)
    with building(None, None, legacy=not numpy) as builder:
        if not numpy:
            builder.json_override = _BROADCAST_NAMES.get(name)
            if isinstance(lhs, Symbol) and isinstance(rhs, Symbol):  # scalar twins keep their own hint
                builder.hint = _OPERATOR_HINTS.get(name)
        return builder.invoke(op, [lhs, rhs], None, None)


ir.set_symbol_class(Symbol)
