"""``np.linalg`` operators: NumPy's linear algebra with MXNet's names and dtype rules.

Op names are MXNet 2's symbol-JSON names (``_npi_det``...): the public NumPy names
live in the ``np.linalg`` sub-namespace and the legacy ``linalg_*`` ops (other
semantics: ``linalg_gemm``, ``linalg_potrf``...) are separate definitions.  Integer
input gives the default float dtype.  Shape errors NumPy raises (a non-square
matrix for ``inv``, mismatched ``solve`` operands) are checked at trace time, since
LAPACK-style kernels in XLA would otherwise fail obscurely or not at all.

``eig``/``eigvals`` and ``lstsq`` are ``dynamic_shape``: their output dtype (real
when every eigenvalue is real, as in NumPy) or shape (``lstsq``'s residuals are
empty when the rank is deficient) depends on the values.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp

from .. import _config
from ..base import MXNetValueError
from ._dtypes import to_float
from .registry import defop


# -- trace-time shape checks -------------------------------------------------------------
def _matrix(op: str, a: Any) -> None:
    if a.ndim < 2:
        raise MXNetValueError(
            f"{op}: expected a matrix (or a stack of matrices) with at least 2 dimensions, "
            f"got an array of shape {tuple(a.shape)}")


def _square(op: str, a: Any) -> None:
    _matrix(op, a)
    if a.shape[-1] != a.shape[-2]:
        raise MXNetValueError(
            f"{op}: expected square matrices in the last two dimensions, got shape {tuple(a.shape)}")


def _uplo(op: str, UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise MXNetValueError(f"{op}: UPLO must be 'L' or 'U', got {UPLO!r}")


# -- value checks (MXNet's LAPACK failures) ---------------------------------------------------
# MXNet raises MXNetError where LAPACK reports failure: a Cholesky factorization of a matrix
# that is not positive definite, an exactly singular matrix to invert or solve with, NaN/inf
# input to an eigen- or singular value decomposition.  XLA returns NaNs instead, so each such op
# has a ``check`` run on its concrete inputs before the compiled call: a small jitted predicate
# (one host read of a bool).  Under an outer trace (hybridized blocks) no check runs.

@jax.jit
def _not_positive_definite(a: Any) -> Any:
    return ~jnp.all(jnp.isfinite(jnp.linalg.cholesky(to_float(a), symmetrize_input=False)))


@jax.jit
def _exactly_singular(a: Any) -> Any:
    lu = jax.lax.linalg.lu(to_float(a))[0]
    return jnp.any(jnp.diagonal(lu, axis1=-2, axis2=-1) == 0)


@jax.jit
def _zero_diagonal(a: Any) -> Any:
    return jnp.any(jnp.diagonal(a, axis1=-2, axis2=-1) == 0)


@jax.jit
def _not_finite(a: Any) -> Any:
    return ~jnp.all(jnp.isfinite(a))


def _failed(predicate: Any, a: Any) -> bool:
    """Whether ``predicate`` holds for square matrices ``a`` (other shapes: the op's own error)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.size == 0:
        return False
    with _config.x64():
        return bool(predicate(a))


def _finite_failed(a: Any) -> bool:
    with _config.x64():
        return bool(_not_finite(a))


def check_positive_definite(op: str, a: Any, upper: bool = False) -> None:
    """Raise as MXNet's potrf does when a (lower, or ``upper``) triangle is not positive definite."""
    if _failed(_not_positive_definite, jnp.conj(jnp.swapaxes(a, -1, -2)) if upper else a):
        raise MXNetValueError(
            f"{op}: the Cholesky factorization failed for input of shape {tuple(a.shape)}; expected "
            "symmetric positive-definite matrices")


def check_invertible(op: str, a: Any) -> None:
    """Raise as MXNet's getrf-based inverse/solve do for an exactly singular matrix."""
    if _failed(_exactly_singular, a):
        raise MXNetValueError(
            f"{op}: the matrix of shape {tuple(a.shape)} is singular (not invertible); expected "
            "non-singular square matrices")


def check_factor(op: str, a: Any) -> None:
    """Raise as MXNet's potri does for a triangular factor with a zero on its diagonal."""
    if _failed(_zero_diagonal, a):
        raise MXNetValueError(
            f"{op}: the Cholesky factor of shape {tuple(a.shape)} has a zero on its diagonal; expected "
            "the factor of a positive-definite matrix (as potrf gives)")


def check_finite(op: str, a: Any) -> None:
    """Raise as MXNet's LAPACK decompositions do for NaN or infinite input."""
    if a.ndim >= 2 and a.size and _finite_failed(a):
        raise MXNetValueError(
            f"{op}: the input of shape {tuple(a.shape)} contains NaN or infinity; expected finite values")


# -- norms ---------------------------------------------------------------------------------
_NORM_FLAGS = {0: None, 1: "fro", 2: "nuc", 3: float("inf"), 4: float("-inf")}


@defop("_npi_norm")
def norm(x, *, ord: any = None, axis: axis | None = None, keepdims: bool = False, flag: int = -1):
    """Matrix or vector norm (``ord``: None, 'fro', 'nuc', inf, -inf, or a number)."""
    if flag >= 0:  # MXNet's symbol JSON encodes non-numeric orders as a flag
        if flag not in _NORM_FLAGS:
            raise MXNetValueError(f"norm: flag must be -1 (use ord) or 0-4, got {flag}")
        ord = _NORM_FLAGS[flag]
    if isinstance(ord, str) and ord not in ("fro", "nuc"):
        ord = float(ord)  # 'inf' / '-inf' read back from an attribute string
    return jnp.linalg.norm(to_float(x), ord=ord, axis=axis, keepdims=keepdims)


@defop("_npi_cond")
def cond(x, *, p: any = None):
    """Condition number of a matrix (``p`` as in ``norm``; None is the 2-norm via SVD)."""
    _matrix("cond", x)
    if p is not None and p not in (2, -2):
        _square("cond", x)
    return jnp.linalg.cond(to_float(x), p)


# -- determinants and inverses -------------------------------------------------------------
@defop("_npi_det")
def det(a):
    """Determinant of square matrices."""
    _square("det", a)
    return jnp.linalg.det(to_float(a))


@defop("_npi_slogdet", num_outputs=2)
def slogdet(a):
    """Sign and natural log of the absolute determinant: ``(sign, logabsdet)``."""
    _square("slogdet", a)
    sign, logdet = jnp.linalg.slogdet(to_float(a))
    return sign, logdet


@defop("_npi_inv", check=lambda a: check_invertible("inv", a))
def inv(a):
    """Inverse of square matrices."""
    _square("inv", a)
    return jnp.linalg.inv(to_float(a))


@defop("_npi_pinv")
def pinv(a, rcond=1e-15, *, hermitian: bool = False):
    """Moore-Penrose pseudo-inverse; singular values below ``rcond`` * largest are dropped."""
    _matrix("pinv", a)
    rcond = 1e-15 if rcond is None else rcond
    return jnp.linalg.pinv(to_float(a), rtol=jnp.asarray(rcond), hermitian=hermitian)


@defop("_npi_tensorinv", check=lambda a, ind=2: check_invertible(
    "tensorinv", a.reshape(math.prod(a.shape[:ind]), -1)) if ind > 0 and a.size else None)
def tensorinv(a, *, ind: int = 2):
    """Inverse of an N-d array with respect to ``tensordot`` over its first ``ind`` axes."""
    if ind <= 0:
        raise MXNetValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    if math.prod(a.shape[:ind]) != math.prod(a.shape[ind:]):
        raise MXNetValueError(
            f"tensorinv: the first {ind} dimensions of shape {tuple(a.shape)} must have the same "
            f"product as the remaining ones")
    return jnp.linalg.tensorinv(to_float(a), ind)


@defop("_npi_matrix_power")
def matrix_power(a, *, n: int = 1):
    """Raise square matrices to the integer power ``n`` (negative: power of the inverse)."""
    _square("matrix_power", a)
    return jnp.linalg.matrix_power(to_float(a) if n < 0 else a, n)


@defop("_npi_multi_dot")
def multi_dot(*arrays):
    """Dot product of two or more arrays in the cheapest evaluation order."""
    if len(arrays) < 2:
        raise MXNetValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}")
    if arrays[0].ndim not in (1, 2) or arrays[-1].ndim not in (1, 2) or \
            any(x.ndim != 2 for x in arrays[1:-1]):
        raise MXNetValueError(
            "multi_dot: the first and last arrays must be 1-D or 2-D and the others 2-D, got shapes "
            f"{[tuple(x.shape) for x in arrays]}")
    return jnp.linalg.multi_dot(arrays)


# -- solvers ---------------------------------------------------------------------------------
@defop("_npi_solve", check=lambda a, b: check_invertible("solve", a))
def solve(a, b):
    """Solve ``a @ x = b`` for x (b: a vector if 1-D, else a stack of (M, K) matrices)."""
    _square("solve", a)
    m = a.shape[-1]
    rows = b.shape[0] if b.ndim == 1 else (b.shape[-2] if b.ndim >= 2 else None)
    if rows != m:
        raise MXNetValueError(
            f"solve: a of shape {tuple(a.shape)} needs b of shape ({m},) or (..., {m}, K), "
            f"got {tuple(b.shape)}")
    a, b = to_float(a), to_float(b)
    return jnp.linalg.solve(a, b)


@defop("_npi_tensorsolve")
def tensorsolve(a, b, *, axes: tuple | None = None):
    """Solve ``tensordot(a, x, x.ndim) = b`` for x."""
    shape = tuple(a.shape)
    if axes is not None:  # those axes of a move to the end, as NumPy does
        moved = [ax % a.ndim for ax in axes]
        shape = tuple(shape[i] for i in range(a.ndim) if i not in moved) + tuple(shape[i] for i in moved)
    n = math.prod(shape[b.ndim:])
    if n * n != math.prod(shape) or math.prod(b.shape) != n:
        raise MXNetValueError(
            f"tensorsolve: a of shape {tuple(a.shape)} (axes={axes}) and b of shape {tuple(b.shape)} do not "
            "fit: need prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim]) == b.size")
    return jnp.linalg.tensorsolve(to_float(a), to_float(b), axes)


@functools.partial(jax.jit, static_argnames="rcond")
def _lstsq(a: Any, b: Any, rcond: float | None) -> Any:
    return jnp.linalg.lstsq(a, b, rcond)


def lstsq(a, b, *, rcond: float | None = None):
    """Least-squares solution of ``a @ x = b``: ``(x, residuals, rank, singular_values)``."""
    if a.ndim != 2 or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise MXNetValueError(
            f"lstsq: expected a of shape (M, N) and b of shape (M,) or (M, K), got {tuple(a.shape)} "
            f"and {tuple(b.shape)}")
    x, resid, rank, s = _lstsq(to_float(a), to_float(b), rcond)
    m, n = a.shape
    # NumPy: residuals only when the system is overdetermined and of full rank, else empty
    if m <= n or (not isinstance(rank, jax.core.Tracer) and int(rank) < n):
        resid = jnp.zeros((0,), resid.dtype)
    return x, resid, rank.astype(jnp.int32), s


defop("_npi_lstsq", num_outputs=4, dynamic_shape=True, differentiable=False)(lstsq)


# -- decompositions --------------------------------------------------------------------------
@defop("_npi_cholesky", check=lambda a, upper=False: check_positive_definite("cholesky", a, upper))
def cholesky(a, *, upper: bool = False):
    """Cholesky factor of Hermitian positive-definite matrices (lower, or upper with ``upper=True``)."""
    _square("cholesky", a)
    a = to_float(a)
    if upper:  # NumPy reads the upper triangle then: the lower triangle of a^H
        return jnp.conj(jnp.swapaxes(jnp.linalg.cholesky(jnp.conj(jnp.swapaxes(a, -1, -2)),
                                                         symmetrize_input=False), -1, -2))
    return jnp.linalg.cholesky(a, symmetrize_input=False)


@defop("_npi_qr", num_outputs=2)
def qr(a, *, mode: str = "reduced"):
    """QR factorization ``(q, r)``; mode 'reduced', 'complete', or 'raw' (``(h, tau)`` as LAPACK)."""
    _matrix("qr", a)
    if mode not in ("reduced", "complete", "raw"):
        raise MXNetValueError(f"qr: mode must be 'reduced', 'complete', 'r' or 'raw', got {mode!r}")
    q, r = jnp.linalg.qr(to_float(a), mode=mode)
    return q, r


@defop("_npi_svd", num_outputs=3, check=lambda a, **_: check_finite("svd", a))
def svd(a, *, full_matrices: bool = False, hermitian: bool = False):
    """Singular value decomposition ``(u, s, vh)`` with ``a = u @ diag(s) @ vh``; reduced unless
    ``full_matrices``, as MXNet 2.0's ``_npi_svd`` (which has no such parameter) computes it."""
    _matrix("svd", a)
    u, s, vh = jnp.linalg.svd(to_float(a), full_matrices=full_matrices, hermitian=hermitian)
    return u, s, vh


@defop("_npi_svdvals", check=lambda a, **_: check_finite("svdvals", a))
def svdvals(a, *, hermitian: bool = False):
    """Singular values, in descending order."""
    _matrix("svdvals", a)
    return jnp.linalg.svd(to_float(a), compute_uv=False, hermitian=hermitian)


@defop("_npi_eigh", num_outputs=2, check=lambda a, **_: check_finite("eigh", a))
def eigh(a, *, UPLO: str = "L"):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, reading the ``UPLO`` triangle."""
    _square("eigh", a)
    _uplo("eigh", UPLO)
    w, v = jnp.linalg.eigh(to_float(a), UPLO=UPLO, symmetrize_input=False)
    return w, v


@defop("_npi_eigvalsh", check=lambda a, **_: check_finite("eigvalsh", a))
def eigvalsh(a, *, UPLO: str = "L"):
    """Eigenvalues (ascending) of Hermitian matrices, reading the ``UPLO`` triangle."""
    _square("eigvalsh", a)
    _uplo("eigvalsh", UPLO)
    return jnp.linalg.eigh(to_float(a), UPLO=UPLO, symmetrize_input=False)[0]


def _on_cpu(fn: Any, a: Any) -> Any:
    """Run ``fn`` on the host CPU: XLA has a general eigensolver only there."""
    if isinstance(a, jax.core.Tracer):
        return fn(a)
    a = jnp.asarray(a)
    device = next(iter(a.devices()))
    if device.platform == "cpu":
        return fn(a)
    out = fn(jax.device_put(a, jax.devices("cpu")[0]))
    return jax.tree_util.tree_map(lambda x: jax.device_put(x, device), out)


@jax.jit
def _eig(a: Any) -> Any:
    w, v = jnp.linalg.eig(a)
    return w, v, jnp.all(jnp.imag(w) == 0)


@jax.jit
def _eigvals(a: Any) -> Any:
    w = jnp.linalg.eigvals(a)
    return w, jnp.all(jnp.imag(w) == 0)


def eig(a):
    """Eigenvalues and right eigenvectors ``(w, v)`` of square matrices (complex unless all are real)."""
    _square("eig", a)
    w, v, real = _on_cpu(_eig, to_float(a))
    if not isinstance(real, jax.core.Tracer) and bool(real):  # NumPy returns real results then
        return jnp.real(w), jnp.real(v)
    return w, v


def eigvals(a):
    """Eigenvalues of square matrices (complex unless all are real)."""
    _square("eigvals", a)
    w, real = _on_cpu(_eigvals, to_float(a))
    if not isinstance(real, jax.core.Tracer) and bool(real):
        return jnp.real(w)
    return w


defop("_npi_eig", num_outputs=2, dynamic_shape=True)(eig)
defop("_npi_eigvals", dynamic_shape=True)(eigvals)


@defop("_npi_matrix_rank", differentiable=False)
def matrix_rank(A, tol=None, rtol=None, *, hermitian: bool = False):
    """Rank by SVD: singular values above ``tol`` (default: largest * max(M, N) * eps) count."""
    M = to_float(A)
    if M.ndim < 2:
        return jnp.any(M != 0).astype(jnp.int64)
    if hermitian:
        s = jnp.abs(jnp.linalg.eigh(M, symmetrize_input=False)[0])
    else:
        s = jnp.linalg.svd(M, compute_uv=False)
    top = jnp.max(s, axis=-1, keepdims=True)
    if tol is None:
        scale = rtol if rtol is not None else max(M.shape[-2:]) * jnp.finfo(s.dtype).eps
        tol = top * jnp.asarray(scale)[..., None]
    else:
        tol = jnp.asarray(tol)[..., None]
    return jnp.sum(s > tol, axis=-1).astype(jnp.int64)
