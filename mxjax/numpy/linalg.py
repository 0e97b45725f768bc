"""``mx.np.linalg``: NumPy's linear algebra functions, one binding per registered op.

Results are plain tuples where NumPy returns named tuples (``w, v = eigh(a)`` works
either way, as it does in MXNet).  Integer input gives the default float dtype.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

from .._invoke import invoke
from ..base import MXNetValueError
from ..operator import get_op
from . import _creation_ops, _extra, _manipulation, _reduction
from ._maker import np_function
from .multiarray import ndarray

norm = np_function("_npi_norm", name="norm", positional=("x", "ord", "axis", "keepdims"))
cond = np_function("_npi_cond", name="cond", positional=("x", "p"))
det = np_function("_npi_det", name="det")
slogdet = np_function("_npi_slogdet", name="slogdet")
inv = np_function("_npi_inv", name="inv")
pinv = np_function("_npi_pinv", name="pinv", positional=("a", "rcond", "hermitian"))
tensorinv = np_function("_npi_tensorinv", name="tensorinv")
matrix_power = np_function("_npi_matrix_power", name="matrix_power")
multi_dot = np_function("_npi_multi_dot", name="multi_dot")
solve = np_function("_npi_solve", name="solve")
tensorsolve = np_function("_npi_tensorsolve", name="tensorsolve")
lstsq = np_function("_npi_lstsq", name="lstsq")
cholesky = np_function("_npi_cholesky", name="cholesky")
eig = np_function("_npi_eig", name="eig")
eigvals = np_function("_npi_eigvals", name="eigvals")
eigh = np_function("_npi_eigh", name="eigh")
eigvalsh = np_function("_npi_eigvalsh", name="eigvalsh")
svdvals = np_function("_npi_svdvals", name="svdvals")
matrix_rank = np_function("_npi_matrix_rank", name="matrix_rank", positional=("A", "tol", "hermitian"))

_svd = get_op("_npi_svd")
_svdvals = get_op("_npi_svdvals")
_qr = get_op("_npi_qr")


def binds(op: Any) -> Any:
    """Mark a wrapper as the front-end of ``op`` (``fn.op``, as generated bindings have)."""
    def mark(fn: Any) -> Any:
        fn.op = op
        return fn
    return mark


@binds(_svd)
def svd(a: Any, full_matrices: bool = False, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """Singular value decomposition: ``(u, s, vh)`` with ``a = u @ diag(s) @ vh``, or ``s`` alone
    when ``compute_uv`` is False.  Reduced by default, as MXNet 2.0's ``svd(a)`` gives it (``vh`` of
    shape (..., K, N), K = min(M, N)), so ``u @ diag(s) @ vh`` composes; NumPy's default is
    ``full_matrices=True``, which the keyword still gives."""
    if not compute_uv:
        return invoke(_svdvals, (a,), {"hermitian": bool(hermitian)}, ndarray)
    return invoke(_svd, (a,), {"full_matrices": bool(full_matrices), "hermitian": bool(hermitian)}, ndarray)


@binds(_qr)
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR factorization: ``(q, r)`` for mode 'reduced' or 'complete', ``r`` for 'r', ``(h, tau)`` for 'raw'."""
    if mode == "r":
        return invoke(_qr, (a,), {"mode": "reduced"}, ndarray)[1]
    return invoke(_qr, (a,), {"mode": mode}, ndarray)


# -- the Array API's linalg names, with MXNet 2.0's conventions -------------------------------------

tensordot = _reduction.tensordot
outer = _reduction.outer
matrix_transpose = _extra.matrix_transpose


def cross(a: Any, b: Any, axis: int = -1) -> Any:
    """Cross product of 3-element (or 2-element) vectors along ``axis`` of both inputs and the result."""
    return _reduction.cross(a, b, axis=axis)


def diagonal(a: Any, offset: int = 0) -> Any:
    """The diagonal at ``offset`` of a matrix (MXNet's version is ``np.diag``: a 1-D input gives the
    matrix with it on the diagonal)."""
    return _creation_ops.diag(a, k=offset)


def trace(a: Any, offset: int = 0) -> Any:
    """Sum along the diagonal at ``offset`` of the planes of the first two axes (MXNet's axes 0, 1), in
    ``a``'s dtype."""
    return _manipulation.trace(a, offset=offset, axis1=0, axis2=1)


def vecdot(a: Any, b: Any, axis: int | None = None) -> Any:
    """``tensordot`` of the flattened ``a`` and ``b`` over ``axis`` axes, as MXNet 2.0 defines it: None
    or 1 give the dot product of the flattened arrays, 0 their outer product."""
    return _reduction.tensordot(_manipulation.ravel(a), _manipulation.ravel(b), 1 if axis is None else axis)


def vector_norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector norm of ``x`` flattened (axis None), along one axis, or over a tuple of axes (those are
    merged into one leading axis first, so keepdims keeps one axis for them, as in MXNet)."""
    if axis is None:
        x, axis = _manipulation.ravel(x), 0
    elif isinstance(axis, (tuple, list)):
        axes = tuple(a % x.ndim for a in axis)
        rest = tuple(i for i in range(x.ndim) if i not in axes)
        merged = math.prod(x.shape[a] for a in axes)
        x = _manipulation.transpose(x, axes + rest).reshape((merged, *(x.shape[i] for i in rest)))
        axis = 0
    return norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)


def matrix_norm(x: Any, ord: Any = "fro", axis: Any = (-2, -1), keepdims: bool = False) -> Any:  # noqa: A002
    """Matrix norm ('fro', 'nuc', 1, -1, 2, -2, inf, -inf) of the matrices spanned by the two ``axis``."""
    if not (isinstance(axis, tuple) and len(axis) == 2):
        raise MXNetValueError(f"matrix_norm: the axis must be a 2-tuple of ints, got {axis!r}")
    return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def wrap_data_api_linalg_func(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: let a linalg function written with the Array API's keywords (``upper``, ``rtol``)
    also take NumPy's (``UPLO='U'/'L'``, ``rcond``, ``tol``)."""

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if "UPLO" in kwargs:
            kwargs["upper"] = kwargs.pop("UPLO") == "U"
        for old in ("rcond", "tol"):
            if kwargs.get(old) is not None:
                kwargs["rtol"] = kwargs.pop(old)
            else:
                kwargs.pop(old, None)
        return func(*args, **kwargs)

    return wrapped


__all__ = ["norm", "cond", "det", "slogdet", "inv", "pinv", "tensorinv", "matrix_power", "multi_dot",
           "solve", "tensorsolve", "lstsq", "cholesky", "eig", "eigvals", "eigh", "eigvalsh", "svd",
           "svdvals", "qr", "matrix_rank", "cross", "diagonal", "matrix_norm", "matrix_transpose", "outer",
           "tensordot", "trace", "vecdot", "vector_norm", "wrap_data_api_linalg_func"]
