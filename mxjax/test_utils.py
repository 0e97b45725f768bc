"""``mx.test_utils``: the helpers MXNet users' test suites import (``from mxnet.test_utils import *``).

Array comparisons with per-dtype tolerances and the symbol checks (finite-difference
gradients, expected forward/backward values, consistency across devices and dtypes)
live in ``_test_utils_checks`` and are re-exported here.  This module adds random test
data, environment scopes, random-generator statistics (a chi-square test whose p-value
comes from JAX's incomplete gamma function, as SciPy is not required) and small utilities.
"""
from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable, Iterator

import jax.numpy as jnp
import jax.scipy.special as jsp_special
import numpy as onp

from . import _config, autograd
from . import device as _device
from . import ndarray as _nd
from . import numpy as _mx_np
from ._ndarray import NDArray, waitall
from ._test_utils_checks import *  # noqa: F401,F403  (comparisons and symbol checks)
from ._test_utils_checks import __all__ as _checks_all
from ._test_utils_checks import assert_almost_equal, same
from ._test_utils_runs import check_speed, compare_optimizer, compare_optimizer_noise_seeded  # noqa: F401
from .device import current_device  # noqa: F401  (MXNet's test_utils has these names)
from .symbol import Symbol  # noqa: F401
from .symbol import numpy as np_symbol  # noqa: F401
from .base import MXNetError, MXNetValueError
from .runtime import Features  # noqa: F401  (MXNet's test_utils has these names: from mx.runtime / mx.util)
from .util import (get_cuda_compute_capability, get_max_supported_compute_capability, get_rtc_compile_opts,
                   getenv, setenv, use_np, use_np_default_dtype)  # noqa: F401

__all__ = list(_checks_all) + [
    "check_speed", "compare_optimizer", "compare_optimizer_noise_seeded",
    "default_device", "set_default_device", "default_dtype", "random_arrays", "random_uniform_arrays",
    "random_sample", "rand_ndarray", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "rand_coord_2d",
    "np_reduce", "collapse_sum_like", "create_vector", "create_2d_tensor", "create_2d_np_tensor", "assign_each",
    "assign_each2", "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd",
    "same_array", "same_symbol_structure", "environment", "discard_stderr", "list_gpus", "download",
    "is_op_runnable", "has_tvm_ops", "is_cd_run", "gen_buckets_probs_with_ppf", "chi_square_check",
    "verify_generator", "mean_check", "var_check", "check_gluon_hybridize_consistency",
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


# ----------------------------------------------------------------------------- arrays and symbols

def same_array(array1: NDArray, array2: NDArray) -> bool:
    """Whether writing to ``array1`` shows in ``array2`` (shared memory: only the same array in mxjax)."""
    array1[:] += 1
    shared = same(array1.asnumpy(), array2.asnumpy())
    array1[:] -= 1
    return shared and same(array1.asnumpy(), array2.asnumpy())


def same_symbol_structure(sym1: Any, sym2: Any) -> bool:
    """Whether two symbols' graphs list the same operators node by node (names and attributes aside)."""
    return [n.op for n in sym1._nodes()] == [n.op for n in sym2._nodes()]


# ----------------------------------------------------------------------------- environment and machine

@contextlib.contextmanager
def environment(*args: Any) -> Iterator[None]:
    """Set environment variables for a scope (a ``with`` block or, as a decorator, a function).

    ``environment(name, value)`` or ``environment({name: value, ...})``; a value of None
    unsets the variable.  Earlier values come back afterwards, even when the body raises.
    """
    if len(args) == 1 and isinstance(args[0], dict):
        settings = dict(args[0])
    elif len(args) == 2:
        settings = {args[0]: args[1]}
    else:
        raise MXNetValueError("environment: expected one dict of name -> value, or a name and a value; "
                              f"got {len(args)} arguments")

    def apply(values: dict) -> None:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    saved = {name: os.environ.get(name) for name in settings}
    apply(settings)
    try:
        yield
    finally:
        waitall()  # work queued under the scope's settings finishes before they change back
        apply(saved)


@contextlib.contextmanager
def discard_stderr() -> Iterator[None]:
    """Discard what the scope writes to stderr: file descriptor 2 (C code too) and Python's ``sys.stderr``."""
    try:
        sys.stderr.flush()
    except (AttributeError, ValueError):
        pass
    saved = os.dup(2)
    with open(os.devnull, "w") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            with contextlib.redirect_stderr(sink):
                yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def list_gpus() -> range:
    """``range(n)`` over the n GPUs JAX sees (empty without one)."""
    return range(_device.num_gpus())


def download(url: str, fname: str | None = None, dirname: str | None = None, overwrite: bool = False,
             retries: int = 5) -> str:
    """The local path for ``url``'s file when it is already there; mxjax never downloads.

    The path is worked out as MXNet does (``fname``, else the URL's last part, inside
    ``dirname``); if no file is there, or ``overwrite`` asks for a fresh copy, MXNetError.
    """
    if retries < 0:
        raise MXNetValueError(f"download: retries must be at least 0, got {retries}")
    fname = url.split("/")[-1] if fname is None else fname
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    if not overwrite and os.path.exists(fname):
        return fname
    raise MXNetError(f"download: mxjax does not fetch files from the network; fetch {url} yourself and "
                     f"place it at {fname!r}" + (" (overwrite=True asks for a new copy)" if overwrite else ""))


def is_op_runnable() -> bool:
    """Whether the current device can run every operator: always, mxjax has no TVM-only kernels."""
    return True


def has_tvm_ops() -> bool:
    """Whether operators generated by TVM are built in: never in mxjax (XLA compiles every op)."""
    return False


def is_cd_run() -> bool:
    """Whether the tests run as part of a continuous-delivery job (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", "0") == "1"


# ----------------------------------------------------------------------------- random-generator statistics

def gen_buckets_probs_with_ppf(ppf: Callable, nbuckets: int) -> tuple:
    """``nbuckets`` equal-probability buckets ``(ppf(i/n), ppf((i+1)/n))`` and their probabilities."""
    if nbuckets <= 0:
        raise MXNetValueError(f"gen_buckets_probs_with_ppf: nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets))) for i in range(nbuckets)]
    return buckets, probs


def _samples(generator: Callable, nsamples: int) -> onp.ndarray:
    out = generator(nsamples)
    return onp.asarray(out.asnumpy() if isinstance(out, NDArray) else out).ravel()


def _chi2_sf(statistic: float, dof: int) -> float:
    """P(X >= statistic) for a chi-square variable with ``dof`` degrees of freedom."""
    with _config.x64():
        return float(jsp_special.gammaincc(jnp.float64(dof / 2.0), jnp.float64(statistic / 2.0)))


def chi_square_check(generator: Callable, buckets: list, probs: Any, nsamples: int = 1000000) -> tuple:
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.

    ``buckets`` holds (low, high) ranges for a continuous distribution, or the possible
    values of a discrete one.  Returns (p value, observed counts, expected counts).
    """
    if not isinstance(buckets, list) or len(probs) != len(buckets) or not buckets:
        raise MXNetValueError(f"chi_square_check: buckets must be a non-empty list as long as probs "
                              f"({len(probs)}), got {type(buckets).__name__} of length {len(buckets)}")
    samples = _samples(generator, nsamples)
    if isinstance(buckets[0], (list, tuple)):
        edges = onp.array([edge for bucket in buckets for edge in bucket], dtype=onp.float64)
        if onp.any(onp.diff(edges) < 0):
            raise MXNetValueError("chi_square_check: buckets must be ascending ranges that do not overlap")
        ids = onp.searchsorted(edges, samples, side="right")
        inside = ids % 2 == 1  # between a bucket's low and high edge
        obs_freq = onp.bincount(ids[inside] // 2, minlength=len(buckets))[:len(buckets)]
    else:
        obs_freq = onp.array([(samples == value).sum() for value in buckets])
    expected_freq = nsamples * onp.asarray(probs, dtype=onp.float64)
    statistic = float(onp.sum((obs_freq - expected_freq) ** 2 / expected_freq))
    return _chi2_sf(statistic, len(buckets) - 1), obs_freq, expected_freq


def verify_generator(generator: Callable, buckets: list, probs: Any, nsamples: int = 1000000, nrepeat: int = 5,
                     success_rate: float = 0.2, alpha: float = 0.05) -> list:
    """Run ``chi_square_check`` ``nrepeat`` times; AssertionError unless a share ``success_rate`` has p > alpha."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    p_values = [p for p, _, _ in runs]
    if sum(p > alpha for p in p_values) < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={p_values}, "
                             f"obs_freq={[r[1].tolist() for r in runs]}, "
                             f"expected_freq={[r[2].tolist() for r in runs]}.\nbuckets={buckets}, probs={probs}")
    return p_values


def mean_check(generator: Callable, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample mean lies within mu +- 3 sigma / sqrt(n)."""
    mean = _samples(generator, nsamples).mean()
    half = 3 * sigma / onp.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator: Callable, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance lies within sigma^2 +- 3 sqrt(2 sigma^4 / (n - 1))."""
    var = _samples(generator, nsamples).var(ddof=1)
    half = 3 * onp.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


# ----------------------------------------------------------------------------- Gluon

def check_gluon_hybridize_consistency(net_builder: Callable, data_l: list, numpy_func: Any = None,
                                      test_grad: bool = True, rtol: float = 1e-4, atol: float = 1e-4) -> None:
    """Check a HybridBlock gives the same outputs (and input gradients) with and without ``hybridize()``.

    ``net_builder()`` makes a fresh block; every variant starts from the first one's parameters.
    ``numpy_func``, when given, is the ground truth for the outputs.
    """
    saved_out = saved_grads = params = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder()
            if params is None:
                net.initialize()
            else:  # what MXNet's Block.load_dict does
                for name, param in net.collect_params().items():
                    param.set_data(params[name])
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params is None:
                params = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                else:
                    for grad, saved in zip(grads, saved_grads):
                        assert_almost_equal(grad, saved, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(saved_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- data sets and iterators
# MXNet downloads these data sets; mxjax never touches the network here.  Each helper reads the
# files from the place MXNet would download them to and says which file is missing otherwise.

import bz2 as _bz2  # noqa: E402
import gzip as _gzip  # noqa: E402
import struct as _struct  # noqa: E402
import zipfile as _zipfile  # noqa: E402

from .io import MNISTIter as _MNISTIter  # noqa: E402
from .io._base import DataIter as _DataIter  # noqa: E402

__all__ += ["DummyIter", "get_mnist", "get_mnist_ubyte", "get_mnist_iterator", "get_cifar10", "get_bz2_data",
            "get_im2rec_path"]

_MNIST_FILES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                "t10k-labels-idx1-ubyte"]
_CIFAR10_ZIP = "cifar10-b9ac2870.zip"


def _need_local(func: str, fname: str, what: str) -> None:
    if not os.path.isfile(fname):
        where = os.path.dirname(fname) or "."
        raise FileNotFoundError(f"{func}: {what} {os.path.basename(fname)!r} is not in {where!r} "
                                f"({os.path.abspath(fname)}); mxjax does not download data sets, so place the "
                                "file there first")


def get_mnist(path: str = "data") -> dict:
    """MNIST as NumPy arrays, read from the gzip files MXNet would download into ``path``.

    Returns ``train_data``/``test_data`` (float32, ``(N, 1, 28, 28)``, pixels / 255) and
    ``train_label``/``test_label`` (int8).
    """
    def load(label_name: str, image_name: str) -> tuple:
        label_file, image_file = os.path.join(path, label_name), os.path.join(path, image_name)
        _need_local("get_mnist", label_file, "MNIST file")
        _need_local("get_mnist", image_file, "MNIST file")
        with _gzip.open(label_file) as f:
            f.read(8)
            label = onp.frombuffer(f.read(), dtype=onp.int8)
        with _gzip.open(image_file) as f:
            _, _, rows, cols = _struct.unpack(">IIII", f.read(16))
            image = onp.frombuffer(f.read(), dtype=onp.uint8)
        image = image.reshape(len(label), 1, rows, cols).astype(onp.float32) / 255
        return label, image

    train_label, train_data = load("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz")
    test_label, test_data = load("t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")
    return {"train_data": train_data, "train_label": train_label, "test_data": test_data, "test_label": test_label}


def get_mnist_ubyte(path: str = "data") -> None:
    """Make sure the four raw MNIST idx-ubyte files are in ``path``, unpacking them from the
    ``.gz`` files there when needed (nothing is downloaded)."""
    os.makedirs(path, exist_ok=True)
    targets = [os.path.join(path, f) for f in _MNIST_FILES]
    if all(os.path.exists(t) for t in targets):
        return
    for target in targets:
        _need_local("get_mnist_ubyte", target + ".gz", "MNIST archive")
    for target in targets:
        with _gzip.open(target + ".gz") as src, open(target, "wb") as dst:
            dst.write(src.read())


def get_cifar10(path: str = "data") -> None:
    """Make sure ``path/cifar`` holds CIFAR-10's train/test ``.rec`` and ``.lst`` files, extracting
    them from MXNet's ``cifar10-b9ac2870.zip`` in ``path`` when needed (nothing is downloaded)."""
    os.makedirs(path, exist_ok=True)
    wanted = [os.path.join(path, "cifar", f) for f in ("train.rec", "test.rec", "train.lst", "test.lst")]
    if all(os.path.exists(f) for f in wanted):
        return
    archive = os.path.join(path, _CIFAR10_ZIP)
    _need_local("get_cifar10", archive, "CIFAR-10 archive")
    with _zipfile.ZipFile(archive) as zf:
        zf.extractall(path)
    missing = [f for f in wanted if not os.path.exists(f)]
    if missing:
        raise FileNotFoundError(f"get_cifar10: {archive!r} did not contain {missing}")


def get_mnist_iterator(batch_size: int, input_shape: tuple, num_parts: int = 1, part_index: int = 0,
                       path: str = "data") -> tuple:
    """``(train, validation)`` ``MNISTIter`` pair over the MNIST files in ``path``; flat images
    unless ``input_shape`` has three dimensions."""
    get_mnist_ubyte(path)
    flat = len(input_shape) != 3
    train = _MNISTIter(image=os.path.join(path, "train-images-idx3-ubyte"),
                       label=os.path.join(path, "train-labels-idx1-ubyte"), batch_size=batch_size,
                       shuffle=True, flat=flat, num_parts=num_parts, part_index=part_index)
    val = _MNISTIter(image=os.path.join(path, "t10k-images-idx3-ubyte"),
                     label=os.path.join(path, "t10k-labels-idx1-ubyte"), batch_size=batch_size,
                     flat=flat, num_parts=num_parts, part_index=part_index)
    return train, val


def get_bz2_data(data_dir: str, data_name: str, url: str, data_origin_name: str) -> None:
    """Decompress ``data_dir/data_origin_name`` (a .bz2 file) into ``data_dir/data_name`` unless the
    latter exists; the archive is removed afterwards, as MXNet does.  ``url`` is only named in
    the error when the archive is absent (nothing is downloaded)."""
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    archive = os.path.join(data_dir, data_origin_name)
    if not os.path.isfile(archive):
        raise FileNotFoundError(f"get_bz2_data: neither {target!r} nor the archive {archive!r} exists; mxjax does "
                                f"not download {url}, so place the archive there first")
    with _bz2.BZ2File(archive, "rb") as src, open(target, "wb") as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            dst.write(chunk)
    os.remove(archive)


class DummyIter(_DataIter):
    """Repeats the first batch of ``real_iter`` forever (for timing a model without data loading)."""

    def __init__(self, real_iter: Any) -> None:
        super().__init__()
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.batch_size = real_iter.batch_size
        self.the_batch = next(real_iter)

    def __iter__(self) -> "DummyIter":
        return self

    def next(self) -> Any:
        """The stored batch (never raises ``StopIteration``)."""
        return self.the_batch


def get_im2rec_path(home_env: str = "MXNET_HOME") -> str:
    """Path of the ``im2rec.py`` tool: under ``$MXNET_HOME/tools`` (or two levels above it) when that
    variable is set, else mxjax's own ``tools/im2rec.py``."""
    root = os.environ.get(home_env, os.path.dirname(os.path.abspath(__file__)))
    tried = [os.path.join(root, "tools", "im2rec.py"), os.path.join(root, "..", "..", "tools", "im2rec.py")]
    for candidate in tried:
        if os.path.isfile(candidate):
            return candidate
    raise IOError(f"get_im2rec_path: could not find tools/im2rec.py; looked at {tried}")
