"""A GAN's training step (the DCGAN example's pattern) in Gluon vs a hand-written jax.jit + optax step.

Generator MLP 32-256-256-128 and discriminator MLP 128-256-256-1 (ReLU), batch 64, Adam
(lr 2e-4, beta1 0.5), sigmoid binary cross-entropy.  One step is Gluon's usual two records:

    with autograd.record():                       # the discriminator's step
        fake = netG(noise)
        errD = loss(netD(real), 1) + loss(netD(fake.detach()), 0)
    errD.backward(); trainerD.step(batch)
    with autograd.record():                       # the generator's step, through the same fake
        errG = loss(netD(fake), 1)
    errG.backward(); trainerG.step(batch)

The JAX side does the same work in one ``jax.jit``: the generator's forward once with its VJP,
the discriminator's gradient with the fake cut off, its update, then the generator's gradient
through the updated discriminator and its update.  mxjax hybridized and imperative, same run,
rounds in turns (``--loop`` steps back to back, one wait at the end, as a training loop runs).
Prints seconds per step and the ratio to the JAX step; no goal of its own (issue 17's goals are
``train_step.py``'s): it shows what the tape makes of ``detach`` and of a node read by two
backwards.
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as onp
import optax

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn

from _rounds import timed_rounds  # benchmarks/ is on sys.path when a script runs

BATCH, NOISE, DATA, HIDDEN = 64, 32, 128, 256


def mlp(out: int) -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Dense(HIDDEN, activation="relu"), nn.Dense(HIDDEN, activation="relu"), nn.Dense(out))
    return net


def gluon_step(hybridize: bool, noise: onp.ndarray, real: onp.ndarray):
    """``run(steps)`` for Gluon's two-record GAN step."""
    mx.random.seed(0)
    netG, netD = mlp(DATA), mlp(1)
    for net in (netG, netD):
        net.initialize(mx.init.Xavier())
        if hybridize:
            net.hybridize()
    loss = gluon.loss.SigmoidBinaryCrossEntropyLoss()
    z, x = mx.np.array(noise), mx.np.array(real)
    ones, zeros = mx.np.ones((BATCH,)), mx.np.zeros((BATCH,))
    netG(z), netD(x)
    adam = {"learning_rate": 2e-4, "beta1": 0.5}
    trainerG = gluon.Trainer(netG.collect_params(), "adam", adam)
    trainerD = gluon.Trainer(netD.collect_params(), "adam", adam)

    def run(steps: int) -> None:
        for _ in range(steps):
            with autograd.record():
                fake = netG(z)
                errD = loss(netD(x), ones) + loss(netD(fake.detach()), zeros)
            errD.backward()
            trainerD.step(BATCH)
            with autograd.record():
                errG = loss(netD(fake), ones)
            errG.backward()
            trainerG.step(BATCH)
        errG.wait_to_read()
        mx.nd.waitall()
    return run


def _init(rng: onp.random.Generator, sizes: tuple) -> list:
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params += [jnp.asarray(rng.normal(0, n_in ** -0.5, (n_in, n_out)), jnp.float32), jnp.zeros(n_out)]
    return params


def _apply(params: list, h: jax.Array) -> jax.Array:
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i < len(params) - 2:
            h = jax.nn.relu(h)
    return h


def _bce(logits: jax.Array, label: float) -> jax.Array:
    """Gluon's SigmoidBinaryCrossEntropyLoss on logits, summed over the batch."""
    return (jnp.maximum(logits, 0) - logits * label + jnp.log1p(jnp.exp(-jnp.abs(logits)))).sum()


def jax_step(noise: onp.ndarray, real: onp.ndarray):
    """``run(steps)`` for the same step hand-written in one ``jax.jit``."""
    rng = onp.random.default_rng(0)
    pG, pD = _init(rng, (NOISE, HIDDEN, HIDDEN, DATA)), _init(rng, (DATA, HIDDEN, HIDDEN, 1))
    opt = optax.adam(2e-4, b1=0.5)
    state = [pG, pD, opt.init(pG), opt.init(pD)]
    z, x = jnp.asarray(noise), jnp.asarray(real)

    @jax.jit
    def step(pG, pD, sG, sD, z, x):
        fake, vjpG = jax.vjp(lambda p: _apply(p, z), pG)
        errD, gD = jax.value_and_grad(lambda p: _bce(_apply(p, x), 1.0) + _bce(_apply(p, fake), 0.0))(pD)
        updates, sD = opt.update([g / BATCH for g in gD], sD, pD)
        pD = optax.apply_updates(pD, updates)
        errG, g_fake = jax.value_and_grad(lambda f: _bce(_apply(pD, f), 1.0))(fake)
        (gG,) = vjpG(g_fake)
        updates, sG = opt.update([g / BATCH for g in gG], sG, pG)
        return optax.apply_updates(pG, updates), pD, sG, sD, errG

    def run(steps: int) -> None:
        for _ in range(steps):
            *state[:4], err = step(*state, z, x)
        err.block_until_ready()
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="rounds")
    parser.add_argument("--loop", type=int, default=10, help="steps per round")
    args = parser.parse_args()
    rng = onp.random.default_rng(1)
    noise = rng.normal(size=(BATCH, NOISE)).astype(onp.float32)
    real = rng.normal(size=(BATCH, DATA)).astype(onp.float32)
    runs = {"jax.jit + optax": jax_step(noise, real), "mxjax hybridized": gluon_step(True, noise, real),
            "mxjax imperative": gluon_step(False, noise, real)}
    for run in runs.values():  # compile, and let the repeated structures fuse
        run(5)
    times = timed_rounds(runs, args.repeat, args.loop)
    base = onp.median(times["jax.jit + optax"])
    print(f"GAN step (G {NOISE}-{HIDDEN}-{HIDDEN}-{DATA}, D {DATA}-{HIDDEN}-{HIDDEN}-1, batch {BATCH}, Adam): "
          f"median of {args.repeat} rounds of {args.loop} steps")
    for label, t in times.items():
        print(f"{label:18s} {onp.median(t) * 1e6:9.0f} us/step   {onp.median(t) / base:5.2f}x")


if __name__ == "__main__":
    main()
