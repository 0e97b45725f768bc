"""ResNet-18 V1 inference throughput: mxjax's model-zoo ``resnet18_v1`` vs the same network in Flax.

mxjax: ``gluon.model_zoo.vision.resnet18_v1()`` hybridized with ``static_alloc=True,
static_shape=True`` (as MXNet users deploy it), called outside ``autograd.record`` (BatchNorm
uses its running statistics), NCHW input.  Flax: the same architecture written by hand with
``flax.linen`` (conv 7x7/2, BN, ReLU, max-pool 3/2, four stages of two BasicBlockV1 with a 1x1
strided conv + BN shortcut where the shape changes, global average pool, dense 1000; BatchNorm
with ``use_running_average=True``), ``jax.jit`` of ``apply``, in Flax's native NHWC layout.
mxjax's weights (with random BatchNorm statistics) are copied into the Flax variables, and the
largest difference of the two outputs is printed before timing.

Each round runs ``--loop`` forward passes back to back and waits once; the two sides take turns
within a round in shuffled order.  Reported: images/s from the median round and the median of
per-round time ratios.  Goal (issue 19): mxjax time <= 1.05x Flax's.
``--quick`` (batch 4, fewer rounds) finishes in about a minute on a 2-core CPU.
Needs Flax, which mxjax does not depend on: ``pip install -e '.[bench]'``.
"""
from __future__ import annotations

import argparse
import time

import flax.linen as fnn
import jax
import jax.numpy as jnp
import numpy as onp

import mxjax as mx
from mxjax.gluon.model_zoo import vision

from _rounds import timed_rounds  # benchmarks/ is on sys.path when a script runs

STAGES = ((64, 1), (128, 2), (256, 2), (512, 2))  # (width, stride of the first block)


# -- the hand-written Flax network -----------------------------------------------------------------

def batch_norm(name: str) -> fnn.BatchNorm:
    return fnn.BatchNorm(use_running_average=True, momentum=0.9, epsilon=1e-5, name=name)


class BasicBlockV1(fnn.Module):
    width: int
    stride: int
    downsample: bool

    @fnn.compact
    def __call__(self, x):
        s = (self.stride, self.stride)
        y = fnn.Conv(self.width, (3, 3), s, padding=((1, 1), (1, 1)), use_bias=False, name="conv1")(x)
        y = fnn.relu(batch_norm("bn1")(y))
        y = fnn.Conv(self.width, (3, 3), padding=((1, 1), (1, 1)), use_bias=False, name="conv2")(y)
        y = batch_norm("bn2")(y)
        if self.downsample:
            x = fnn.Conv(self.width, (1, 1), s, padding="VALID", use_bias=False, name="down_conv")(x)
            x = batch_norm("down_bn")(x)
        return fnn.relu(y + x)


class ResNet18V1(fnn.Module):
    classes: int = 1000

    @fnn.compact
    def __call__(self, x):  # NHWC
        x = fnn.Conv(64, (7, 7), (2, 2), padding=((3, 3), (3, 3)), use_bias=False, name="conv0")(x)
        x = fnn.relu(batch_norm("bn0")(x))
        x = fnn.max_pool(x, (3, 3), (2, 2), padding=((1, 1), (1, 1)))
        width_in = 64
        for i, (width, stride) in enumerate(STAGES):
            for j in range(2):
                x = BasicBlockV1(width, stride if j == 0 else 1, j == 0 and width != width_in,
                                 name=f"stage{i}_block{j}")(x)
            width_in = width
        x = jnp.mean(x, axis=(1, 2))
        return fnn.Dense(self.classes, name="fc")(x)


def flax_variables(net) -> dict:
    """mxjax's parameters (structural names) rearranged into the Flax variable tree."""
    named = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
    params: dict = {}
    stats: dict = {}

    def conv(prefix: str, target: dict, name: str) -> None:
        target[name] = {"kernel": jnp.asarray(named[f"{prefix}.weight"].transpose(2, 3, 1, 0))}  # OIHW -> HWIO

    def bn(prefix: str, target: dict, target_stats: dict, name: str) -> None:
        target[name] = {"scale": jnp.asarray(named[f"{prefix}.gamma"]), "bias": jnp.asarray(named[f"{prefix}.beta"])}
        target_stats[name] = {"mean": jnp.asarray(named[f"{prefix}.running_mean"]),
                              "var": jnp.asarray(named[f"{prefix}.running_var"])}

    conv("features.0", params, "conv0")
    bn("features.1", params, stats, "bn0")
    for i in range(len(STAGES)):
        for j in range(2):
            block, p, s = f"stage{i}_block{j}", {}, {}
            root = f"features.{4 + i}.{j}"
            conv(f"{root}.body.0", p, "conv1")
            bn(f"{root}.body.1", p, s, "bn1")
            conv(f"{root}.body.3", p, "conv2")
            bn(f"{root}.body.4", p, s, "bn2")
            if f"{root}.downsample.0.weight" in named:
                conv(f"{root}.downsample.0", p, "down_conv")
                bn(f"{root}.downsample.1", p, s, "down_bn")
            params[block], stats[block] = p, s
    params["fc"] = {"kernel": jnp.asarray(named["output.weight"].T), "bias": jnp.asarray(named["output.bias"])}
    return {"params": params, "batch_stats": stats}


def randomize_batch_norm(net, rng: onp.random.Generator) -> None:
    """Non-trivial BatchNorm parameters and running statistics, so the sanity check tests them."""
    for name, p in net.collect_params().items():
        n = p.shape[0]
        if name.endswith(("gamma", "running_var")):
            p.set_data(mx.np.array(rng.uniform(0.5, 1.5, n).astype(onp.float32)))
        elif name.endswith(("beta", "running_mean")):
            p.set_data(mx.np.array(rng.uniform(-0.2, 0.2, n).astype(onp.float32)))


# -- timing ----------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=224, help="image height and width")
    parser.add_argument("--repeats", type=int, default=5, help="timed rounds")
    parser.add_argument("--loop", type=int, default=2, help="forward passes per round (one wait at the end)")
    parser.add_argument("--quick", action="store_true", help="batch 4, 4 rounds of 2 (about a minute on 2 cores)")
    args = parser.parse_args()
    if args.quick:
        args.batch, args.repeats, args.loop = 4, 4, 2
    rng = onp.random.default_rng(0)
    x_host = rng.normal(size=(args.batch, 3, args.size, args.size)).astype(onp.float32)

    mx.random.seed(0)
    net = vision.resnet18_v1()
    net.initialize(mx.init.Xavier())
    x = mx.np.array(x_host)
    net(x)  # deferred shapes
    randomize_batch_norm(net, rng)
    net.hybridize(static_alloc=True, static_shape=True)

    model = ResNet18V1()
    variables = flax_variables(net)
    apply = jax.jit(lambda v, xb: model.apply(v, xb))
    x_nhwc = jnp.asarray(x_host.transpose(0, 2, 3, 1))  # Flax's layout, converted once outside the timing

    t0 = time.perf_counter()
    ours = net(x)
    ours.wait_to_read()
    mx_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = jax.block_until_ready(apply(variables, x_nhwc))
    flax_first = time.perf_counter() - t0
    diff = float(onp.abs(ours.asnumpy() - onp.asarray(theirs)).max())
    scale = float(onp.abs(onp.asarray(theirs)).max())
    print(f"ResNet-18 V1 inference, batch {args.batch}, 3x{args.size}x{args.size}, float32")
    print(f"  sanity (same weights, same images): max |mxjax - Flax| of the logits {diff:.1e} (max |logit| {scale:.1e})")

    def mx_run(n: int) -> None:
        for _ in range(n):
            out = net(x)
        out.wait_to_read()

    def flax_run(n: int) -> None:
        for _ in range(n):
            out = apply(variables, x_nhwc)
        jax.block_until_ready(out)

    mx_run(1)  # warm-up
    flax_run(1)
    mx_label, flax_label = "mxjax resnet18_v1 hybridized (NCHW)", "Flax linen, jax.jit (NHWC)"
    times = timed_rounds({mx_label: mx_run, flax_label: flax_run}, args.repeats, args.loop)
    median = {label: float(onp.median(ts)) for label, ts in times.items()}
    ratio = float(onp.median(onp.array(times[mx_label]) / onp.array(times[flax_label])))
    print(f"  {args.repeats} rounds of {args.loop} forward passes, one wait per round")
    print(f"    {'network':<38} {'median ms':>10} {'images/s':>9} {'x Flax':>7}")
    for label in times:
        print(f"    {label:<38} {median[label] * 1e3:10.1f} {args.batch / median[label]:9.1f} "
              f"{median[label] / median[flax_label]:7.2f}")
    print(f"  first call (trace + compile + run): mxjax {mx_first:.2f} s, Flax jax.jit {flax_first:.2f} s")
    print(f"  goal: mxjax time <= 1.05x Flax's: median of per-round ratios {ratio:.2f}, "
          f"{'met' if ratio <= 1.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
