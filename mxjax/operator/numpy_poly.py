"""Polynomials and integration as real ops: polyadd, polysub, polymul, polyint, poly, trapz.

MXNet 2.0 runs these on host NumPy (its "fallback" functions); here they are jnp
programs, so they also record for autograd and trace under ``hybridize``.  Result
dtypes are NumPy's (what MXNet's fallback returns): arrays promote by dtype, and
integer input to a dividing function gives float64.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as onp

from ..base import MXNetTypeError, MXNetValueError
from .registry import defop


def numpy_float(*arrays) -> onp.dtype:
    """NumPy's result dtype of a float function of these arrays (integers and bools give float64)."""
    dtype = onp.result_type(*(jnp.result_type(a) for a in arrays))
    return dtype if dtype.kind in "fc" else onp.dtype(onp.float64)


def _coefficients(op: str, p) -> None:
    if jnp.ndim(p) != 1:
        raise MXNetValueError(f"{op}: expected 1-D polynomial coefficients, got shape {tuple(jnp.shape(p))}")


def _pad_front(p, size: int):
    return jnp.concatenate([jnp.zeros(size - p.shape[0], p.dtype), p]) if p.shape[0] < size else p


def _aligned(op: str, a1, a2):
    for p in (a1, a2):
        _coefficients(op, p)
    dtype = onp.result_type(jnp.result_type(a1), jnp.result_type(a2))
    size = max(a1.shape[0], a2.shape[0])
    return _pad_front(a1.astype(dtype), size), _pad_front(a2.astype(dtype), size)


@defop("polyadd", aliases=("_npi_polyadd",))
def polyadd(a1, a2):
    """Sum of two polynomials (1-D coefficients, highest power first; the shorter one is padded)."""
    x, y = _aligned("polyadd", a1, a2)
    return x + y


@defop("polysub", aliases=("_npi_polysub",))
def polysub(a1, a2):
    """Difference of two polynomials (1-D coefficients, highest power first)."""
    x, y = _aligned("polysub", a1, a2)
    return x - y


@defop("polymul", aliases=("_npi_polymul",))
def polymul(a1, a2):
    """Product of two polynomials: the full convolution of their coefficients."""
    for p in (a1, a2):
        _coefficients("polymul", p)
    dtype = onp.result_type(jnp.result_type(a1), jnp.result_type(a2))
    if dtype.kind in "biu":  # exact integer convolution (jnp.convolve goes through float)
        n = a1.shape[0] + a2.shape[0] - 1
        rows = jnp.arange(a1.shape[0])[:, None] + jnp.arange(a2.shape[0])[None, :]
        terms = (a1.astype(dtype)[:, None] * a2.astype(dtype)[None, :]).reshape(-1)
        return jnp.zeros(n, dtype).at[rows.reshape(-1)].add(terms)
    return jnp.convolve(a1.astype(dtype), a2.astype(dtype), mode="full")


@defop("polyint", aliases=("_npi_polyint",))
def polyint(p, k=None, *, m: int = 1):
    """The m-th antiderivative of a polynomial; ``k`` holds the m integration constants (zeros by
    default), the first for the outermost integration.  Always float64 or complex, as NumPy."""
    _coefficients("polyint", p)
    if m < 0:
        raise MXNetValueError(f"polyint: order of integral m must be non-negative, got {m}")
    if k is not None and jnp.size(k) not in (1, m):
        raise MXNetValueError(f"polyint: k must be a scalar or have m={m} elements, got {jnp.size(k)}")
    dtype = onp.result_type(jnp.result_type(p), onp.float64)
    constants = jnp.zeros(m, dtype) if k is None else jnp.broadcast_to(jnp.asarray(k, dtype).reshape(-1), (m,))
    out = p.astype(dtype)
    for i in range(m):
        out = jnp.concatenate([out / jnp.arange(out.shape[0], 0, -1).astype(dtype), constants[i:i + 1]])
    return out


@defop("poly", aliases=("_npi_poly",))
def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (1-D), or the characteristic
    polynomial of a square matrix (2-D)."""
    roots = seq_of_zeros
    if roots.ndim == 2 and roots.shape[0] == roots.shape[1] and roots.shape[0] > 0:
        roots = jnp.linalg.eigvals(roots)
        dtype = numpy_float(seq_of_zeros)
        if dtype.kind != "c":  # a real matrix's eigenvalues come in conjugate pairs
            return _monic(roots).real.astype(dtype)
        return _monic(roots)
    if roots.ndim != 1:
        raise MXNetValueError(f"poly: input must be 1-D or a non-empty square 2-D array, got shape {roots.shape}")
    return _monic(roots.astype(numpy_float(roots)))


def _monic(roots):
    out = jnp.ones(1, roots.dtype)
    for i in range(roots.shape[0]):
        out = jnp.concatenate([out, jnp.zeros(1, roots.dtype)]) - jnp.concatenate(
            [jnp.zeros(1, roots.dtype), out * roots[i]])
    return out


@defop("trapz", aliases=("_npi_trapz",))
def trapz(y, x=None, *, dx: float = 1.0, axis: int = -1):
    """Integral of y along ``axis`` by the trapezoidal rule, at sample points x or spacing dx."""
    if y.ndim == 0:
        raise MXNetValueError("trapz: y must have at least one dimension")
    if not -y.ndim <= axis < y.ndim:
        raise MXNetValueError(f"trapz: axis {axis} is out of bounds for y of shape {y.shape}")
    if y.dtype == jnp.bool_ or (x is not None and jnp.result_type(x) == jnp.bool_):
        raise MXNetTypeError("trapz: boolean input is not supported (NumPy cannot subtract booleans)")
    dtype = numpy_float(y) if x is None else numpy_float(y, x)
    out = jnp.trapezoid(y.astype(dtype), None if x is None else jnp.asarray(x).astype(dtype), dx, axis)
    return out.astype(dtype)
