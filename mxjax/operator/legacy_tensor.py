"""MXNet 1.x tensor ops NumPy has no single function for: ``moments``, ``khatri_rao``,
``fill_element_0index``, ``im2col``/``col2im`` and the packed-triangle, LQ and symmetric
eigen-decomposition routines of ``linalg``.

``im2col`` lays out each sliding window as MXNet does: rows ``c * kh * kw + i * kw + j``,
columns the output positions in row-major order; ``col2im`` is its adjoint (overlapping
window entries are summed), computed as the linear transpose of ``im2col``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp

from ..base import MXNetValueError
from .registry import defop


@defop("moments", num_outputs=2)
def moments(data, *, axes: shape | None = None, keepdims: bool = False):
    """Mean and (population) variance of ``data`` over ``axes`` (all axes if None)."""
    axes = None if axes is None else tuple(axes)
    mean = jnp.mean(data, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(data - mean), axis=axes, keepdims=keepdims)
    return (mean if keepdims else jnp.squeeze(mean, axis=axes)), var


@defop("khatri_rao")
def khatri_rao(*args, num_args: int | None = None):
    """Column-wise Kronecker product of matrices with the same number of columns: ``(prod rows, cols)``."""
    if not args or any(a.ndim != 2 for a in args) or len({a.shape[1] for a in args}) != 1:
        raise MXNetValueError(f"khatri_rao: expected 2-D matrices with one column count, got "
                              f"{[tuple(a.shape) for a in args]}")
    out = args[0]
    for a in args[1:]:
        out = (out[:, None, :] * a[None, :, :]).reshape(-1, a.shape[1])
    return out


@defop("fill_element_0index")
def fill_element_0index(lhs, mhs, rhs):
    """``lhs`` with ``lhs[i, rhs[i]] = mhs[i]`` for every row ``i``."""
    if lhs.ndim != 2 or mhs.shape != (lhs.shape[0],) or rhs.shape != (lhs.shape[0],):
        raise MXNetValueError(f"fill_element_0index: expected lhs (N, M), mhs (N,) and rhs (N,), got "
                              f"{tuple(lhs.shape)}, {tuple(mhs.shape)} and {tuple(rhs.shape)}")
    return lhs.at[jnp.arange(lhs.shape[0]), rhs.astype(jnp.int32)].set(mhs.astype(lhs.dtype))


def _window(kernel, stride, dilate, pad, ndim: int) -> tuple:
    def fill(value, default):
        value = tuple(value) if value else ()
        return value if value else (default,) * ndim
    return tuple(kernel), fill(stride, 1), fill(dilate, 1), fill(pad, 0)


def _im2col(data, kernel, stride, dilate, pad):
    kernel, stride, dilate, pad = _window(kernel, stride, dilate, pad, data.ndim - 2)
    if len(kernel) != data.ndim - 2:
        raise MXNetValueError(f"im2col: kernel {kernel} needs {len(kernel) + 2}-D data, got {tuple(data.shape)}")
    patches = jax.lax.conv_general_dilated_patches(
        data, kernel, stride, [(p, p) for p in pad], rhs_dilation=dilate,
        precision=jax.lax.Precision.HIGHEST)  # (N, C * prod(kernel), *out_spatial), channel-major
    return patches.reshape(patches.shape[0], patches.shape[1], -1)


@defop("batch_take")
def batch_take(a, indices):
    """``a[i, indices[i]]`` for each row of 2-D ``a``, indices clipped into the row (MXNet's
    deprecated form of ``pick(a, indices, axis=1, mode='clip')``)."""
    if jnp.ndim(a) != 2 or jnp.shape(indices) != jnp.shape(a)[:1]:
        raise MXNetValueError(f"batch_take: expected 2-D a and one index per row, got a of shape {jnp.shape(a)} "
                              f"and indices of shape {jnp.shape(indices)}")
    idx = jnp.clip(indices.astype(jnp.int64), 0, jnp.shape(a)[1] - 1)
    return jnp.take_along_axis(a, idx[:, None], axis=1)[:, 0]


@defop("cast_storage")
def cast_storage(data, *, stype: str = "default"):
    """Storage-type conversion: only 'default' (dense) storage exists, so this is a copy."""
    if stype != "default":
        raise MXNetValueError(f"cast_storage: storage type {stype!r} is not supported; mxjax arrays are dense "
                              "only (stype='default'), as are MXNet 2.0's NumPy-style arrays")
    return jnp.array(data, copy=True)


@defop("im2col")
def im2col(data, *, kernel: shape = (), stride: shape = (), dilate: shape = (), pad: shape = ()):
    """Sliding windows of ``data`` (N, C, *spatial) as columns: (N, C * prod(kernel), output positions)."""
    return _im2col(data, kernel, stride, dilate, pad)


@defop("col2im")
def col2im(data, *, output_size: shape = (), kernel: shape = (), stride: shape = (), dilate: shape = (),
           pad: shape = ()):
    """The adjoint of ``im2col``: columns summed back into an image of spatial size ``output_size``."""
    output_size = tuple(output_size)
    kernel = tuple(kernel)
    channels, rem = divmod(data.shape[1], int(onp.prod(kernel)) if kernel else 1)
    if data.ndim != 3 or not kernel or rem or len(output_size) != len(kernel):
        raise MXNetValueError(f"col2im: data {tuple(data.shape)} must be (N, C * prod(kernel), L) for kernel "
                              f"{kernel} and output_size {output_size}")
    image = jax.ShapeDtypeStruct((data.shape[0], channels) + output_size, data.dtype)
    transpose = jax.linear_transpose(lambda x: _im2col(x, kernel, stride, dilate, pad), image)
    return transpose(data)[0]


# ----------------------------------------------------------------------------- linalg

def _triangle(n: int, offset: int, lower: bool) -> tuple:
    """Row/column indices of the packed triangle, in MXNet's order (the upper one column by column)."""
    if offset < 0 or (offset == 0 and lower):
        return onp.tril_indices(n, offset)
    cols, rows = onp.tril_indices(n, -offset)
    return rows, cols


@defop("_linalg_extracttrian", aliases=("linalg_extracttrian",))
def extracttrian(A, *, offset: int = 0, lower: bool = True):
    """The triangle of each square matrix on and below (``lower``) or above its ``offset`` diagonal,
    packed into a vector (the lower one row by row, the upper one column by column)."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2] or abs(offset) >= A.shape[-1]:
        raise MXNetValueError(f"linalg_extracttrian: expected square matrices larger than |offset| ({offset}), "
                              f"got {tuple(A.shape)}")
    rows, cols = _triangle(A.shape[-1], offset, lower)
    return A[..., rows, cols]


@defop("_linalg_maketrian", aliases=("linalg_maketrian",))
def maketrian(A, *, offset: int = 0, lower: bool = True):
    """The inverse of ``extracttrian``: square matrices of size ``n + |offset|`` with the packed values
    in their triangle and zeros elsewhere."""
    length = A.shape[-1]
    n = int(round((onp.sqrt(8 * length + 1) - 1) / 2))
    if n * (n + 1) // 2 != length:
        raise MXNetValueError(f"linalg_maketrian: the last axis ({length}) must be a triangular number")
    size = n + abs(offset)
    rows, cols = _triangle(size, offset, lower)
    out = jnp.zeros(A.shape[:-1] + (size, size), A.dtype)
    return out.at[..., rows, cols].set(A)


@defop("_linalg_gelqf", aliases=("linalg_gelqf",), num_outputs=2)
def gelqf(A):
    """LQ factorization ``A = L Q`` of (m, n) matrices, m <= n: Q (m, n) with orthonormal rows,
    L (m, m) lower triangular.  Returns ``(Q, L)``."""
    if A.ndim < 2 or A.shape[-2] > A.shape[-1]:
        raise MXNetValueError(f"linalg_gelqf: expected matrices with rows <= columns, got {tuple(A.shape)}")
    q, r = jnp.linalg.qr(jnp.swapaxes(A, -1, -2))
    return jnp.swapaxes(q, -1, -2), jnp.swapaxes(r, -1, -2)


@defop("_linalg_syevd", aliases=("linalg_syevd",), num_outputs=2)
def syevd(A):
    """Eigen-decomposition ``A = U^T diag(L) U`` of symmetric matrices: the rows of U are eigenvectors
    (each with its largest-magnitude entry positive), L the eigenvalues in ascending order."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise MXNetValueError(f"linalg_syevd: expected square matrices, got {tuple(A.shape)}")
    lam, vec = jnp.linalg.eigh(A, symmetrize_input=False)
    u = jnp.swapaxes(vec, -1, -2)
    pick = jnp.take_along_axis(u, jnp.argmax(jnp.abs(u), axis=-1)[..., None], axis=-1)
    return u * jnp.where(pick < 0, -1, 1).astype(u.dtype), lam


# ----------------------------------------------------------------------------- 1.x index conversion

@defop("_ravel_multi_index")
def legacy_ravel_multi_index(data, *, shape: shape = ()):
    """Flat indices of the columns of ``data`` (ndim, N) into an array of ``shape``, in ``data``'s dtype
    (1.x ``ravel_multi_index``)."""
    shape = tuple(shape)
    if data.ndim < 1 or data.shape[0] != len(shape):
        raise MXNetValueError(f"ravel_multi_index: data {tuple(data.shape)} must have len(shape) = {len(shape)} rows")
    strides = onp.cumprod((1,) + shape[:0:-1])[::-1].copy()
    flat = jnp.tensordot(jnp.asarray(strides, jnp.int64), data.astype(jnp.int64), axes=1)
    return flat.astype(data.dtype)


@defop("_unravel_index")
def legacy_unravel_index(data, *, shape: shape = ()):
    """Multi-indices (len(shape), N) of the flat indices ``data`` into an array of ``shape``, in
    ``data``'s dtype (1.x ``unravel_index``)."""
    return jnp.stack(jnp.unravel_index(data.astype(jnp.int64), tuple(shape))).astype(data.dtype)


# ----------------------------------------------------------------------------- SVMOutput

def _svm_grad(data, label, margin, coef, use_linear):
    """The gradient of the one-vs-rest hinge loss (squared unless ``use_linear``) at scores ``data``."""
    scores = data.reshape(data.shape[0], -1)
    is_label = jnp.arange(scores.shape[1])[None, :] == label.reshape(-1, 1).astype(jnp.int32)
    signed = jnp.where(is_label, -scores, scores)  # each class's margin violation is margin + signed
    active = (margin + signed) > 0
    size = jnp.ones_like(scores) if use_linear else 2 * (margin + signed)
    grad = jnp.where(active, size, 0) * coef * jnp.where(is_label, -1, 1)
    return grad.reshape(data.shape).astype(data.dtype)


@defop("SVMOutput", param_shapes=lambda s, p: {1: s[0][:-1]})
def svm_output(data, label, *, margin: float = 1.0, regularization_coefficient: float = 1.0,
               use_linear: bool = False):
    """A 1.x output layer: forward is the identity on the class scores ``data`` (N, classes); backward
    ignores the incoming gradient and gives the hinge loss's (L2-SVM, or L1-SVM with ``use_linear``)."""
    if label.shape != data.shape[:1]:
        raise MXNetValueError(f"SVMOutput: label must have shape ({data.shape[0]},) for data "
                              f"{tuple(data.shape)}, got {tuple(label.shape)}")

    @jax.custom_vjp
    def layer(data, label):
        return data

    def forward(data, label):
        return data, (data, label)

    def backward(saved, _):
        data, label = saved
        zero = jnp.zeros_like(label) if jnp.issubdtype(label.dtype, jnp.inexact) \
            else onp.zeros(label.shape, jax.dtypes.float0)
        return _svm_grad(data, label, margin, regularization_coefficient, use_linear), zero

    layer.defvjp(forward, backward)
    return layer(data, label)
