"""linalg ops on invalid input raise as MXNet 2.0 does (checked in the reference build).

MXNet raises MXNetError where LAPACK fails: Cholesky (``np.linalg.cholesky``,
``nd.linalg.potrf``) of a matrix that is not positive definite, ``inv``/``inverse``/
``tensorinv``/``solve`` of an exactly singular matrix, ``potri`` of a factor with a zero on its
diagonal, ``eigh``/``eigvalsh``/``svd``/``svdvals`` of NaN input.  ``det``, ``slogdet``,
``trsm`` and ``trmm`` of singular input do not raise.  NumPy (the oracle for which inputs are
invalid) raises ``LinAlgError`` for the same Cholesky/inverse/solve cases.  mxjax raises at the op.
"""
from __future__ import annotations

import threading

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError

NOT_PD = [[1.0, 2.0], [2.0, 1.0]]
PD = [[4.0, 2.0], [2.0, 3.0]]
SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
NAN = [[onp.nan, 2.0], [2.0, 1.0]]
np = mx.np


def _numpy_raises(fn, *args):
    with pytest.raises(onp.linalg.LinAlgError):
        fn(*(onp.array(a) for a in args))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_not_positive_definite(upper):
    _numpy_raises(onp.linalg.cholesky, NOT_PD)
    with pytest.raises(MXNetError, match=r"cholesky: .*shape \(2, 2\).*positive-definite"):
        np.linalg.cholesky(np.array(NOT_PD), upper=upper)


def test_cholesky_valid_and_batched():
    out = np.linalg.cholesky(np.array(PD)).asnumpy()
    onp.testing.assert_allclose(out, onp.linalg.cholesky(onp.array(PD)), rtol=1e-6)
    with pytest.raises(ValueError):  # one bad matrix in a stack fails the whole op, as in MXNet
        np.linalg.cholesky(np.array([PD, NOT_PD]))


def test_potrf_not_positive_definite():
    with pytest.raises(MXNetError, match="linalg_potrf"):
        mx.nd.linalg.potrf(mx.nd.array(NOT_PD))
    with pytest.raises(MXNetError):
        mx.nd.linalg.potrf(mx.nd.array(NAN))
    out = mx.nd.linalg.potrf(mx.nd.array(PD)).asnumpy()
    onp.testing.assert_allclose(out, onp.linalg.cholesky(onp.array(PD)), rtol=1e-6)


def test_inverse_of_singular_matrix():
    _numpy_raises(onp.linalg.inv, SINGULAR)
    with pytest.raises(MXNetError, match=r"inv: the matrix of shape \(2, 2\) is singular"):
        np.linalg.inv(np.array(SINGULAR))
    with pytest.raises(MXNetError, match="linalg_inverse"):
        mx.nd.linalg.inverse(mx.nd.array(SINGULAR))
    with pytest.raises(MXNetError, match="tensorinv"):
        np.linalg.tensorinv(np.array(SINGULAR), ind=1)
    nearly = [[1.0, 2.0], [2.0, 4.001]]  # ill-conditioned but invertible: no error
    onp.testing.assert_allclose(np.linalg.inv(np.array(nearly, dtype="float64")).asnumpy(),
                                onp.linalg.inv(onp.array(nearly)), rtol=1e-6)


def test_solve_singular():
    _numpy_raises(onp.linalg.solve, SINGULAR, [1.0, 1.0])
    with pytest.raises(MXNetError, match="solve: .*singular"):
        np.linalg.solve(np.array(SINGULAR), np.ones((2,)))
    out = np.linalg.solve(np.array(PD), np.ones((2,))).asnumpy()
    onp.testing.assert_allclose(out, onp.linalg.solve(onp.array(PD), onp.ones(2)), rtol=1e-6)


def test_potri_zero_on_factor_diagonal():
    with pytest.raises(MXNetError, match="linalg_potri: .*zero on its diagonal"):
        mx.nd.linalg.potri(mx.nd.array([[1.0, 0.0], [0.0, 0.0]]))
    factor = onp.linalg.cholesky(onp.array(PD))
    out = mx.nd.linalg.potri(mx.nd.array(factor)).asnumpy()
    onp.testing.assert_allclose(out, onp.linalg.inv(onp.array(PD)), rtol=1e-5)


@pytest.mark.parametrize("name", ["eigh", "eigvalsh", "svd", "svdvals"])
def test_decompositions_of_nan_input(name):
    fn = getattr(np.linalg, name)
    with pytest.raises(MXNetError, match=f"{name}: .*NaN or infinity"):
        fn(np.array(NAN))
    fn(np.array(PD))  # finite input: fine


def test_singular_input_that_mxnet_accepts():
    """det/slogdet/trsm do not raise on singular input, in MXNet as in mxjax."""
    assert float(np.linalg.det(np.array(SINGULAR))) == pytest.approx(0.0, abs=1e-6)
    sign, logdet = np.linalg.slogdet(np.array(SINGULAR))
    assert float(sign) == 0.0 and float(logdet) == -onp.inf
    out = mx.nd.linalg.trsm(mx.nd.array([[1.0, 0.0], [1.0, 0.0]]), mx.nd.ones((2, 2))).asnumpy()
    assert out.shape == (2, 2) and not onp.isfinite(out[1]).any()


def test_error_is_raised_at_the_read_on_the_engine_path():
    """An input still pending on the engine sends the op there: its error comes at the read."""
    if mx.engine.engine_type() != "ThreadedEngine":
        pytest.skip("needs the threaded engine (an input that is still pending)")
    release = threading.Event()
    x = np.array(NOT_PD)
    mx.engine.push_sync(lambda: release.wait(10), mutate_vars=[x.engine_var])  # x pending until released
    y = np.linalg.cholesky(x)  # no error yet: the op waits on the engine for x
    release.set()
    with pytest.raises(MXNetError, match="cholesky"):
        y.asnumpy()
    y.wait_to_read()  # reported once, then cleared (as MXNet's engine does)
