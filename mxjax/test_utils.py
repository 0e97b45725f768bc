"""``mx.test_utils``: the helpers MXNet users' test suites import (``from mxnet.test_utils import *``).

This module is the public namespace; the helpers live in private siblings by job and are
re-exported here under this module's name: tolerances and array comparisons
(``_test_utils_checks``), symbol checks (``_test_utils_symbolic``), random test data and NumPy
references (``_test_utils_arrays``), random-generator statistics (``_test_utils_stats``), data
sets and iterators (``_test_utils_datasets``), and whole-workload runs (``_test_utils_runs``).
Defined here: environment scopes, machine queries and the Gluon hybridize check.
"""
from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Callable, Iterator

from . import autograd
from . import device as _device
from ._ndarray import NDArray, waitall
from ._test_utils_arrays import (
    assign_each, assign_each2, collapse_sum_like, create_2d_np_tensor, create_2d_tensor, create_vector,
    default_device, default_dtype, new_matrix_with_real_eigvals_2d, new_matrix_with_real_eigvals_nd,
    new_orthonormal_matrix_2d, new_sym_matrix_with_real_eigvals_2d, new_sym_matrix_with_real_eigvals_nd, np_reduce,
    rand_coord_2d, rand_ndarray, rand_shape_2d, rand_shape_3d, rand_shape_nd, random_arrays, random_sample,
    random_uniform_arrays, set_default_device)
from ._test_utils_checks import (
    almost_equal, assert_allclose, assert_almost_equal, assert_almost_equal_ignore_nan, assert_almost_equal_with_err,
    assert_exception, checkShapes, compare_ndarray_tuple, default_atols, default_numeric_eps, default_rtols,
    effective_dtype, get_atol, get_etol, get_rtol, get_tolerance, get_tols, locationError, same)
from ._test_utils_datasets import (DummyIter, get_bz2_data, get_cifar10, get_im2rec_path, get_mnist,
                                   get_mnist_iterator, get_mnist_ubyte)
from ._test_utils_runs import check_speed, compare_optimizer, compare_optimizer_noise_seeded
from ._test_utils_stats import chi_square_check, gen_buckets_probs_with_ppf, mean_check, var_check, verify_generator
from ._test_utils_symbolic import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                                   check_symbolic_forward, numeric_grad)
from .device import current_device  # noqa: F401  (MXNet's test_utils has these names)
from .symbol import Symbol  # noqa: F401
from .symbol import numpy as np_symbol  # noqa: F401
from .base import MXNetError, MXNetValueError
from .runtime import Features  # noqa: F401  (MXNet's test_utils has these names: from mx.runtime / mx.util)
from .util import (get_cuda_compute_capability, get_max_supported_compute_capability, get_rtc_compile_opts,
                   getenv, setenv, use_np, use_np_default_dtype)  # noqa: F401

__all__ = [
    "default_rtols", "default_atols", "default_numeric_eps", "effective_dtype", "get_tolerance", "get_tols",
    "get_atol", "get_rtol", "get_etol", "same", "checkShapes", "almost_equal", "locationError",
    "assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err", "assert_almost_equal_ignore_nan",
    "assert_exception", "compare_ndarray_tuple", "numeric_grad",
    "check_numeric_gradient", "check_symbolic_forward", "check_symbolic_backward", "check_consistency",
    "check_speed", "compare_optimizer", "compare_optimizer_noise_seeded",
    "default_device", "set_default_device", "default_dtype", "random_arrays", "random_uniform_arrays",
    "random_sample", "rand_ndarray", "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "rand_coord_2d",
    "np_reduce", "collapse_sum_like", "create_vector", "create_2d_tensor", "create_2d_np_tensor", "assign_each",
    "assign_each2", "new_matrix_with_real_eigvals_2d", "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d", "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd",
    "same_array", "same_symbol_structure", "environment", "discard_stderr", "list_gpus", "download",
    "is_op_runnable", "has_tvm_ops", "is_cd_run", "gen_buckets_probs_with_ppf", "chi_square_check",
    "verify_generator", "mean_check", "var_check", "check_gluon_hybridize_consistency",
    "DummyIter", "get_mnist", "get_mnist_ubyte", "get_mnist_iterator", "get_cifar10", "get_bz2_data",
    "get_im2rec_path",
]

for _name in __all__:  # the re-exported ones are named by their public home, as in MXNet (repr, pickles, help())
    _public = globals().get(_name)  # None for this module's own helpers, defined below
    if getattr(_public, "__module__", "").startswith(f"{__package__}._test_utils_"):
        _public.__module__ = __name__


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
