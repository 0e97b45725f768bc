"""Test data for ``mx.test_utils`` (re-exported there): the device and dtype tests use, random
arrays and shapes, and NumPy reference helpers (multi-axis reductions, broadcast gradients,
element-wise maps, matrices with known eigenvalues).

These only make inputs and expected values; they check nothing, so they sit apart from the
comparisons in ``_test_utils_checks`` and the environment and Gluon helpers in ``test_utils``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as onp

from . import device as _device
from . import ndarray as _nd
from . import numpy as _mx_np
from ._ndarray import NDArray
from .base import MXNetValueError

__all__ = [
    "default_device", "set_default_device", "default_dtype", "random_arrays", "random_uniform_arrays",
    "random_sample", "rand_ndarray", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "rand_coord_2d",
    "np_reduce", "collapse_sum_like", "create_vector", "create_2d_tensor", "create_2d_np_tensor", "assign_each",
    "assign_each2", "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd",
]


# ----------------------------------------------------------------------------- device and dtype

def default_device() -> _device.Device:
    """The device tests run on: the current device (``cpu(0)`` unless a scope or ``set_default_device`` says)."""
    return _device.current_device()


def set_default_device(device: _device.Device) -> None:
    """Make ``device`` the current device for this thread from now on."""
    _device._current.set(device)


def default_dtype() -> type:
    """The dtype of generated test data: ``numpy.float32``."""
    return onp.float32


# ----------------------------------------------------------------------------- random test data

def random_arrays(*shapes: Any) -> Any:
    """Standard-normal float32 NumPy arrays, one per shape (a single array when given one shape)."""
    arrays = [onp.array(onp.random.randn(), dtype=default_dtype()) if len(s) == 0
              else onp.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes: Any, **kwargs: Any) -> list:
    """Uniform NumPy arrays on [``low``, ``high``) (keywords; 0 and 1 by default) of ``dtype`` (float32)."""
    low, high = kwargs.pop("low", 0.0), kwargs.pop("high", 1.0)
    dtype = kwargs.pop("dtype", default_dtype())
    if kwargs:
        raise TypeError(f"random_uniform_arrays: unexpected keyword arguments {sorted(kwargs)}")
    return [onp.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population: Any, k: int) -> Any:
    """``k`` distinct elements of ``population`` in random order."""
    if not 0 <= k <= len(population):
        raise MXNetValueError(f"random_sample: k={k} must lie in [0, {len(population)}]")
    population = population[:]
    onp.random.shuffle(population)
    return population[:k]


def rand_ndarray(shape: Any, stype: str = "default", density: Any = None, dtype: Any = None,
                 modifier_func: Any = None, shuffle_csr_indices: bool = False, distribution: Any = None,
                 ctx: Any = None) -> NDArray:
    """A standard-normal ``mx.nd`` array of ``shape`` (float32 unless ``dtype``) on ``ctx``.

    Only dense storage exists in mxjax: ``stype`` 'row_sparse' or 'csr' raises MXNetValueError.
    """
    if stype != "default":
        raise MXNetValueError(f"rand_ndarray: storage type {stype!r} is not supported; mxjax arrays are dense "
                              "only (stype='default'), as are MXNet 2.0's NumPy-style arrays")
    return _nd.array(random_arrays(shape), ctx=ctx or default_device(), dtype=dtype)


def _dim(low: int, high: int) -> int:
    return int(onp.random.randint(low, high + 1))


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random 2-d shape with sizes in [1, dim] (from 0 when ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return _dim(low, dim0), _dim(low, dim1)


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random 3-d shape with sizes in [1, dim] (from 0 when ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return _dim(low, dim0), _dim(low, dim1), _dim(low, dim2)


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random ``num_dim``-d shape with sizes in [1, dim] (from 0 when ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in onp.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple:
    """A random integer point with x in [x_low, x_high) and y in [y_low, y_high)."""
    return (onp.random.randint(x_low, x_high, dtype=onp.int64),
            onp.random.randint(y_low, y_high, dtype=onp.int64))


# ----------------------------------------------------------------------------- NumPy helpers

def np_reduce(dat: onp.ndarray, axis: Any, keepdims: bool, numpy_reduce_func: Callable) -> onp.ndarray:
    """Apply a one-axis NumPy reduction (``np.sum``, ``np.max``) over several axes, keeping dims if asked."""
    axes = [axis] if isinstance(axis, int) else (list(axis) if axis is not None else list(range(dat.ndim)))
    axes = [a % dat.ndim for a in axes] if dat.ndim else axes
    out = dat
    for a in sorted(axes, reverse=True):
        out = numpy_reduce_func(out, axis=a)
    if keepdims:
        shape = [1 if i in axes else n for i, n in enumerate(dat.shape)]
        out = onp.reshape(out, shape)
    return out


def collapse_sum_like(a: onp.ndarray, shape: Any) -> onp.ndarray:
    """Sum ``a`` over the axes broadcasting added to reach it from ``shape`` (the gradient of a broadcast)."""
    shape = tuple(shape)
    if len(a.shape) < len(shape):
        raise MXNetValueError(f"collapse_sum_like: array of shape {a.shape} has fewer axes than {shape}")
    if onp.prod(shape) == 0 or a.size == 0:
        return onp.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, size in enumerate(shape):
        if size != a.shape[lead + i]:
            if size != 1:
                raise MXNetValueError(f"collapse_sum_like: shape {shape} does not broadcast to {a.shape}")
            axes.append(lead + i)
    return onp.sum(a, axis=tuple(axes)).reshape(shape)


def create_vector(size: int, dtype: Any = onp.int64) -> NDArray:
    """``mx.nd.arange(0, size)`` (MXNet's large-tensor tests build inputs this way)."""
    return _nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows: int, columns: int, dtype: Any = onp.int64) -> NDArray:
    """An ``mx.nd`` (rows, columns) array whose row i holds i."""
    column = _nd.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return _nd.broadcast_to(column, shape=(rows, columns))


def create_2d_np_tensor(rows: int, columns: int, dtype: Any = onp.int64) -> Any:
    """An ``mx.np`` (rows, columns) array whose row i holds i."""
    column = _mx_np.arange(0, rows, dtype=dtype).reshape(rows, 1)
    return _mx_np.broadcast_to(column, shape=(rows, columns))


def assign_each(the_input: onp.ndarray, function: Any) -> onp.ndarray:
    """``function`` applied to each element (a float64 array), or a copy when ``function`` is None."""
    if function is None:
        return onp.array(the_input)
    flat = [function(v) for v in onp.asarray(the_input).ravel()]
    return onp.array(flat, dtype=onp.float64).reshape(onp.shape(the_input))


def assign_each2(input1: onp.ndarray, input2: onp.ndarray, function: Any) -> onp.ndarray:
    """``function`` applied to each pair of elements (a float64 array), or a copy of ``input1`` when None."""
    if function is None:
        return onp.array(input1)
    if input1.shape != input2.shape:
        raise MXNetValueError(f"assign_each2: shapes {input1.shape} and {input2.shape} differ")
    flat = [function(x, y) for x, y in zip(input1.ravel(), input2.ravel())]
    return onp.array(flat, dtype=onp.float64).reshape(input1.shape)


def new_matrix_with_real_eigvals_2d(n: int) -> onp.ndarray:
    """A random (n, n) matrix Q^-1 D Q with real eigenvalues in (-10, 10) and cond(Q) < 3."""
    while True:
        v = onp.random.uniform(-1.0, 1.0, (n, 1))
        v /= onp.linalg.norm(v)
        q = (onp.eye(n) - 2 * v @ v.T) @ onp.diag(onp.random.uniform(-1.0, 1.0, n))
        if onp.linalg.cond(q, 2) < 3:
            break
    return onp.linalg.inv(q) @ onp.diag(onp.random.uniform(-10.0, 10.0, n)) @ q


def new_matrix_with_real_eigvals_nd(shape: Any) -> onp.ndarray:
    """A stack of ``new_matrix_with_real_eigvals_2d`` matrices of ``shape`` (..., n, n)."""
    count = int(onp.prod(shape[:-2])) if len(shape) > 2 else 1
    return onp.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(count)]).reshape(shape)


def new_orthonormal_matrix_2d(n: int) -> onp.ndarray:
    """A random (n, n) orthonormal matrix (the Q of a QR factorization)."""
    x = onp.random.randn(n, n)
    return onp.linalg.qr(x.T @ x)[0]


def new_sym_matrix_with_real_eigvals_2d(n: int) -> onp.ndarray:
    """A random symmetric (n, n) matrix Q^T D Q with eigenvalues in (-10, 10)."""
    q = new_orthonormal_matrix_2d(n)
    return q.T @ onp.diag(onp.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape: Any) -> onp.ndarray:
    """A stack of ``new_sym_matrix_with_real_eigvals_2d`` matrices of ``shape`` (..., n, n)."""
    count = int(onp.prod(shape[:-2])) if len(shape) > 2 else 1
    return onp.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(count)]).reshape(shape)
