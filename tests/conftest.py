"""Shared test set-up: the tests folder is importable (for ``oracle``), and modes are reset per test."""
import os
import pathlib
import sys

# MXJAX_TEST_FOREIGN_DEFAULT=1 runs the suite as on a machine with a GPU, where JAX's default
# device is not mxjax's cpu(0): two XLA host devices, JAX's default set to the second
if os.environ.get("MXJAX_TEST_FOREIGN_DEFAULT") == "1":
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"

import jax  # noqa: E402

if os.environ.get("MXJAX_TEST_FOREIGN_DEFAULT") == "1":
    jax.config.update("jax_default_device", jax.devices("cpu")[1])
import pytest  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from mxjax import _config  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_np_modes():
    """A test that flips npx.set_np(...) cannot leak it into the next one."""
    saved = (_config._np_shape_default, _config._np_array_default, _config.is_np_default_dtype())
    yield
    _config.set_np(shape=saved[0], array=saved[1], dtype=saved[2])


@pytest.fixture(params=["native", "python"])
def tape_recorders(request):
    """The test runs with both recorders of autograd's deferred nodes: the C one (_tape/_record.c,
    where it was built) and _tape/recording.py's Python one, which must keep doing the same."""
    from mxjax._tape import recording
    native = request.param == "native"
    if recording.use_native(native) != native:
        pytest.skip("the C tape recorder was not built")
    _config.drop_compiled()  # each variant compiles (and sees each structure) from the start
    yield request.param
    recording.use_native(True)


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


@pytest.fixture
def threads_switch_often():
    """Python switches threads every microsecond during the test (instead of every 5 ms), so that
    races between threads show within a few hundred steps; the interval is put back after it."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)
