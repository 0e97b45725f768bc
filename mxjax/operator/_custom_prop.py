"""The user's side of MXNet's Python custom operators: the ``CustomOp`` and ``CustomOpProp`` base
classes, ``register``, and resolving a registered prop for given input shapes and dtypes
(:class:`Signature`, :func:`infer_signature`).

Split from ``custom`` (MXNet's public home of these names, which re-exports them) so that the
classes and their shape/dtype rules sit apart from the host callbacks and the registered op.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as onp

from ..base import MXNetTypeError, MXNetValueError
from ..device import current_device


class CustomOp:
    """Base class of a custom operator's computation: override ``forward`` and ``backward``.

    Both receive lists of NDArrays and write their results into ``out_data`` /
    ``in_grad`` (and, in ``forward``, may update ``aux`` in place), usually with
    :meth:`assign`, which honours the write request ``req``.
    """

    def __init__(self) -> None:
        pass

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        """Compute ``out_data`` from ``in_data`` (``req[i]`` says how to write ``out_data[i]``)."""

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list,
                 aux: list) -> None:
        """Compute ``in_grad`` from ``out_grad`` (``req[i]`` says how to write ``in_grad[i]``)."""

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Write ``src`` into ``dst`` as ``req`` asks: 'null' skips, 'write'/'inplace' copy, 'add' adds."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[()] = src
        elif req == "add":
            dst[()] += src
        else:
            raise MXNetValueError(f"CustomOp.assign: req must be 'null', 'write', 'inplace' or 'add', got {req!r}")


class CustomOpProp:
    """Base class of a custom operator's description: its inputs, outputs, shapes and dtypes.

    need_top_grad: whether ``backward`` reads the output gradients (False for loss layers).
    """

    def __init__(self, need_top_grad: bool = True) -> None:
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list) -> tuple:
        """``(argument shapes, output shapes[, auxiliary shapes])``; default: every output like input 0."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type: list) -> tuple:
        """``(argument dtypes, output dtypes[, auxiliary dtypes])``; default: all like input 0."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype: list) -> tuple:
        """Storage types of arguments, outputs and auxiliary states: mxjax has dense ('default') only."""
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype: list, in_stype: list, out_stype: list,
                                    igrad_stype: list, aux_stype: list) -> tuple:
        """Storage types seen by ``backward``: all dense."""
        return (["default"] * len(ograd_stype), ["default"] * len(in_stype), ["default"] * len(out_stype),
                ["default"] * len(igrad_stype), ["default"] * len(aux_stype))

    def list_outputs(self) -> list:
        return ["output"]

    def list_arguments(self) -> list:
        return ["data"]

    def list_auxiliary_states(self) -> list:
        return []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        """What ``backward`` reads: the output gradients (if ``need_top_grad_``), inputs and outputs."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        """The :class:`CustomOp` that computes this op (``in_dtypes`` are MXNet's dtype codes)."""
        return CustomOp()


_PROPS: dict[str, type] = {}            # op_type -> CustomOpProp subclass
_PROP_CACHE: dict[tuple, CustomOpProp] = {}


def register(reg_name: str) -> Callable[[type], type]:
    """Decorator registering a :class:`CustomOpProp` subclass as the custom op ``reg_name``."""
    if not isinstance(reg_name, str):
        raise MXNetTypeError(f"mx.operator.register(reg_name): reg_name must be the op's name (a str), got "
                             f"{type(reg_name).__name__}; registry ops are added with register_op")

    def do_register(prop_cls: type) -> type:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise MXNetTypeError(f"register({reg_name!r}): expected a CustomOpProp subclass, got {prop_cls!r}")
        _PROPS[reg_name] = prop_cls
        _PROP_CACHE.clear()
        return prop_cls

    return do_register


# MXNet's dtype codes (what ``create_operator`` receives)
_DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5, "int64": 6,
                "bool": 7, "int16": 8, "uint16": 9, "uint32": 10, "uint64": 11, "bfloat16": 12}


def _prop(op_type: str, kwargs: dict) -> CustomOpProp:
    """The prop of ``op_type`` made with ``kwargs`` as strings (cached: one per op type and arguments)."""
    text = {k: str(v) for k, v in kwargs.items()}
    key = (op_type, tuple(sorted(text.items())))
    prop = _PROP_CACHE.get(key)
    if prop is None:
        cls = _PROPS.get(op_type)
        if cls is None:
            raise MXNetValueError(f"Custom: cannot find custom operator {op_type!r}; registered: {sorted(_PROPS)}")
        try:
            prop = cls(**text)
        except TypeError as err:
            raise MXNetTypeError(f"Custom operator {op_type!r}: {cls.__name__}({text}) failed: {err}") from None
        _PROP_CACHE[key] = prop
    return prop


@dataclass(frozen=True)
class Signature:
    """A custom op resolved for its inputs: the prop, names, and every shape and dtype."""

    op_type: str
    prop: CustomOpProp
    arguments: tuple
    outputs: tuple
    aux_names: tuple
    in_shapes: tuple
    out_shapes: tuple
    aux_shapes: tuple
    in_dtypes: tuple
    out_dtypes: tuple
    aux_dtypes: tuple

    def create_operator(self) -> CustomOp:
        dtypes = [_DTYPE_CODES.get(d.name, -1) for d in self.in_dtypes]
        op = self.prop.create_operator(current_device(), [list(s) for s in self.in_shapes], dtypes)
        if not isinstance(op, CustomOp):
            raise MXNetTypeError(f"Custom operator {self.op_type!r}: create_operator returned "
                                 f"{type(op).__name__}, expected a CustomOp")
        return op

    def out_structs(self) -> list:
        return [jax.ShapeDtypeStruct(s, d) for s, d in zip(self.out_shapes, self.out_dtypes)]


def _three(result: Any, what: str, op_type: str) -> tuple:
    """``infer_*`` results: two or three lists (a missing third means no auxiliary states)."""
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        raise MXNetValueError(f"Custom operator {op_type!r}: {what} must return 2 or 3 lists, got {result!r}")
    return (result[0], result[1], result[2] if len(result) == 3 else ())


def _check_count(values: Sequence, names: Sequence, what: str, op_type: str, rule: str) -> None:
    if len(values) != len(names):
        raise MXNetValueError(f"Custom operator {op_type!r}: {rule} returned {len(values)} {what}; expected "
                              f"{len(names)} ({list(names)})")


def infer_signature(op_type: str, kwargs: dict, shapes: Sequence, dtypes: Sequence) -> Signature:
    """Resolve ``op_type`` for inputs (arguments, then auxiliary states) of these shapes and dtypes."""
    prop = _prop(op_type, kwargs)
    args, outs, aux = (tuple(prop.list_arguments()), tuple(prop.list_outputs()),
                       tuple(prop.list_auxiliary_states()))
    if len(shapes) != len(args) + len(aux):
        raise MXNetValueError(f"Custom operator {op_type!r}: expected {len(args) + len(aux)} inputs (arguments "
                              f"{list(args)}, auxiliary states {list(aux)}), got {len(shapes)}")
    in_shapes = [list(s) for s in shapes[:len(args)]]
    ishape, oshape, ashape = _three(prop.infer_shape(in_shapes), "infer_shape", op_type)
    _check_count(ishape, args, "argument shapes", op_type, "infer_shape")
    _check_count(oshape, outs, "output shapes", op_type, "infer_shape")
    _check_count(ashape, aux, "auxiliary shapes", op_type, "infer_shape")
    in_types = [onp.dtype(d).type for d in dtypes[:len(args)]]
    itype, otype, atype = _three(prop.infer_type(in_types), "infer_type", op_type)
    _check_count(itype, args, "argument dtypes", op_type, "infer_type")
    _check_count(otype, outs, "output dtypes", op_type, "infer_type")
    if len(atype) != len(aux):  # a prop may leave the auxiliary dtypes out: like input 0, as MXNet
        atype = [in_types[0]] * len(aux)
    stypes = _three(prop.infer_storage_type(["default"] * len(args)), "infer_storage_type", op_type)
    if any(s != "default" for group in stypes for s in group):
        raise MXNetValueError(f"Custom operator {op_type!r}: infer_storage_type asks for {stypes}; mxjax "
                              "supports dense ('default') storage only")
    tupled = [tuple(tuple(int(d) for d in s) for s in group) for group in (ishape, oshape, ashape)]
    for given, inferred, name in zip(shapes[len(args):], tupled[2], aux):
        if tuple(given) != inferred:
            raise MXNetValueError(f"Custom operator {op_type!r}: auxiliary state {name!r} has shape "
                                  f"{tuple(given)}, infer_shape says {inferred}")
    return Signature(op_type, prop, args, outs, aux, *tupled,
                     tuple(onp.dtype(d) for d in dtypes[:len(args)]),
                     tuple(onp.dtype(d) for d in otype), tuple(onp.dtype(d) for d in atype))
