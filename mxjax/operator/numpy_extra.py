"""The rest of NumPy's array functions: window functions, index generators, multi-output
element-wise functions, covariance and binning, and value-dependent selection."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetIndexError, MXNetValueError
from ._dtypes import fix_float, resolve_dtype, to_float
from .reduction import check_axis
from .registry import defop


def _window(fn, name: str):
    def compute(*, M: int = 0, dtype: dtype | None = None):
        if M < 0:
            raise MXNetValueError(f"{name}: M must be non-negative, got {M}")
        return fn(M).astype(resolve_dtype(dtype))
    compute.__doc__ = f"The {name} window of M points (default float dtype)."
    return compute


hanning = defop("hanning", aliases=("_npi_hanning",))(_window(jnp.hanning, "hanning"))
hamming = defop("hamming", aliases=("_npi_hamming",))(_window(jnp.hamming, "hamming"))
blackman = defop("blackman", aliases=("_npi_blackman",))(_window(jnp.blackman, "blackman"))
bartlett = defop("bartlett")(_window(jnp.bartlett, "bartlett"))


@defop("kaiser")
def kaiser(*, M: int = 0, beta: float = 0.0, dtype: dtype | None = None):
    """The Kaiser window of M points with shape parameter beta."""
    if M < 0:
        raise MXNetValueError(f"kaiser: M must be non-negative, got {M}")
    return jnp.kaiser(M, beta).astype(resolve_dtype(dtype))


@defop("tril_indices", aliases=("_npi_tril_indices",))
def tril_indices(*, n: int = 0, k: int = 0, m: int | None = None):
    """Row and column indices (int64) of the lower triangle of an (n, m) array."""
    return tuple(i.astype(jnp.int64) for i in jnp.tril_indices(n, k, m))


@defop("triu_indices")
def triu_indices(*, n: int = 0, k: int = 0, m: int | None = None):
    """Row and column indices (int64) of the upper triangle of an (n, m) array."""
    return tuple(i.astype(jnp.int64) for i in jnp.triu_indices(n, k, m))


@defop("diag_indices_from", aliases=("_npi_diag_indices_from",))
def diag_indices_from(arr):
    """Indices (int64) of the main diagonal of a square n-d array."""
    if arr.ndim < 2 or len(set(arr.shape)) != 1:
        raise MXNetValueError(f"diag_indices_from: expected a square array of ndim >= 2, got shape {arr.shape}")
    return tuple(i.astype(jnp.int64) for i in jnp.diag_indices_from(arr))


@defop("divmod", num_outputs=2)
def divmod_(x1, x2):
    """Floor quotient and remainder, element-wise (``(x1 // x2, x1 % x2)``)."""
    return tuple(fix_float(r, x1, x2) for r in jnp.divmod(x1, x2))


@defop("modf", num_outputs=2)
def modf(x):
    """Fractional and integral parts, element-wise (default float dtype for integers)."""
    return jnp.modf(to_float(x))


@defop("frexp", num_outputs=2)
def frexp(x):
    """Mantissa (float) and exponent (int32) with ``x == m * 2**e``."""
    return jnp.frexp(to_float(x))


@defop("cov")
def cov(m, y=None, fweights=None, aweights=None, *, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None, dtype: dtype | None = None):
    """Covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``."""
    out = jnp.cov(to_float(m), None if y is None else to_float(y), rowvar, bias, ddof, fweights, aweights)
    return out.astype(dtype) if dtype is not None else out


@defop("corrcoef")
def corrcoef(x, y=None, *, rowvar: bool = True, dtype: dtype | None = None):
    """Pearson correlation coefficients of the variables in ``x`` (and ``y``)."""
    out = jnp.corrcoef(to_float(x), None if y is None else to_float(y), rowvar)
    return out.astype(dtype) if dtype is not None else out


@defop("digitize")
def digitize(x, bins, *, right: bool = False):
    """Index (int64) of the bin each value of ``x`` falls in; ``bins`` must be monotonic."""
    if bins.ndim != 1:
        raise MXNetValueError(f"digitize: bins must be 1-D, got shape {bins.shape}")
    return jnp.digitize(x, bins, right).astype(jnp.int64)


@defop("gradient")
def gradient(f, *, spacing: tuple = (), axis: axis | None = None, edge_order: int = 1):
    """Second-order central differences in the interior, one-sided at the edges (one array per axis)."""
    if edge_order != 1:
        raise MXNetValueError(f"gradient: only edge_order=1 is supported, got {edge_order}")
    out = jnp.gradient(to_float(f), *spacing, axis=axis)
    return tuple(out) if isinstance(out, list) else out


@defop("compress", dynamic_shape=True)
def compress(condition, a, *, axis: int | None = None):
    """The slices of ``a`` along ``axis`` (flattened if None) where ``condition`` is true."""
    condition = jnp.asarray(condition).astype(bool)
    if condition.ndim != 1:
        raise MXNetValueError(f"compress: condition must be 1-D, got shape {condition.shape}")
    check_axis("compress", a, axis)
    _check_selection("compress", condition, jnp.size(a) if axis is None else jnp.shape(a)[axis],
                     0 if axis is None else axis)
    return jnp.compress(condition, a, axis=axis)


@defop("extract", dynamic_shape=True)
def extract(condition, arr):
    """The elements of ``arr`` (flattened) where ``condition`` is true."""
    condition = jnp.asarray(condition).astype(bool)
    _check_selection("extract", condition, jnp.size(arr), 0)
    return jnp.extract(condition, arr)


def _check_selection(op: str, condition, size: int, axis: int) -> None:
    """NumPy's IndexError for a true condition entry past the end of the selected axis (concrete only)."""
    if isinstance(condition, jax.core.Tracer):
        return
    beyond = onp.flatnonzero(onp.asarray(condition).reshape(-1)[size:])
    if beyond.size:
        raise MXNetIndexError(f"{op}: index {size + int(beyond[0])} is out of bounds for axis {axis} "
                              f"with size {size}")


@defop("vecdot")
def vecdot(x1, x2, *, axis: int = -1):
    """Dot product of vectors along ``axis``, broadcasting the other dimensions."""
    return jnp.vecdot(x1, x2, axis=axis)


@defop("matrix_transpose")
def matrix_transpose(x):
    """Swap the last two axes."""
    if x.ndim < 2:
        raise MXNetValueError(f"matrix_transpose: expected ndim >= 2, got shape {x.shape}")
    return jnp.swapaxes(x, -1, -2)


