"""``mx.np.linalg``: NumPy's linear algebra functions, one binding per registered op.

Results are plain tuples where NumPy returns named tuples (``w, v = eigh(a)`` works
either way, as it does in MXNet).  Integer input gives the default float dtype.
"""
from __future__ import annotations

from typing import Any

from .._ndarray import invoke
from ..operator import get_op
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
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """Singular value decomposition: ``(u, s, vh)`` with ``a = u @ diag(s) @ vh``, or ``s`` alone
    when ``compute_uv`` is False."""
    if not compute_uv:
        return invoke(_svdvals, (a,), {"hermitian": bool(hermitian)}, ndarray)
    return invoke(_svd, (a,), {"full_matrices": bool(full_matrices), "hermitian": bool(hermitian)}, ndarray)


@binds(_qr)
def qr(a: Any, mode: str = "reduced") -> Any:
    """QR factorization: ``(q, r)`` for mode 'reduced' or 'complete', ``r`` for 'r', ``(h, tau)`` for 'raw'."""
    if mode == "r":
        return invoke(_qr, (a,), {"mode": "reduced"}, ndarray)[1]
    return invoke(_qr, (a,), {"mode": mode}, ndarray)


__all__ = ["norm", "cond", "det", "slogdet", "inv", "pinv", "tensorinv", "matrix_power", "multi_dot",
           "solve", "tensorsolve", "lstsq", "cholesky", "eig", "eigvals", "eigh", "eigvalsh", "svd",
           "svdvals", "qr", "matrix_rank"]
