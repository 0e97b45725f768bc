"""One LSTM training step: mxjax's fused ``gluon.rnn.LSTM`` vs a hand-written ``lax.scan`` LSTM in JAX.

A 2-layer LSTM (hidden 256, input 256, sequence 35, batch 32, layout TNC, float32), as in a word
language model after its embedding.  A step is forward, a mean squared error against a fixed
target, backward and an SGD update:

- mxjax: ``gluon.rnn.LSTM`` hybridized (static_alloc, static_shape), ``autograd.record`` /
  ``backward`` and ``gluon.Trainer('sgd')``, as an MXNet 2.0 script writes it;
- JAX: the same LSTM written by hand (one input matmul per layer, then ``lax.scan`` over time),
  ``jax.jit`` of ``value_and_grad`` plus ``optax.sgd``, with donated buffers;
- MXNet 1.9.1 (only when ``MXNET_PYTHON`` names an interpreter with mxnet installed): its fused
  ``gluon.rnn.LSTM`` hybridized, in a subprocess, on the same weights and data.

Before timing, the step-0 loss and gradient of mxjax and JAX on the same weights are compared
(printed, not timed).  Each round runs ``--loop`` steps back to back and waits once at the end;
mxjax and JAX take turns within every round (order shuffled), so load on the machine hits both
alike.  Reported: median ms/step and the median of per-round ratios.  Goal (issue 19): mxjax
<= 1.10x the hand-written JAX step.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as onp
import optax

import mxjax as mx
from mxjax import autograd, gluon

from _rounds import timed_rounds  # benchmarks/ is on sys.path when a script runs

LR = 0.01

MXNET_SCRIPT = r"""
import json, sys, time
import numpy as np
import mxnet as mx
from mxnet import autograd, gluon

data = np.load(sys.argv[1])
layers, hidden, loop, repeat = (int(a) for a in sys.argv[2:6])
net = gluon.rnn.LSTM(hidden, num_layers=layers, layout='TNC', input_size=data['x'].shape[2])
net.initialize()
params = net.collect_params()
for name, p in params.items():
    p.set_data(mx.nd.array(data[name[name.index('_') + 1:]]))
net.hybridize(static_alloc=True, static_shape=True)
trainer = gluon.Trainer(params, 'sgd', {'learning_rate': float(sys.argv[6])})
x, y = mx.nd.array(data['x']), mx.nd.array(data['y'])
def steps(n):
    for _ in range(n):
        with autograd.record():
            loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        trainer.step(1)
    mx.nd.waitall()
    return loss
with autograd.record():
    loss0 = ((net(x) - y) ** 2).mean()
loss0 = float(loss0.asscalar())
steps(3)
times = []
for _ in range(repeat):
    t = time.perf_counter(); steps(loop); times.append((time.perf_counter() - t) / loop)
print(json.dumps({'loss0': loss0, 'times': times, 'version': mx.__version__}))
"""


# -- the hand-written JAX LSTM ---------------------------------------------------------------------

def split_fused(flat: onp.ndarray, layers: int, hidden: int, size_in: int) -> dict:
    """Per-layer ``(W_ih, W_hh, b_ih, b_hh)`` from the fused vector (all weights layer by layer, i2h
    then h2h, then all biases in the same order; gates i, f, g, o), keyed as MXNet 1.9.1 names them."""
    out, offset = {}, 0
    for layer in range(layers):
        for kind, cols in (("i2h_weight", size_in if layer == 0 else hidden), ("h2h_weight", hidden)):
            n = 4 * hidden * cols
            out[f"l{layer}_{kind}"] = flat[offset:offset + n].reshape(4 * hidden, cols)
            offset += n
    for layer in range(layers):
        for kind in ("i2h_bias", "h2h_bias"):
            out[f"l{layer}_{kind}"] = flat[offset:offset + 4 * hidden]
            offset += 4 * hidden
    assert offset == flat.size, (offset, flat.size)
    return out


def lstm_forward(params: list, x: jax.Array) -> jax.Array:
    """``params``: per layer (W_ih, W_hh, b), b = b_ih + b_hh; ``x`` (T, N, C) -> outputs (T, N, H)."""
    batch = x.shape[1]
    for w_ih, w_hh, b in params:
        hidden = w_hh.shape[1]
        xp = x @ w_ih.T + b  # every time step's input projection in one matmul

        def step(carry, xt, w_hh=w_hh):
            h, c = carry
            i, f, g, o = jnp.split(xt + h @ w_hh.T, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        zeros = jnp.zeros((batch, hidden), x.dtype)
        _, x = jax.lax.scan(step, (zeros, zeros), xp)
    return x


def jax_loss(params: list, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((lstm_forward(params, x) - y) ** 2)


# -- timing ----------------------------------------------------------------------------------------

def run_mxnet(python: str, pieces: dict, x: onp.ndarray, y: onp.ndarray, layers: int, hidden: int,
              loop: int, repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "lstm.npz")
        onp.savez(path, x=x, y=y, **pieces)
        done = subprocess.run([python, "-c", MXNET_SCRIPT, path, str(layers), str(hidden), str(loop), str(repeat),
                               str(LR)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"MXNet subprocess failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=35)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--input-size", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--loop", type=int, default=5, help="steps per round (one wait at the end)")
    parser.add_argument("--repeat", type=int, default=15, help="rounds")
    args = parser.parse_args()
    shape = f"{args.layers}-layer LSTM, hidden {args.hidden}, input {args.input_size}, T={args.seq}, N={args.batch}"
    rng = onp.random.default_rng(0)
    x_host = rng.normal(size=(args.seq, args.batch, args.input_size)).astype(onp.float32)
    y_host = rng.uniform(-0.5, 0.5, size=(args.seq, args.batch, args.hidden)).astype(onp.float32)

    # mxjax, as an MXNet 2.0 script writes it
    mx.random.seed(0)
    net = gluon.rnn.LSTM(args.hidden, num_layers=args.layers, layout="TNC", input_size=args.input_size)
    net.initialize()  # Uniform(0.07) pieces; Xavier refuses the fused vector, in MXNet 2.0 too
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    x, y = mx.np.array(x_host), mx.np.array(y_host)
    flat0 = net.rnn_param.data().asnumpy().copy()
    pieces = split_fused(flat0, args.layers, args.hidden, args.input_size)

    def mx_steps(n: int) -> None:
        for _ in range(n):
            with autograd.record():
                loss = ((net(x) - y) ** 2).mean()
            loss.backward()
            trainer.step(1)
        loss.wait_to_read()
        net.rnn_param.data().wait_to_read()

    # the hand-written JAX step on the same weights
    params = [(jnp.asarray(pieces[f"l{k}_i2h_weight"]), jnp.asarray(pieces[f"l{k}_h2h_weight"]),
               jnp.asarray(pieces[f"l{k}_i2h_bias"] + pieces[f"l{k}_h2h_bias"])) for k in range(args.layers)]
    tx = optax.sgd(LR)
    state = tx.init(params)
    jx, jy = jnp.asarray(x_host), jnp.asarray(y_host)

    def step(params, state, xb, yb):
        loss, grads = jax.value_and_grad(jax_loss)(params, xb, yb)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    # sanity check (not timed): step-0 loss and gradient on the same weights
    with autograd.record():
        mx_loss0 = ((net(x) - y) ** 2).mean()
    mx_loss0.backward()
    mx_grad = split_fused(net.rnn_param.grad().asnumpy(), args.layers, args.hidden, args.input_size)
    jax_loss0, jax_grads = jax.jit(jax.value_and_grad(jax_loss))(params, jx, jy)
    grad_diff = max(max(float(onp.abs(mx_grad[f"l{k}_i2h_weight"] - onp.asarray(g[0])).max()),
                        float(onp.abs(mx_grad[f"l{k}_h2h_weight"] - onp.asarray(g[1])).max()),
                        float(onp.abs(mx_grad[f"l{k}_h2h_bias"] - onp.asarray(g[2])).max()))
                    for k, g in enumerate(jax_grads))
    grad_scale = max(float(onp.abs(onp.asarray(leaf)).max()) for leaf in jax.tree_util.tree_leaves(jax_grads))
    print(f"{shape}, float32: one training step (forward, MSE loss, backward, SGD lr {LR})")
    print(f"  sanity (step 0, same weights): loss mxjax {float(mx_loss0):.7f}, JAX {float(jax_loss0):.7f}, "
          f"|diff| {abs(float(mx_loss0) - float(jax_loss0)):.1e}; max |grad diff| {grad_diff:.1e} "
          f"(max |grad| {grad_scale:.1e})")

    jitted = jax.jit(step, donate_argnums=(0, 1))
    t0 = time.perf_counter()
    params, state, _ = jax.block_until_ready(jitted(params, state, jx, jy))
    jax_first = time.perf_counter() - t0

    def jax_steps(n: int) -> None:
        nonlocal params, state
        for _ in range(n):
            params, state, loss = jitted(params, state, jx, jy)
        jax.block_until_ready((loss, params))

    t0 = time.perf_counter()
    mx_steps(1)
    mx_first = time.perf_counter() - t0
    mx_steps(2)  # warm-up
    jax_steps(2)
    mx_label, jax_label = "mxjax gluon.rnn.LSTM hybridized", "JAX lax.scan, jax.jit + optax"
    times = timed_rounds({mx_label: mx_steps, jax_label: jax_steps}, args.repeat, args.loop)
    median = {label: float(onp.median(ts)) for label, ts in times.items()}
    best = {label: min(ts) for label, ts in times.items()}
    ratio = float(onp.median(onp.array(times[mx_label]) / onp.array(times[jax_label])))
    print(f"  {args.repeat} rounds of {args.loop} steps, one wait per round")
    print(f"    {'step':<36} {'median ms':>10} {'best ms':>9} {'x jax':>7}")
    for label in times:
        print(f"    {label:<36} {median[label] * 1e3:10.2f} {best[label] * 1e3:9.2f} "
              f"{median[label] / median[jax_label]:7.2f}")

    python = os.environ.get("MXNET_PYTHON")
    if python:
        theirs = run_mxnet(python, pieces, x_host, y_host, args.layers, args.hidden, args.loop, args.repeat)
        mxnet_ms = float(onp.median(theirs["times"])) * 1e3
        label = f"MXNet {theirs['version']} fused LSTM hybridized"
        print(f"    {label:<36} {mxnet_ms:10.2f} {min(theirs['times']) * 1e3:9.2f} "
              f"{mxnet_ms / (median[jax_label] * 1e3):7.2f}   (subprocess, after the rounds above)")
        print(f"  MXNet step-0 loss on the same weights: {theirs['loss0']:.7f}; "
              f"mxjax / MXNet time: {median[mx_label] * 1e3 / mxnet_ms:.2f}")
    else:
        print("  MXNet skipped: set MXNET_PYTHON to an interpreter with mxnet installed to compare")
    print(f"  first step (trace + compile + run): mxjax {mx_first * 1e3:.0f} ms, jax.jit {jax_first * 1e3:.0f} ms")
    print(f"  goal: mxjax <= 1.10x the JAX step: median of per-round ratios {ratio:.2f} "
          f"(best {best[mx_label] / best[jax_label]:.2f}), {'met' if ratio <= 1.10 else 'NOT met'}")


if __name__ == "__main__":
    main()
