"""Shared test helpers: op oracles, MXNet fixtures, autograd and Gluon checks (imported by the tests)."""
from __future__ import annotations

import contextlib
import logging
import pathlib
from typing import Any, Iterator

import jax

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd
from mxjax._ndarray import invoke
from mxjax.operator import get_op


def run_op(op: str, arrays: list, **params: Any) -> Any:
    """Invoke a registered op directly (the path legacy front-ends and executors take)."""
    inputs = [keep(a) if isinstance(a, onp.ndarray) else a for a in arrays]
    return invoke(get_op(op), inputs, params or None, mx.np.ndarray)


def keep(a: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """``mx.np.array(a)``, a NumPy array keeping its own dtype (``mx.np.array`` makes float64
    NumPy data float32, as MXNet 2.0 does)."""
    if dtype is None and isinstance(a, onp.ndarray):
        dtype = a.dtype
    return mx.np.array(a, dtype=dtype, **kwargs)


def check(got: Any, want: Any, dtype: str = "float32", rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """``got`` (an mxjax array) has ``want``'s shape, the given dtype, and its values within tolerance."""
    values = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    assert values.shape == onp.shape(want), (values.shape, onp.shape(want))
    assert values.dtype == onp.dtype(dtype), (values.dtype, dtype)
    onp.testing.assert_allclose(values.astype(onp.float64), onp.asarray(want, onp.float64), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- fixtures

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "formats"


def fixture(*parts: str) -> Any:
    """Path of a file under tests/fixtures/formats (files written by real MXNet 1.9.1)."""
    path = FIXTURES.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"fixture {path} is missing")
    return path


# ----------------------------------------------------------------------------- autograd

def marked(values: Any, dtype: str = "float64", grad_req: str = "write") -> Any:
    """An mx.np array marked for gradients."""
    x = mx.np.array(onp.asarray(values), dtype=dtype)
    x.attach_grad(grad_req)
    return x


def close(got: Any, want: Any, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    """Values (of an mxjax array or anything array-like) equal ``want`` in float64 within tolerance."""
    got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
    onp.testing.assert_allclose(got.astype(onp.float64), onp.asarray(want, onp.float64), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- gluon

def block_run(block: Any, x: Any) -> tuple:
    """(output, input gradient, parameter gradients) of ``sum(out * fixed weights)`` under autograd."""
    x = keep(x) if isinstance(x, onp.ndarray) else mx.np.array(x)
    x.attach_grad()
    with autograd.record():
        out = block(x)
        weights = onp.linspace(-1, 1, out.size).reshape(out.shape).astype(onp.float32)
        loss = (out * mx.np.array(weights)).sum()
    loss.backward()
    grads = [p.grad().asnumpy().copy() for p in block.collect_params().values() if p.grad_req != "null"]
    return out.asnumpy(), x.grad.asnumpy().copy(), grads


def check_hybrid(block: Any, x: Any, rtol: float = 1e-5, atol: float = 1e-5) -> Any:
    """Hybridized == imperative (values, input and parameter gradients); returns the imperative output.

    Leaves the block imperative again.
    """
    out_i, gx_i, g_i = block_run(block, x)
    block.hybridize()
    out_h, gx_h, g_h = block_run(block, x)
    assert block._cache
    onp.testing.assert_allclose(out_h, out_i, rtol=rtol, atol=atol)
    onp.testing.assert_allclose(gx_h, gx_i, rtol=rtol, atol=atol)
    assert len(g_h) == len(g_i)
    for a, b in zip(g_h, g_i):
        onp.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    block.hybridize(active=False)
    return out_i


# ----------------------------------------------------------------------------- compilations

@contextlib.contextmanager
def compilations() -> Iterator[list]:
    """The messages of the XLA compilations made inside the block, as they happen (from JAX's
    ``jax_log_compiles`` logging)."""
    compiles: list = []

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "Compiling" in record.getMessage():
                compiles.append(record.getMessage())

    handler, logger = Count(), logging.getLogger("jax")
    previous_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    jax.config.update("jax_log_compiles", True)
    try:
        yield compiles
    finally:
        jax.config.update("jax_log_compiles", False)
        logger.removeHandler(handler)
        logger.setLevel(previous_level)
