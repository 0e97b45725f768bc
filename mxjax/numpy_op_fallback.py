"""``mx.numpy_op_fallback``: NumPy operators run as Python custom operators.

MXNet registers four custom ops here (``mx.operator.register``) that compute with NumPy
or with ``mx.np`` front-end code: ``empty_like_fallback``, ``resize_fallback``,
``unravel_index_fallback`` and ``mvn_fallback`` (``np.random.multivariate_normal``).
The same registrations run here, so ``mx.nd.Custom(a, op_type="resize_fallback",
new_shape=(2, 3))`` and the Symbol form work as in MXNet.  MXNet also files each as
``mx.nd.np._internal.<name>`` / ``mx.sym.np._internal.<name>``; mxjax has no such
modules, so :func:`register` files them in this module's ``_nd_npi`` / ``_sym_npi``.
None of them has a gradient (backward raises NotImplementedError, as in MXNet).
"""
from __future__ import annotations

import ast
import functools
import types
from typing import Any, Callable

import numpy as np

from . import numpy as _mx_np
from . import operator
from .ndarray import Custom as _nd_custom
from .symbol import Custom as _sym_custom
from .util import np_array, use_np

__all__ = ["register", "EmptyLike", "EmptyLikeProp", "Resize", "ResizeProp", "Unravel_index", "Unravel_indexProp",
           "MultivariateNormal", "MultivariateNormalProp"]

# where MXNet's mx.nd.np._internal / mx.sym.np._internal would hold the registered functions
_nd_npi = types.SimpleNamespace(Custom=_nd_custom)
_sym_npi = types.SimpleNamespace(Custom=_sym_custom)


def register(op_name: str, imperative: bool = True, symbolic: bool = True) -> Callable[[type], type]:
    """Register a CustomOpProp as ``op_name`` and file ``Custom(..., op_type=op_name)`` as
    ``_nd_npi.<op_name>`` (imperative) and ``_sym_npi.<op_name>`` (symbolic)."""
    def save(namespace: Any) -> None:
        if hasattr(namespace, op_name):
            raise ValueError(f"Duplicate name {op_name} found in the fallback operators")
        setattr(namespace, op_name, functools.partial(namespace.Custom, op_type=op_name))

    def helper(prop_cls: type) -> type:
        with np_array():
            prop_cls = operator.register(op_name)(prop_cls)
        if imperative:
            save(_nd_npi)
        if symbolic:
            save(_sym_npi)
        return prop_cls
    return helper


def _no_gradient(name: str) -> None:
    raise NotImplementedError(f"Operator {name} does not support gradient computation")


@use_np
class EmptyLike(operator.CustomOp):
    """Fallback to NumPy's ``empty_like`` (mxjax fills it with NumPy's uninitialised values too)."""

    def __init__(self, dtype: Any, order: str, subok: bool, shape: Any) -> None:
        super().__init__()
        self._dtype, self._order, self._subok, self._shape = dtype, order, subok, shape

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        out = np.empty_like(in_data[0].asnumpy(), dtype=self._dtype, order=self._order, subok=self._subok)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out.dtype, device=in_data[0].device))

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list) -> None:
        _no_gradient("empty_like")


@register("empty_like_fallback")
class EmptyLikeProp(operator.CustomOpProp):
    """Fallback ``empty_like``: arguments ``prototype``; keywords dtype, order, subok, shape (as strings)."""

    def __init__(self, dtype: str, order: str, subok: str, shape: str) -> None:
        super().__init__(need_top_grad=True)
        self._dtype = None if dtype == "None" else dtype
        self._order = order
        self._subok = ast.literal_eval(subok)
        self._shape = ast.literal_eval(shape)

    def list_arguments(self) -> list:
        return ["prototype"]

    def infer_shape(self, in_shape: list) -> tuple:
        return (in_shape[0],), (in_shape[0],), ()

    def infer_type(self, in_type: list) -> tuple:
        if self._dtype is None:
            return (in_type[0],), (in_type[0],), ()
        return (in_type[0],), (np.dtype(self._dtype).type,), ()

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> operator.CustomOp:
        return EmptyLike(self._dtype, self._order, self._subok, self._shape)


@use_np
class Resize(operator.CustomOp):
    """Fallback to NumPy's ``resize``."""

    def __init__(self, new_shape: Any) -> None:
        super().__init__()
        self._new_shape = new_shape

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        out = np.resize(in_data[0].asnumpy(), self._new_shape)
        self.assign(out_data[0], req[0], _mx_np.array(out, dtype=out.dtype, device=out_data[0].device))

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list) -> None:
        _no_gradient("resize")


@register("resize_fallback")
class ResizeProp(operator.CustomOpProp):
    """Fallback ``resize``: argument ``a``; keyword new_shape (an int or a shape, as a string)."""

    def __init__(self, new_shape: str) -> None:
        super().__init__(need_top_grad=True)
        self._new_shape = ast.literal_eval(new_shape)

    def list_arguments(self) -> list:
        return ["a"]

    def infer_shape(self, in_shape: list) -> tuple:
        out_shape = (self._new_shape,) if np.isscalar(self._new_shape) else self._new_shape
        return (in_shape[0],), (out_shape,), ()

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> operator.CustomOp:
        return Resize(self._new_shape)


@use_np
class Unravel_index(operator.CustomOp):  # noqa: N801  (MXNet's name)
    """Fallback to NumPy's ``unravel_index``: one output stacking the coordinate arrays."""

    def __init__(self, shape: Any) -> None:
        super().__init__()
        self._shape = shape

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        out = np.unravel_index(in_data[0].asnumpy(), self._shape)
        self.assign(out_data[0], req[0], _mx_np.array(np.stack(out), dtype=out_data[0].dtype,
                                                      device=out_data[0].device))

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list) -> None:
        _no_gradient("Unravel_index")


@register("unravel_index_fallback")
class Unravel_indexProp(operator.CustomOpProp):  # noqa: N801  (MXNet's name)
    """Fallback ``unravel_index``: argument ``indices``; keyword shape (as a string)."""

    def __init__(self, shape: str) -> None:
        super().__init__(need_top_grad=True)
        self._shape = ast.literal_eval(shape)

    def list_arguments(self) -> list:
        return ["indices"]

    def infer_shape(self, in_shape: list) -> tuple:
        dims = (1,) if np.isscalar(self._shape) else (len(self._shape),)
        return (in_shape[0],), (dims + tuple(in_shape[0]),), ()

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> operator.CustomOp:
        return Unravel_index(self._shape)


@use_np
class MultivariateNormal(operator.CustomOp):
    """Fallback ``random.multivariate_normal``: ``mean + cholesky(cov) @ noise`` with ``mx.np`` code
    (samples with covariance ``cov``; MXNet 2.0's give ``L.T @ L``, see ``forward``)."""

    def __init__(self, size: Any = None) -> None:
        super().__init__()
        self._size = size

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        loc, cov = in_data[0], in_data[1]
        if cov.dtype == np.float16:
            scale = _mx_np.linalg.cholesky(cov.astype(np.float32)).astype(np.float16)
        else:
            scale = _mx_np.linalg.cholesky(cov)
        noise = _mx_np.random.normal(size=out_data[0].shape, dtype=loc.dtype, device=loc.device)
        # scale @ noise (MXNet 2.0 contracts the other index, scale.T @ noise, whose samples have
        # covariance scale.T @ scale rather than cov: a bug this does not copy)
        self.assign(out_data[0], req[0], loc + _mx_np.einsum("...kj,...j->...k", scale, noise))

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list, aux: list) -> None:
        _no_gradient("random.multivariate_normal")


@register("mvn_fallback")
class MultivariateNormalProp(operator.CustomOpProp):
    """Fallback ``random.multivariate_normal``: arguments ``mean``, ``cov``; keyword size (as a string)."""

    def __init__(self, size: str | None = None) -> None:
        super().__init__(need_top_grad=True)
        self._size = ast.literal_eval(size) if size is not None else None

    def list_arguments(self) -> list:
        return ["mean", "cov"]

    def infer_shape(self, in_shape: list) -> tuple:
        loc_shape, cov_shape = in_shape[0], in_shape[1]
        if len(loc_shape) < 1:
            raise ValueError("mean must be at least 1 dimensional")
        if len(cov_shape) < 2:
            raise ValueError("cov must be at least 2 dimensional")
        if cov_shape[-1] != cov_shape[-2]:
            raise ValueError(f"the last two dimensions of the parameter cov have to be the same, whereas the "
                             f"shape of cov is {tuple(cov_shape)}")
        if cov_shape[-1] != loc_shape[-1]:
            raise ValueError(f"mean and cov must have same length. The shape of mean is {tuple(loc_shape[-1:])} "
                             f"but the shape of cov is {tuple(cov_shape[-2:])}")
        out_shape = np.broadcast_shapes(tuple(loc_shape), tuple(cov_shape[:-1]))
        if self._size is not None:
            size = (self._size,) if np.isscalar(self._size) else tuple(self._size)
            out_shape = size + out_shape
        return in_shape, (out_shape,), ()

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> operator.CustomOp:
        return MultivariateNormal(self._size)
