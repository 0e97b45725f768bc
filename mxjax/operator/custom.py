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
"""
from __future__ import annotations

import collections
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as onp

from .. import _config
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from ..device import current_device
from .registry import OPS, OpDef, Param, get_op, list_ops, register_op

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_all_registered_operators_grouped", "get_operator_arguments", "OperatorArguments",
           "infer_signature", "output_names", "Signature", "HOST"]


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


# ----------------------------------------------------------------------------- host side

class HostArrays:
    """How host code builds the NDArrays a user's CustomOp sees; ``mxjax._custom_host`` fills
    ``factory`` at import: ``factory()`` returns ``make(host_array) -> NDArray`` of the class the
    current mode uses (``mx.np.ndarray`` when NumPy array semantics are on, as in MXNet 2)."""

    factory: Callable[[], Callable[[Any], Any]] | None = None

    def maker(self) -> Callable[[Any], Any]:
        if self.factory is None:
            raise MXNetError("Custom: the NDArray side of custom operators is not set up (import mxjax)")
        return self.factory()


HOST = HostArrays()


def user_error(op_type: str, method: str, err: Exception) -> MXNetError:
    """An exception raised by the user's code, as the MXNetError MXNet reports (naming the op type)."""
    if isinstance(err, MXNetError) and str(err).startswith(f"Custom operator {op_type!r}"):
        return err
    return MXNetError(f"Custom operator {op_type!r}: {method} raised {type(err).__name__}: {err}")


class _HostOp:
    """One graph node's CustomOp and the host functions its callbacks call (same instance for both)."""

    def __init__(self, sig: Signature, is_train: bool) -> None:
        self.sig, self.is_train = sig, is_train
        self.make = HOST.maker()  # fixed when traced: the callback may run on another thread
        self.op = sig.create_operator()

    @_config.with_x64  # the callback's thread: the user's code sees 64-bit types as mxjax's calls do
    def forward(self, *inputs: Any) -> tuple:
        sig, make, n = self.sig, self.make, len(self.sig.arguments)
        in_data = [make(x) for x in inputs[:n]]
        aux = [make(x) for x in inputs[n:]]
        out_data = [make(onp.zeros(s, d)) for s, d in zip(sig.out_shapes, sig.out_dtypes)]
        try:
            self.op.forward(is_train=self.is_train, req=["write"] * len(out_data), in_data=in_data,
                            out_data=out_data, aux=aux)
        except Exception as err:
            raise user_error(sig.op_type, "forward", err) from err
        return (tuple(onp.asarray(o, dtype=d) for o, d in zip(out_data, sig.out_dtypes))
                + tuple(onp.asarray(a, dtype=d) for a, d in zip(aux, sig.aux_dtypes)))

    @_config.with_x64
    def backward(self, diff: tuple, *arrays: Any) -> tuple:
        sig, make = self.sig, self.make
        n_in, n_out = len(sig.arguments) + len(sig.aux_names), len(sig.outputs)
        inputs, outs, cts = arrays[:n_in], arrays[n_in:n_in + n_out], arrays[n_in + n_out:]
        n = len(sig.arguments)
        in_grad = [make(onp.zeros(s, d)) for s, d in zip(sig.in_shapes, sig.in_dtypes)]
        try:
            self.op.backward(req=["write" if i in diff else "null" for i in range(n)],
                             out_grad=[make(c) for c in cts], in_data=[make(x) for x in inputs[:n]],
                             out_data=[make(o) for o in outs], in_grad=in_grad,
                             aux=[make(a) for a in inputs[n:]])
        except Exception as err:
            raise user_error(sig.op_type, "backward", err) from err
        return tuple(onp.asarray(in_grad[i], dtype=sig.in_dtypes[i]) for i in diff)


def _graph_call(sig: Signature, is_train: bool, inputs: tuple) -> Any:
    """The op inside a traced program: host callbacks under a ``custom_vjp`` (outputs, then new aux)."""
    host = _HostOp(sig, is_train)
    n_out = len(sig.outputs)
    result_structs = sig.out_structs() + [jax.ShapeDtypeStruct(s, d)
                                          for s, d in zip(sig.aux_shapes, sig.aux_dtypes)]
    diff = tuple(i for i, d in enumerate(sig.in_dtypes) if onp.issubdtype(d, onp.inexact))

    def forward(xs: tuple) -> tuple:
        return tuple(jax.pure_callback(host.forward, result_structs, *xs, vmap_method="sequential"))

    @jax.custom_vjp
    def run(xs: tuple) -> tuple:
        return forward(xs)

    def run_fwd(xs: tuple) -> tuple:
        results = forward(xs)
        return results, (xs, results[:n_out])

    def run_bwd(residuals: tuple, cts: tuple) -> tuple:
        xs, outs = residuals
        structs = [jax.ShapeDtypeStruct(sig.in_shapes[i], sig.in_dtypes[i]) for i in diff]
        grads = jax.pure_callback(lambda *a: host.backward(diff, *a), structs, *xs, *outs, *cts[:n_out],
                                  vmap_method="sequential") if diff else ()
        full: list = [None] * len(xs)
        for i, g in zip(diff, grads):
            full[i] = g
        return (tuple(full),)

    run.defvjp(run_fwd, run_bwd)
    return run(tuple(inputs))


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
