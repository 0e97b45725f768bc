"""Imperative training step with mx.autograd vs raw JAX, measured in one run.

An MLP 784-512-512-10 (ReLU, softmax cross-entropy), batch 128: record, forward,
backward, gradients ready.  Compared with the same model's
``jax.jit(jax.value_and_grad(loss))`` step and with eager (unjitted)
``jax.value_and_grad``.  Goal (issue 4): imperative <= 1.5x the jitted step.
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as onp

import mxjax as mx
from mxjax import autograd, npx

SIZES = (784, 512, 512, 10)


def make_params(rng: onp.random.Generator) -> list:
    params = []
    for n_in, n_out in zip(SIZES[:-1], SIZES[1:]):
        params.append(rng.normal(0, n_in ** -0.5, size=(n_out, n_in)).astype(onp.float32))
        params.append(onp.zeros(n_out, onp.float32))
    return params


def jax_loss(params: list, x: jax.Array, y: jax.Array) -> jax.Array:
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i].T + params[i + 1]
        if i < len(params) - 2:
            h = jax.nn.relu(h)
    logp = jax.nn.log_softmax(h)
    return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()


def mx_step(params: list, x, y) -> None:
    with autograd.record():
        h = x
        for i in range(0, len(params), 2):
            h = npx.fully_connected(h, params[i], params[i + 1], num_hidden=params[i].shape[0], no_bias=False)
            if i < len(params) - 2:
                h = npx.relu(h)
        loss = -npx.pick(npx.log_softmax(h), y).mean()
    loss.backward()
    for p in params:
        p.grad.wait_to_read()


def timed(step, repeat: int) -> float:
    step()
    step()  # compile and warm caches
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = onp.random.default_rng(0)
    host_params = make_params(rng)
    x_host = rng.normal(size=(128, 784)).astype(onp.float32)
    y_host = rng.integers(0, 10, size=128)

    jparams = [jnp.asarray(p) for p in host_params]
    jx, jy = jnp.asarray(x_host), jnp.asarray(y_host)
    jitted = jax.jit(jax.value_and_grad(jax_loss))
    eager = jax.value_and_grad(jax_loss)

    params = [mx.np.array(p) for p in host_params]
    for p in params:
        p.attach_grad()
    x, y = mx.np.array(x_host), mx.np.array(y_host.astype(onp.int32))

    t_jit = timed(lambda: jax.block_until_ready(jitted(jparams, jx, jy)), args.repeat)
    t_eager = timed(lambda: jax.block_until_ready(eager(jparams, jx, jy)), max(3, args.repeat // 4))
    t_mx = timed(lambda: mx_step(params, x, y), args.repeat)

    # same gradients as JAX (a correctness guard for the numbers above)
    _, want = jitted(jparams, jx, jy)
    for p, g in zip(params, want):
        onp.testing.assert_allclose(p.grad.asnumpy(), onp.asarray(g), rtol=2e-3, atol=1e-5)

    print(f"{'step':<34} {'ms':>8} {'x jitted':>9}")
    for name, t in (("jax.jit(value_and_grad)", t_jit), ("jax value_and_grad, eager", t_eager),
                    ("mxjax imperative (record/backward)", t_mx)):
        print(f"{name:<34} {t * 1e3:8.2f} {t / t_jit:9.2f}")
    ratio = t_mx / t_jit
    print(f"imperative / jitted = {ratio:.2f} (goal <= 1.5): {'met' if ratio <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
