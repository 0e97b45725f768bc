"""``MXNET_ENGINE_TYPE=NaiveEngine`` named when mxjax is imported makes XLA:CPU synchronous too.

MXNet's NaiveEngine runs every op at its push; mxjax's runs engine ops so, and also turns JAX's
``jax_cpu_enable_async_dispatch`` off, so compiled programs run on the calling thread (their
results are ready when the call returns).  XLA reads that flag when its CPU backend starts: a
backend started before ``import mxjax`` keeps dispatching asynchronously, with a warning.  Each
case runs in a fresh interpreter, as the environment variable is read at import.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.timeout(120)

_ROOT = pathlib.Path(__file__).resolve().parents[2]

_CHECK = """
import warnings
warnings.simplefilter("error", RuntimeWarning)
{before}
import jax, jax.numpy as jnp, numpy as onp
import mxjax as mx
print("engine", mx.engine.engine_type())
print("async", jax.config.values["jax_cpu_enable_async_dispatch"])
square = jax.jit(lambda a: a @ a)
a = jax.device_put(jnp.ones((600, 600), jnp.float32), jax.devices("cpu")[0])  # XLA:CPU (not a GPU)
square(a).block_until_ready()
print("ready", all(square(a).is_ready() for _ in range(5)))
x = mx.np.array(onp.arange(12, dtype=onp.float32).reshape(3, 4))
y = ((x * 2 + 1) @ x.T).sum(axis=0)
expected = ((onp.arange(12, dtype=onp.float32).reshape(3, 4) * 2 + 1) @
            onp.arange(12, dtype=onp.float32).reshape(3, 4).T).sum(axis=0)
assert onp.allclose(y.asnumpy(), expected), (y.asnumpy(), expected)
print("values", "ok")
"""


def _run(engine: str | None, before: str = "") -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k != "MXNET_ENGINE_TYPE"}
    if engine is not None:
        env["MXNET_ENGINE_TYPE"] = engine
    code = textwrap.dedent(_CHECK).format(before=before)
    done = subprocess.run([sys.executable, "-c", code], cwd=_ROOT, env=env, capture_output=True,
                          text=True, timeout=110)
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    return lines if done.returncode == 0 else {"error": done.stderr}, done.stderr


def test_naive_engine_runs_xla_programs_on_the_calling_thread():
    out, err = _run("NaiveEngine")
    assert out.get("engine") == "NaiveEngine", err
    assert out["async"] == "False"
    assert out["ready"] == "True"
    assert out["values"] == "ok"


def test_default_engine_leaves_xla_asynchronous():
    out, err = _run(None)
    assert out.get("engine") == "ThreadedEngine", err
    assert out["async"] == "True"
    assert out["values"] == "ok"


def test_naive_engine_after_jax_started_warns_and_stays_asynchronous():
    out, err = _run("NaiveEngine", before="import jax.numpy as _jnp; _jnp.ones(1).block_until_ready()")
    assert "error" in out  # the RuntimeWarning, made an error by the script's filter
    assert "JAX's CPU backend started before mxjax was imported" in out["error"]
    assert "NaiveEngine" in out["error"]
    quiet, err = _run("NaiveEngine", before="import jax.numpy as _jnp; _jnp.ones(1).block_until_ready()\n"
                                            "warnings.simplefilter('ignore', RuntimeWarning)")
    assert quiet.get("engine") == "NaiveEngine", err
    assert quiet["async"] == "True"
    assert quiet["values"] == "ok"
