"""The NDArray side of Python custom operators, and the imperative ``Custom`` front-end.

``mxjax.operator.custom`` defines ``CustomOp``/``CustomOpProp`` and the registered
``Custom`` op but cannot build NDArrays (the NDArray module is built on the operator
layer), so this module fills its factory slot at import.

``Custom(*data, op_type=..., **kwargs)`` is ``mx.nd.Custom``.  Called imperatively it
runs the user's ``forward`` directly on NDArrays: auxiliary states are the caller's
arrays, updated in place as in MXNet, and under ``autograd.record()`` the call is one
tape node whose backward calls the user's ``backward``.  Under deferred compute (a
hybridizing block) it records an ordinary ``Custom`` node, which compiled programs run
through host callbacks.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp

from . import _config, autograd
from . import _deferred_compute as dc
from ._ndarray import NDArray
from ._invoke import invoke, np_class
from ._tape import differentiable
from .base import MXNetTypeError
from .operator.custom import CUSTOM, HOST, CustomOp, Signature, infer_signature, user_error

__all__ = ["Custom"]


def _factory() -> Callable[[Any], NDArray]:
    """``make(host_array) -> NDArray`` of the class the current mode uses (MXNet 2 hands a custom
    op ``mx.np.ndarray`` when NumPy array semantics are on, the legacy NDArray otherwise)."""
    cls = np_class() if _config.is_np_array() else NDArray
    return _config.with_x64(lambda value: cls._wrap(jnp.asarray(value)))


HOST.factory = _factory


class _ImperativeCall(autograd.Function):
    """One imperative call of a custom op: forward now, backward (if recorded) from the tape."""

    def __init__(self, sig: Signature, op: CustomOp, is_train: bool, out_cls: type, diff: tuple) -> None:
        super().__init__()
        self.sig, self.op, self.is_train, self.out_cls, self.diff = sig, op, is_train, out_cls, diff
        self.make = HOST.maker()
        self.saved: tuple = ()

    @_config.with_x64
    def forward(self, *inputs: NDArray) -> Any:
        sig, make, n = self.sig, self.make, len(self.sig.arguments)
        in_data = [make(x.to_jax()) for x in inputs[:n]]  # copies: writes to them never reach the caller
        aux = list(inputs[n:])  # the caller's arrays: the op updates them in place
        out_data = [make(jnp.zeros(s, d)) for s, d in zip(sig.out_shapes, sig.out_dtypes)]
        try:
            self.op.forward(is_train=self.is_train, req=["write"] * len(out_data), in_data=in_data,
                            out_data=out_data, aux=aux)
        except Exception as err:
            raise user_error(sig.op_type, "forward", err) from err
        self.saved = (in_data, out_data, aux)
        outs = tuple(self.out_cls._wrap(o.to_jax().astype(d)) for o, d in zip(out_data, sig.out_dtypes))
        return outs if len(outs) > 1 else outs[0]

    @_config.with_x64
    def backward(self, *out_grads: NDArray) -> tuple:
        sig, make = self.sig, self.make
        in_data, out_data, aux = self.saved
        in_grad = [make(jnp.zeros(s, d)) for s, d in zip(sig.in_shapes, sig.in_dtypes)]
        req = ["write" if i in self.diff else "null" for i in range(len(in_grad))]
        try:
            self.op.backward(req=req, out_grad=[make(g.to_jax()) for g in out_grads], in_data=in_data,
                             out_data=out_data, in_grad=in_grad, aux=aux)
        except Exception as err:
            raise user_error(sig.op_type, "backward", err) from err
        aux_grads = [make(jnp.zeros(a.shape, a.dtype)) for a in aux]
        return tuple(g.astype(d) if g.dtype != d else g for g, d in zip(in_grad, sig.in_dtypes)) + tuple(aux_grads)


@_config.with_x64
def Custom(*data: Any, op_type: str | None = None, name: str | None = None, attr: Any = None,  # noqa: N802
           **kwargs: Any) -> Any:
    """Run the custom operator registered as ``op_type`` (``mx.operator.register``) on ``data``.

    data: the prop's arguments, then its auxiliary states (updated in place).
    kwargs: passed to the prop's ``__init__`` as strings, as MXNet does.
    Returns one array, or a tuple when the op has several outputs.
    """
    if not op_type:
        raise MXNetTypeError("Custom: op_type (the name given to mx.operator.register) is required")
    arrays = list(data)
    for i, x in enumerate(arrays):
        if not isinstance(x, NDArray):
            raise MXNetTypeError(f"Custom ({op_type!r}): input {i} must be an NDArray, got {type(x).__name__}")
    out_cls = type(arrays[0]) if arrays else NDArray
    if dc.is_deferred_compute():  # a hybridizing block: a graph node, run by host callbacks when compiled
        return invoke(CUSTOM, arrays, {"op_type": op_type, **kwargs}, out_cls)
    sig = infer_signature(op_type, kwargs, [x.shape for x in arrays], [x.dtype for x in arrays])
    diff = tuple(i for i, x in enumerate(arrays[:len(sig.arguments)]) if differentiable(x))
    call = _ImperativeCall(sig, sig.create_operator(), autograd.is_training(), out_cls, diff)
    return call(*arrays)


Custom.op = CUSTOM  # type: ignore[attr-defined]  (front-end functions name their op)
