"""MXNet's legacy Python operators: ``PythonOp``, ``NumpyOp`` and ``NDArrayOp`` (deprecated there for ``CustomOp``).

A subclass overrides ``forward(in_data, out_data)``, ``backward(out_grad, in_data, out_data,
in_grad)`` and optionally ``list_arguments``, ``list_outputs``, ``infer_shape`` (and, for
``NDArrayOp``, ``declare_backward_dependency``); calling an instance on Symbols
(``op(data=x, name="sq")``) gives a Symbol node, ``_Native`` for a ``NumpyOp`` (its code
sees NumPy arrays) and ``_NDArray`` for an ``NDArrayOp`` (legacy NDArrays).

They run on the custom-operator machinery of :mod:`mxjax.operator.custom`: each instance
is registered as a custom op (a ``CustomOpProp``/``CustomOp`` pair adapting its methods)
and the ``_Native``/``_NDArray`` ops are ``Custom`` under another name, so executors,
hybridized blocks and autograd run them through the same host callbacks.  As in MXNet,
the node's ``info`` attribute identifies the live Python object (MXNet writes a pointer),
so a graph holding one can be rebuilt from JSON only in the process that made it.

Where MXNet 2.0.0b1 breaks (``NDArrayOp``'s backward crashes; a multi-output ``NumpyOp``
receives wrongly shaped inputs), this follows the documented behaviour, as 1.9.1 runs
``NDArrayOp``.  Differences kept on purpose: inputs keep their dtype (MXNet's ``_Native``
is float32 only), and an exception in the user's code raises ``MXNetError`` naming the op
(MXNet prints it and carries on with the outputs unwritten).
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as onp

from ..base import MXNetError, MXNetTypeError, MXNetValueError
from .custom import CustomOp, CustomOpProp, _custom, _infer, register
from .registry import OpDef, register_op

__all__ = ["PythonOp", "NumpyOp", "NDArrayOp", "LINKS"]


class _Links:
    """What this layer cannot import: ``mxjax.symbol`` (set by ``mxjax._legacy_python_host``)."""

    symbol: Any = None


LINKS = _Links()
_LIVE: dict[str, "PythonOp"] = {}  # the node attribute ``info`` -> the op instance


class PythonOp:
    """Base class of the legacy Python operators.  need_top_grad: the default ``need_top_grad()``
    (False for loss layers, whose ``backward`` then gets an empty ``out_grad``)."""

    _ref_holder: list = []  # instances that made a symbol (MXNet keeps them from being collected)
    _node_op = ""  # the op a subclass's symbols are nodes of

    def __init__(self, need_top_grad: bool = True) -> None:
        self.info_: str | None = None
        self.need_top_grad_ = need_top_grad
        warnings.warn("PythonOp has been deprecated. Please use CustomOp")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args: Any, **kwargs: Any) -> Any:
        """A Symbol node running this operator on the input Symbols (positional, or by argument name)."""
        if not self._node_op:
            raise NotImplementedError("Must override this")
        sym = LINKS.symbol
        if sym is None:
            raise MXNetError(f"{type(self).__name__}.get_symbol: mxjax.symbol is not loaded (import mxjax)")
        names = list(self.list_arguments())
        name, attr = kwargs.pop("name", None), kwargs.pop("attr", None)
        name = name or sym.auto_name(self._node_op.lower())
        inputs = _order_inputs(type(self).__name__, names, args, kwargs, name, sym)
        if self.info_ is None:
            self.info_ = format(id(self), "x")
            _LIVE[self.info_] = self
            register(_op_type(self.info_))(type(f"{type(self).__name__}Prop", (_LegacyProp,), {"pyop": self}))
            PythonOp._ref_holder.append(self)
        params = {"info": self.info_, **kwargs}
        if self._node_op == "_Native":
            params["need_top_grad"] = bool(self.need_top_grad())
        return getattr(sym, self._node_op)(*inputs, name=name, attr=attr, **params)

    def forward(self, in_data: list, out_data: list) -> None:
        """Write ``out_data`` from ``in_data`` (default: copy input 0)."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad: list, in_data: list, out_data: list, in_grad: list) -> None:
        """Write ``in_grad`` (default: ones)."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape: list) -> tuple:
        """``(argument shapes, output shapes)``; default: one output shaped like input 0."""
        return in_shape, [in_shape[0]]

    def list_outputs(self) -> list:
        return ["output"]

    def list_arguments(self) -> list:
        return ["data"]

    def need_top_grad(self) -> bool:
        """Whether ``backward`` reads ``out_grad`` (False for loss layers)."""
        return self.need_top_grad_


class NumpyOp(PythonOp):
    """A legacy Python operator whose ``forward``/``backward`` work on NumPy arrays in place."""

    _node_op = "_Native"

    def __init__(self, need_top_grad: bool = True) -> None:
        super().__init__(need_top_grad)
        warnings.warn("NumpyOp has been deprecated. Please use CustomOp")


class NDArrayOp(PythonOp):
    """A legacy Python operator whose ``forward``/``backward`` work on legacy NDArrays in place."""

    _node_op = "_NDArray"

    def __init__(self, need_top_grad: bool = True) -> None:
        super().__init__(need_top_grad)
        warnings.warn("NDArrayOp has been deprecated. Please use CustomOp")

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        """The ids ``backward`` reads: the output gradients (if ``need_top_grad()``), inputs and outputs."""
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)


def _order_inputs(who: str, names: list, args: tuple, kwargs: dict, name: str, sym: Any) -> list:
    """Inputs in ``list_arguments`` order: positional first, then by name; a missing one becomes the
    variable ``<name>_<argument>``, as MXNet's symbol composition makes it."""
    if len(args) > len(names):
        raise MXNetValueError(f"{who}: got {len(args)} inputs; list_arguments() declares {len(names)} ({names})")
    named = {k: kwargs.pop(k) for k in list(kwargs) if isinstance(kwargs[k], sym.Symbol)}
    unknown = sorted(set(named) - set(names[len(args):]))
    if unknown:
        raise MXNetValueError(f"{who}: inputs {unknown} are not among the remaining arguments "
                              f"{names[len(args):]} of list_arguments() {names}")
    inputs = list(args)
    for arg in names[len(args):]:
        inputs.append(named[arg] if arg in named else sym.var(f"{name}_{arg}"))
    for i, x in enumerate(inputs):
        if not isinstance(x, sym.Symbol):
            raise MXNetTypeError(f"{who}: input {names[i]!r} must be a Symbol, got {type(x).__name__}")
    return inputs


def _op_type(info: str) -> str:
    return f"{_LIVE[info].__class__.__name__}@{info}"


def _live(info: str) -> "PythonOp":
    op = _LIVE.get(str(info))
    if op is None:
        raise MXNetValueError(f"legacy Python operator: no live NumpyOp/NDArrayOp with info {info!r} in this "
                              "process (the node's info names the Python object that made it, as in MXNet)")
    return op


# ----------------------------------------------------------------------------- the adapters

class _LegacyProp(CustomOpProp):
    """A legacy op seen as a custom op's prop (subclassed once per instance, with ``pyop`` set)."""

    pyop: PythonOp

    def __init__(self) -> None:
        super().__init__(need_top_grad=bool(self.pyop.need_top_grad()))

    def list_arguments(self) -> list:
        return list(self.pyop.list_arguments())

    def list_outputs(self) -> list:
        return list(self.pyop.list_outputs())

    def infer_shape(self, in_shape: list) -> tuple:
        result = self.pyop.infer_shape(in_shape)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise MXNetValueError(f"{type(self.pyop).__name__}.infer_shape must return (argument shapes, output "
                                  f"shapes), got {result!r}")
        return result[0], result[1], []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        if isinstance(self.pyop, NDArrayOp):
            return self.pyop.declare_backward_dependency(out_grad, in_data, out_data)
        return super().declare_backward_dependency(out_grad, in_data, out_data)

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        return _LegacyCompute(self.pyop)


class _LegacyCompute(CustomOp):
    """Runs the legacy op's ``forward``/``backward`` on NumPy arrays (NumpyOp) or legacy NDArrays
    (NDArrayOp), then writes its results into the custom op's arrays as ``req`` asks."""

    def __init__(self, pyop: PythonOp) -> None:
        super().__init__()
        self.pyop = pyop
        self.numpy = isinstance(pyop, NumpyOp)

    def _inputs(self, arrays: list) -> list:
        if self.numpy:
            return [a.asnumpy() for a in arrays]
        return [a.as_nd_ndarray() for a in arrays]

    def _blank(self, arrays: list) -> list:
        if self.numpy:
            return [onp.zeros(a.shape, a.dtype) for a in arrays]
        return [a.as_nd_ndarray().copy() for a in arrays]

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        outs = self._blank(out_data)
        self.pyop.forward(in_data=self._inputs(in_data), out_data=outs)
        for dst, r, src in zip(out_data, req, outs):
            self.assign(dst, r, src)

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list,
                 aux: list) -> None:
        grads = self._blank(in_grad)
        top = self._inputs(out_grad) if self.pyop.need_top_grad() else []
        self.pyop.backward(out_grad=top, in_data=self._inputs(in_data), out_data=self._inputs(out_data),
                           in_grad=grads)
        for dst, r, src in zip(in_grad, req, grads):
            self.assign(dst, r, src)


# ----------------------------------------------------------------------------- the registered ops

def _native(*data, info: str = "", need_top_grad: bool = True, _train: bool | None = None):
    """Run the ``NumpyOp`` whose ``info`` this is (``mx.operator.NumpyOp.get_symbol`` writes these nodes)."""
    return _custom(*data, op_type=_op_type(_live(info).info_), _train=_train)


def _ndarray_op(*data, info: str = "", _train: bool | None = None):
    """Run the ``NDArrayOp`` whose ``info`` this is (``mx.operator.NDArrayOp.get_symbol`` writes these nodes)."""
    return _custom(*data, op_type=_op_type(_live(info).info_), _train=_train)


def _infer_legacy(*avals: Any, info: str = "", **params: Any) -> Any:
    return _infer(*avals, op_type=_op_type(_live(info).info_))


def _output_names(params: dict) -> list:
    return list(_live(params.get("info", "")).list_outputs())


def _count(params: dict) -> int:
    return len(_output_names(params))


NATIVE = register_op(OpDef("_Native", _native, num_outputs=_count, infer=_infer_legacy, output_names=_output_names))
NDARRAY_OP = register_op(OpDef("_NDArray", _ndarray_op, num_outputs=_count, infer=_infer_legacy,
                               output_names=_output_names))
