"""Shared test set-up: the tests folder is importable (for ``oracle``), and modes are reset per test."""
import pathlib
import sys

import jax
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from mxjax import _config  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_np_modes():
    """A test that flips npx.set_np(...) cannot leak it into the next one."""
    saved = (_config._np_shape_default, _config._np_array_default, _config.is_np_default_dtype())
    yield
    _config.set_np(shape=saved[0], array=saved[1], dtype=saved[2])


@pytest.fixture
def nd_mode():
    """MXNet 1.x semantics (legacy NDArrays, the float32 default) for one test; ``_restore_np_modes``
    puts the modes back after it."""
    _config.reset_np()
    yield


@pytest.fixture
def jax_x64():
    """JAX's 64-bit types on for the test's own JAX code: for tests whose ``jnp`` oracle computes in
    float64 (mxjax turns them on only inside its own calls, so plain ``jnp`` is 32-bit by default)."""
    with jax.enable_x64(True):
        yield
