"""Shared test set-up: the tests folder is importable (for ``oracle``), and modes are reset per test."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from mxjax import _config  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_np_modes():
    """A test that flips npx.set_np(...) cannot leak it into the next one."""
    saved = (_config._np_shape_default, _config._np_array_default, _config.is_np_default_dtype())
    yield
    _config.set_np(shape=saved[0], array=saved[1], dtype=saved[2])
