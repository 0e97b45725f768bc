"""Legacy (MXNet 1.x) ``linalg_*`` ops: BLAS/LAPACK-style routines batched over leading axes.

Every op works on the last two axes (``gemm``/``gemm2`` take ``axis`` for the row
axis); results that reduce a single matrix to a number have shape (1,) as in 1.x.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

from ..base import MXNetValueError
from ._dtypes import to_float
from .legacy_reduce import norm_axis, one_d
from .linalg import check_factor, check_invertible, check_positive_definite
from .registry import defop


def _square(a, op: str) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise MXNetValueError(f"{op}: expected square matrices in the last two axes, got shape {tuple(a.shape)}")


def _matrices(a, op: str) -> None:
    if a.ndim < 2:
        raise MXNetValueError(f"{op}: expected an input of at least 2 dimensions, got shape {tuple(a.shape)}")


def _t(a):
    return jnp.swapaxes(a, -1, -2)


def _rows_last(x, axis: int, op: str):
    """Move the row axis to position -2 (MXNet's ``axis`` parameter of gemm/gemm2)."""
    return jnp.moveaxis(x, norm_axis(axis, x.ndim, op), -2)


def _product(a, b, transpose_a: bool, transpose_b: bool, op: str):
    _matrices(a, op)
    _matrices(b, op)
    a = _t(a) if transpose_a else a
    b = _t(b) if transpose_b else b
    if a.shape[-1] != b.shape[-2] or a.shape[:-2] != b.shape[:-2]:
        raise MXNetValueError(f"{op}: cannot multiply op(A) of shape {tuple(a.shape)} "
                              f"by op(B) of shape {tuple(b.shape)}")
    return jnp.matmul(a, b)


@defop("_linalg_gemm", aliases=("linalg_gemm",))
def linalg_gemm(A, B, C, *, transpose_a: bool = False, transpose_b: bool = False, alpha: float = 1.0,
                beta: float = 1.0, axis: int = -2):
    """alpha * op(A) @ op(B) + beta * C, batched over the leading axes."""
    a, b, c = (_rows_last(x, axis, "linalg_gemm") for x in (A, B, C))
    prod = _product(a, b, transpose_a, transpose_b, "linalg_gemm")
    if prod.shape != c.shape:
        raise MXNetValueError(f"linalg_gemm: C has shape {tuple(C.shape)}, expected the product's {prod.shape}")
    out = alpha * prod + beta * c
    return jnp.moveaxis(out, -2, norm_axis(axis, A.ndim, "linalg_gemm")).astype(A.dtype)


@defop("_linalg_gemm2", aliases=("linalg_gemm2",))
def linalg_gemm2(A, B, *, transpose_a: bool = False, transpose_b: bool = False, alpha: float = 1.0,
                 axis: int = -2):
    """alpha * op(A) @ op(B), batched over the leading axes."""
    a, b = (_rows_last(x, axis, "linalg_gemm2") for x in (A, B))
    out = alpha * _product(a, b, transpose_a, transpose_b, "linalg_gemm2")
    return jnp.moveaxis(out, -2, norm_axis(axis, A.ndim, "linalg_gemm2")).astype(A.dtype)


@defop("_linalg_potrf", aliases=("linalg_potrf",),
       check=lambda A, lower=True: check_positive_definite("linalg_potrf", A))
def linalg_potrf(A, *, lower: bool = True):
    """Cholesky factor of symmetric positive-definite A (lower L with A = L L^T, or upper U = L^T)."""
    _square(A, "linalg_potrf")
    L = jnp.linalg.cholesky(to_float(A))
    return L if lower else _t(L)


@defop("_linalg_potri", aliases=("linalg_potri",), check=lambda A, lower=True: check_factor("linalg_potri", A))
def linalg_potri(A, *, lower: bool = True):
    """Inverse of L L^T (or U^T U) from its Cholesky factor A."""
    _square(A, "linalg_potri")
    L = jnp.tril(A) if lower else _t(jnp.triu(A))
    eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=L.dtype), L.shape)
    Linv = solve_triangular(L, eye, lower=True)
    return _t(Linv) @ Linv


@defop("_linalg_trsm", aliases=("linalg_trsm",))
def linalg_trsm(A, B, *, transpose: bool = False, rightside: bool = False, lower: bool = True,
                alpha: float = 1.0):
    """Solve op(A) X = alpha B (or X op(A) = alpha B if rightside) for triangular A."""
    _square(A, "linalg_trsm")
    _matrices(B, "linalg_trsm")
    n = A.shape[-1]
    if (B.shape[-1] if rightside else B.shape[-2]) != n:
        raise MXNetValueError(f"linalg_trsm: B of shape {tuple(B.shape)} does not fit A of shape {tuple(A.shape)}")
    if rightside:  # X op(A) = aB  <=>  op(A)^T X^T = a B^T
        x = solve_triangular(A, alpha * _t(B), lower=lower, trans=0 if transpose else 1)
        return _t(x).astype(B.dtype)
    return solve_triangular(A, alpha * B, lower=lower, trans=1 if transpose else 0).astype(B.dtype)


@defop("_linalg_trmm", aliases=("linalg_trmm",))
def linalg_trmm(A, B, *, transpose: bool = False, rightside: bool = False, lower: bool = True,
                alpha: float = 1.0):
    """alpha * op(A) @ B (or alpha * B @ op(A) if rightside) for the triangle of A."""
    _square(A, "linalg_trmm")
    tri = jnp.tril(A) if lower else jnp.triu(A)
    tri = _t(tri) if transpose else tri
    out = _product(B, tri, False, False, "linalg_trmm") if rightside else _product(tri, B, False, False,
                                                                                   "linalg_trmm")
    return (alpha * out).astype(B.dtype)


@defop("_linalg_syrk", aliases=("linalg_syrk",))
def linalg_syrk(A, *, transpose: bool = False, alpha: float = 1.0):
    """alpha * A @ A^T (or alpha * A^T @ A if transpose)."""
    _matrices(A, "linalg_syrk")
    out = _t(A) @ A if transpose else A @ _t(A)
    return (alpha * out).astype(A.dtype)


@defop("_linalg_sumlogdiag", aliases=("linalg_sumlogdiag",))
def linalg_sumlogdiag(A):
    """Sum of the logarithms of the diagonal of each square matrix."""
    _square(A, "linalg_sumlogdiag")
    return one_d(jnp.sum(jnp.log(jnp.diagonal(to_float(A), axis1=-2, axis2=-1)), axis=-1))


@defop("_linalg_inverse", aliases=("linalg_inverse",), check=lambda A: check_invertible("linalg_inverse", A))
def linalg_inverse(A):
    """Inverse of each square matrix."""
    _square(A, "linalg_inverse")
    return jnp.linalg.inv(to_float(A))


@defop("_linalg_det", aliases=("linalg_det",))
def linalg_det(A):
    """Determinant of each square matrix."""
    _square(A, "linalg_det")
    return one_d(jnp.linalg.det(to_float(A)))


@defop("_linalg_slogdet", aliases=("linalg_slogdet",), num_outputs=2)
def linalg_slogdet(A):
    """(sign, log|det|) of each square matrix."""
    _square(A, "linalg_slogdet")
    sign, logdet = jnp.linalg.slogdet(to_float(A))
    return one_d(sign), one_d(logdet)


@defop("_linalg_extractdiag", aliases=("linalg_extractdiag",))
def linalg_extractdiag(A, *, offset: int = 0):
    """The ``offset`` diagonal of each matrix in the last two axes."""
    _matrices(A, "linalg_extractdiag")
    return jnp.diagonal(A, offset, axis1=-2, axis2=-1)


@defop("_linalg_makediag", aliases=("linalg_makediag",))
def linalg_makediag(A, *, offset: int = 0):
    """Square matrices with the vectors in the last axis on their ``offset`` diagonal."""
    if A.ndim < 1:
        raise MXNetValueError("linalg_makediag: expected an input of at least 1 dimension, got a 0-d array")
    n = A.shape[-1] + abs(offset)
    rows = jnp.arange(A.shape[-1]) + max(-offset, 0)
    cols = jnp.arange(A.shape[-1]) + max(offset, 0)
    out = jnp.zeros(A.shape[:-1] + (n, n), A.dtype)
    return out.at[..., rows, cols].set(A)
