"""``import mxjax`` leaves the user's JAX alone: 64-bit types are on only inside mxjax's own calls.

MXNet's int64/float64 arrays need JAX's 64-bit mode; mxjax turns it on per call through JAX's
thread-local override instead of for the whole process, so ``jnp`` code next to mxjax keeps
JAX's defaults (float32, int32) while mxjax's 64-bit arrays keep their dtypes.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import threading
import time

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax as mx
from mxjax import engine

_ROOT = pathlib.Path(__file__).resolve().parent.parent

_FRESH_PROCESS = """
import jax, jax.numpy as jnp, numpy as onp
before = (jnp.ones(3).dtype, jnp.arange(3).dtype, jnp.asarray(onp.arange(3)).dtype,
          (jnp.ones(2) * 2.5).sum().dtype, jax.jit(lambda v: v + 1)(onp.arange(2)).dtype)
import mxjax as mx
assert jax.config.jax_enable_x64 is False, "import mxjax turned jax_enable_x64 on"
after_import = (jnp.ones(3).dtype, jnp.arange(3).dtype, jnp.asarray(onp.arange(3)).dtype,
                (jnp.ones(2) * 2.5).sum().dtype, jax.jit(lambda v: v + 1)(onp.arange(2)).dtype)
assert before == after_import, (before, after_import)
assert after_import[:2] == (jnp.float32, jnp.int32), after_import
x = mx.np.arange(3, dtype="int64") + 1
assert x.dtype == onp.int64, x.dtype
assert mx.nd.array([1, 2], dtype="int64").dtype == onp.int64
assert mx.np.ones(2, dtype="float64").sum().dtype == onp.float64
assert jnp.ones(3).dtype == jnp.float32 and jnp.arange(3).dtype == jnp.int32
assert jax.config.jax_enable_x64 is False
print("ok")
"""


def test_import_does_not_turn_on_x64_for_the_process():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("JAX_ENABLE_X64", None)
    done = subprocess.run([sys.executable, "-c", _FRESH_PROCESS], cwd=_ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")


def _assert_jax_defaults():
    assert not jax.config.jax_enable_x64
    assert jnp.ones(3).dtype == jnp.float32
    assert jnp.arange(3).dtype == jnp.int32
    assert jnp.asarray(onp.arange(3)).dtype == jnp.int32


def test_64_bit_arrays_keep_their_dtypes():
    i = mx.np.arange(3, dtype="int64")
    assert (i + 1).dtype == onp.int64 and (i * 2).sum().dtype == onp.int64
    onp.testing.assert_array_equal((i + 1).asnumpy(), [1, 2, 3])
    f = mx.np.array([1.0, 2.0], dtype="float64")
    assert (f * 2).dtype == onp.float64 and mx.np.sqrt(f).dtype == onp.float64
    assert f.astype("int64").dtype == onp.int64
    big = mx.np.array(onp.array([2 ** 40 + 1], dtype=onp.int64))
    assert (big + 1).asnumpy()[0] == 2 ** 40 + 2           # no truncation to 32 bits
    assert mx.np.argmax(mx.np.array([1.0, 3.0, 2.0])).dtype == onp.int64   # MXNet's index dtype
    assert (mx.np.ones(2, dtype="int32") + mx.np.ones(2, dtype="float64")).dtype == onp.float64
    legacy = mx.nd.array([1, 2, 3], dtype="int64")
    assert (legacy + 1).dtype == onp.int64 and legacy[1:].dtype == onp.int64
    assert mx.nd.argmax(mx.nd.array([[1, 3, 2]]), axis=1).dtype == onp.float32   # MXNet 1.x: float
    assert mx.np.random.randint(0, 10, size=(4,), dtype="int64").dtype == onp.int64
    _assert_jax_defaults()


def test_autograd_on_float64():
    x = mx.np.array([1.0, 2.0, 3.0], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = (x * x).sum()
    y.backward()
    assert x.grad.dtype == onp.float64
    onp.testing.assert_allclose(x.grad.asnumpy(), [2.0, 4.0, 6.0])
    _assert_jax_defaults()


def test_hybridized_block_on_float64_input():
    net = mx.gluon.nn.Dense(2, in_units=3, dtype="float64")
    net.initialize(mx.init.One())
    net.hybridize()
    x = mx.np.ones((1, 3), dtype="float64")
    out = net(x)
    assert out.dtype == onp.float64
    onp.testing.assert_allclose(out.asnumpy(), [[3.0, 3.0]])
    assert net.weight.data().dtype == onp.float64
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)
    assert net.weight.data().dtype == onp.float64
    onp.testing.assert_allclose(net.weight.data().asnumpy(), onp.full((2, 3), 0.5))
    _assert_jax_defaults()


def test_symbol_executor_and_serialization_keep_64_bit(tmp_path):
    a, b = mx.sym.var("a"), mx.sym.var("b")
    executor = (a + b).bind(mx.cpu(), {"a": mx.nd.array([1, 2], dtype="int64"),
                                        "b": mx.nd.array([3, 2 ** 40], dtype="int64")})
    out = executor.forward()[0]
    assert out.dtype == onp.int64 and out.asnumpy().tolist() == [4, 2 ** 40 + 2]
    path = str(tmp_path / "arrays.params")
    mx.nd.save(path, {"i": mx.nd.array([2 ** 40], dtype="int64"), "f": mx.nd.array([0.1], dtype="float64")})
    loaded = mx.nd.load(path)
    assert loaded["i"].dtype == onp.int64 and loaded["i"].asnumpy()[0] == 2 ** 40
    assert loaded["f"].dtype == onp.float64 and loaded["f"].asnumpy()[0] == 0.1
    _assert_jax_defaults()


def test_user_float32_program_around_mxjax_calls_stays_float32():
    @jax.jit
    def user_step(v):
        return jnp.sin(v) * 2 + jnp.arange(v.shape[0])

    before = user_step(jnp.ones(3))
    assert before.dtype == jnp.float32
    x = mx.np.arange(3, dtype="int64") + mx.np.ones(3, dtype="float64")   # mxjax 64-bit work between
    assert x.dtype == onp.float64
    after = user_step(jnp.ones(3))
    assert after.dtype == jnp.float32
    onp.testing.assert_array_equal(onp.asarray(before), onp.asarray(after))
    # the user's jnp on an mxjax float32 array stays float32
    assert (jnp.asarray(mx.np.ones(3).to_jax()) * 2.0).dtype == jnp.float32
    _assert_jax_defaults()


def test_ops_in_a_new_thread_are_64_bit():
    results = []

    def work():
        results.append((mx.np.arange(3, dtype="int64") + 1).dtype)
        results.append(jnp.arange(3).dtype)   # the thread's own JAX code: JAX's default

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert results == [onp.int64, jnp.int32]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["NaiveEngine", "ThreadedEngine"])
def test_ops_on_engine_workers_are_64_bit(kind):
    previous = engine.engine_type()
    engine.set_engine(kind, num_workers=2)
    try:
        x = mx.np.zeros((3,), dtype="int64")
        big = onp.array([2 ** 40, 1, 2], dtype=onp.int64)

        def slow_write():
            time.sleep(0.05)
            x._set_data(mx.np.array(big).to_jax())
        engine.push_sync(slow_write, mutate_vars=[x.engine_var])
        y = x + 1                            # waits on x's var: runs on the engine (a worker thread)
        z = mx.np.argmax(y)
        assert y.dtype == onp.int64 and z.dtype == onp.int64
        assert y.asnumpy().tolist() == [2 ** 40 + 1, 2, 3]
        assert int(z) == 0
    finally:
        engine.get_engine().wait_for_all()
        engine.set_engine(previous)
    _assert_jax_defaults()


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")  # JAX truncating in the user's 32-bit program
def test_ops_under_a_user_jit_follow_its_64_bit_mode():
    def program(x):
        return mx.np.argmax(x) + 1, mx.np.sum(x * 2)

    x = mx.np.array([1.0, 3.0, 2.0])
    index, total = jax.jit(program)(x)          # the user's program is 32-bit: so are mxjax's ops in it
    assert int(index) == 2 and index.dtype == jnp.int32
    assert float(total) == 12.0 and total.dtype == jnp.float32
    with jax.enable_x64(True):
        index, _ = jax.jit(program)(x)
    assert int(index) == 2 and index.dtype == jnp.int64
    grad = jax.grad(lambda v: mx.np.sum(mx.np.sin(v) * 2).to_jax())(mx.np.array([0.0, 1.0]))
    onp.testing.assert_allclose(onp.asarray(grad), 2 * onp.cos([0.0, 1.0]), rtol=1e-6)
    assert mx.np.argmax(x).dtype == onp.int64    # outside the user's trace: MXNet's int64 again
    _assert_jax_defaults()
