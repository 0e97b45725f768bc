"""MXNet's Python custom operators: ``CustomOp``, ``CustomOpProp``, ``register`` and the ``Custom`` op.

A user subclasses :class:`CustomOpProp` (what the op takes and returns, its shape and
dtype rules) and :class:`CustomOp` (forward and backward on NDArrays), registers the
prop under a name, and calls ``mx.nd.Custom(x, op_type=name)`` or ``mx.sym.Custom``.

The registered op ``Custom`` runs the user's Python code on the host.  Inside a
compiled program (a hybridized block, a Symbol executor) it is a ``jax.pure_callback``
wrapped in a ``jax.custom_vjp`` whose backward is another callback calling the user's
``backward``; output shapes and dtypes come from the prop's ``infer_shape`` and
``infer_type``.  The user's code receives NDArrays, which this layer cannot build (the
NDArray module is built on it): ``mxjax._custom_host`` fills :data:`HOST` at import.
Like MXNet, keyword arguments reach the prop's ``__init__`` as strings.

Auxiliary states are updated in place by imperative calls (``mxjax._custom_host``).  In
graphs they are ordinary inputs and the forward's updates to them are dropped: the
graph layer reads an op's auxiliary slots from ``OpDef.aux_inputs``, one tuple per op,
while a custom op's come from its prop.

The base classes and their shape rules are in ``_custom_prop``, the host callbacks in
``_custom_callback``; this module (their public home, re-exporting them) holds the op.
"""
from __future__ import annotations

import collections
import inspect
from typing import Any, Sequence

from .. import _config
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from ._custom_callback import HOST, HostArrays, _graph_call, user_error  # noqa: F401  (re-exported)
from ._custom_prop import _DTYPE_CODES, _prop, infer_signature  # noqa: F401  (_DTYPE_CODES: mxjax._library_abi)
from ._custom_prop import CustomOp, CustomOpProp, Signature, register
from .registry import OPS, OpDef, Param, get_op, list_ops, register_op

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_all_registered_operators_grouped", "get_operator_arguments", "OperatorArguments",
           "infer_signature", "output_names", "Signature", "HOST"]

for _public in (CustomOp, CustomOpProp, Signature, HostArrays):
    _public.__module__ = __name__  # MXNet's public home of the classes moved to _custom_prop / _custom_callback
del _public


# ----------------------------------------------------------------------------- the registered op

_RESERVED = frozenset({"num_args", "name", "attr", "out", "ctx", "device"})


class _AnyParams(dict):
    """Custom's parameters: ``op_type`` and whatever keywords the user's prop takes (kept as
    given; the prop receives them as strings).  Hidden (``__x__``) and front-end keys are not params."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (dict.__contains__(self, key) or
                                         (not key.startswith("__") and key not in _RESERVED))

    def __missing__(self, key: str) -> Param:
        return Param(key, None, "str")

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default


class CustomOpDef(OpDef):
    """The ``Custom`` op: its outputs, shapes and gradient come from the registered prop."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.params = _AnyParams(self.params)


def _split(params: dict) -> tuple[str, dict]:
    kwargs = {k: v for k, v in params.items() if k not in ("op_type", "_train")}
    op_type = params.get("op_type")
    if not op_type:
        raise MXNetTypeError("Custom: op_type (the name given to mx.operator.register) is required")
    return op_type, kwargs


def _signature_of(arrays: Sequence, params: dict) -> Signature:
    op_type, kwargs = _split(params)
    return infer_signature(op_type, kwargs, [tuple(a.shape) for a in arrays], [a.dtype for a in arrays])


def _custom(*data, op_type: str = "", _train: bool | None = None, **kwargs):
    """Run a registered Python custom operator (``mx.operator.register``) on ``data``.

    ``data`` are the prop's arguments followed by its auxiliary states; the other
    keywords are passed to the prop's ``__init__`` as strings.
    """
    params = {"op_type": op_type, **kwargs}
    sig = _signature_of(data, params)
    is_train = _config.is_training() if _train is None else bool(_train)
    results = _graph_call(sig, is_train, data)[:len(sig.outputs)]
    return results[0] if len(results) == 1 else tuple(results)


def _infer(*avals: Any, **params: Any) -> Any:
    structs = _signature_of(avals, params).out_structs()
    return structs[0] if len(structs) == 1 else tuple(structs)


def output_names(params: dict) -> list:
    """The prop's ``list_outputs()`` for a Custom node's parameters (MXNet names outputs after them)."""
    op_type, kwargs = _split(params)
    return list(_prop(op_type, kwargs).list_outputs())


def _count_outputs(params: dict) -> int:
    return len(output_names(params))


CUSTOM = register_op(CustomOpDef("Custom", _custom, num_outputs=_count_outputs, infer=_infer,
                                 output_names=output_names))


# ----------------------------------------------------------------------------- registry queries

OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])

_KIND_NAMES = {"int": "int", "float": "float", "bool": "boolean", "str": "string", "shape": "Shape(tuple)",
               "tuple": "Shape(tuple)", "axis": "int or Shape(tuple)", "dtype": "dtype"}


def get_all_registered_operators() -> list:
    """Every registered operator name, aliases included."""
    return list(OPS)


def get_all_registered_operators_grouped() -> dict:
    """Operator name -> all the names it is registered under (itself first)."""
    return {op.name: [op.name, *op.aliases] for op in list_ops()}


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """``OperatorArguments(narg, names, types)``: the op's array inputs, then its parameters."""
    try:
        op = get_op(op_name)
    except MXNetError:
        raise MXNetValueError(f"get_operator_arguments: operator {op_name!r} is not registered") from None
    names, types = [], []
    for name in op.inputs:
        if op.needs_key and name == "key":
            continue
        names.append(name)
        types.append("NDArray-or-Symbol[]" if op.variadic else "NDArray-or-Symbol")
    for name, spec in dict(op.params).items():
        if name.startswith("_"):
            continue
        base = spec.kind.replace(" | None", "")
        kind = _KIND_NAMES.get(base, base)
        if op is CUSTOM:
            types.append("string")
        elif spec.default is inspect.Parameter.empty:
            types.append(f"{kind}, required")
        else:
            types.append(f"{kind}, optional, default={spec.default!r}")
        names.append(name)
    return OperatorArguments(len(names), names, types)
