"""Training step and forward pass on CPU: convolutions on oneDNN (mxjax/_onednn) vs XLA's own (issue 21).

``--model cnn`` (default; batch 64 of 1x28x28): conv3x3x32-relu-maxpool2-conv3x3x64-relu-maxpool2-
dense128-dense10, softmax cross-entropy, SGD.  ``--model resnet18``: resnet18_v1, 10 classes,
batch 8 of 3x112x112.  A hybridized Gluon block; the step is record / backward / trainer.step.
``--model resnet18-infer``: resnet18_v1 (1000 classes) forward only, batch 32 of 3x224x224,
also with the weights reordered at every call instead of packed once (``--batch`` smaller to shorten it; its default 2 rounds take about 3 minutes on 2 shared cores,
``--rounds 3`` about 4).
``MXNET_ONEDNN_ENABLED`` is read once per process, so each variant runs in a child process of
this run (``--child``), the variants alternating over ``--rounds`` rounds; the figure per
variant is the median over its rounds.  Goal: the training step >= 4x faster with oneDNN.
With ``--mxnet PYTHON`` (default: the MXNet 1.9.1 interpreter named by MXNET191_PYTHON, if
set) the same network is timed in MXNet too; optional.

``--designs`` times one convolution four ways (XLA, oneDNN through the FFI, oneDNN through
``jax.pure_callback``, im2col in XLA) and each CNN layer's forward + backward alone: where
the step's time goes.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as onp

MXNET_STEP = r"""
import json, sys, time, numpy as onp, mxnet as mx
from mxnet import autograd, gluon
from mxnet.gluon import nn
model, steps, warm, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if model == "cnn":
    net = nn.HybridSequential()
    net.add(nn.Conv2D(32, 3, activation="relu"), nn.MaxPool2D(2), nn.Conv2D(64, 3, activation="relu"),
            nn.MaxPool2D(2), nn.Dense(128, activation="relu"), nn.Dense(10))
    shape = (64, 1, 28, 28)
elif model == "resnet18":
    net = gluon.model_zoo.vision.resnet18_v1(classes=10)
    shape = (8, 3, 112, 112)
else:
    net = gluon.model_zoo.vision.resnet18_v1()
    shape = (batch, 3, 224, 224)
net.initialize(mx.init.Xavier()); net.hybridize(static_alloc=True, static_shape=True)
rng = onp.random.default_rng(0)
x = mx.nd.array(rng.normal(size=shape).astype("float32"))
y = mx.nd.array(rng.integers(0, 10, size=shape[0]))
trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
def train(n):
    for _ in range(n):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward(); trainer.step(shape[0])
    mx.nd.waitall()
def infer(n):
    for _ in range(n):
        out = net(x)
    mx.nd.waitall()
res = {}
for key, run in (("ms", train), ("infer_ms", infer))[model == "resnet18-infer":]:
    run(warm); t = time.perf_counter(); run(steps)
    res[key] = (time.perf_counter() - t) / steps * 1e3
print(json.dumps(res))
"""

def network(nn, gluon, model: str, batch: int):
    """The benchmark's network and its input shape."""
    if model == "cnn":
        net = nn.HybridSequential()
        net.add(nn.Conv2D(32, 3, activation="relu"), nn.MaxPool2D(2), nn.Conv2D(64, 3, activation="relu"),
                nn.MaxPool2D(2), nn.Dense(128, activation="relu"), nn.Dense(10))
        return net, (64, 1, 28, 28)
    if model == "resnet18":
        return gluon.model_zoo.vision.resnet18_v1(classes=10), (8, 3, 112, 112)
    return gluon.model_zoo.vision.resnet18_v1(), (batch, 3, 224, 224)


def child(model: str, steps: int, warm: int, batch: int, layout_any: int | None, memory_last: int | None,
          infer_xla_channels: int | None, pack: bool = True) -> None:
    """Time the hybridized mxjax training step and forward pass in this process; print JSON."""
    import mxjax as mx
    from mxjax import autograd, gluon
    from mxjax._onednn import library, ops, packing
    from mxjax.gluon import nn

    packing.ENABLED = pack
    if layout_any is not None and library() is not None:
        library().mxjax_onednn_set_layout_any(layout_any)
    if memory_last is not None:
        ops.MEMORY_LAST = bool(memory_last)
    if infer_xla_channels is not None:
        ops.INFER_XLA_MAX_CHANNELS = infer_xla_channels

    mx.random.seed(0)
    net, shape = network(nn, gluon, model, batch)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    rng = onp.random.default_rng(0)
    x = mx.np.array(rng.normal(size=shape).astype(onp.float32))
    y = mx.np.array(rng.integers(0, 10, size=shape[0]).astype(onp.int32))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    params = list(net.collect_params().values())

    def train(n: int) -> None:
        for _ in range(n):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(shape[0])
        for p in params:
            p.data().wait_to_read()

    def infer(n: int) -> None:
        for _ in range(n):
            out = net(x)
        out.wait_to_read()

    res = {}
    for key, run in (("ms", train), ("infer_ms", infer))[model == "resnet18-infer":]:
        run(warm)
        print(f"{MARK} {key} begin", flush=True)  # ONEDNN_VERBOSE's lines between the marks: this run's
        t = time.perf_counter()
        run(steps)
        res[key] = (time.perf_counter() - t) / steps * 1e3
        print(f"{MARK} {key} end", flush=True)
    print(json.dumps({**res, "onednn_traces": ops.stats["onednn"], "lax_traces": ops.stats["lax"],
                      "infer_xla_traces": ops.stats["onednn_infer_xla"], "packed_traces": ops.stats["onednn_packed"]}))


def designs(steps: int) -> None:
    """One convolution (the CNN's second: 64x32x13x13 by 64x32x3x3) forward, four ways: XLA's
    convolution, oneDNN through the FFI (mxjax's path), the same oneDNN plan called from
    jax.pure_callback, and im2col (nine shifted slices and one matrix product) in XLA."""
    import ctypes

    import jax
    import jax.numpy as jnp
    from jax import lax

    from mxjax._onednn import library, ops

    ops.INFER_XLA_MAX_CHANNELS = 0  # 32 channels would send the FFI way's inference to XLA's convolution
    rng = onp.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((64, 32, 13, 13)), jnp.float32)
    w = jnp.asarray(rng.standard_normal((64, 32, 3, 3)), jnp.float32)
    out = jax.ShapeDtypeStruct((64, 64, 11, 11), jnp.float32)
    flat = (0, 0, 2, 0, 0, 1, 0, 64, 32, 64, 0, 13, 13, 3, 3, 11, 11, 1, 1, 0, 0, 1, 1)
    c_flat = (ctypes.c_int64 * len(flat))(*flat)

    def host(xh, wh):
        xh, wh = onp.ascontiguousarray(xh), onp.ascontiguousarray(wh)
        y = onp.empty(out.shape, onp.float32)
        ptrs = (ctypes.c_void_p * 3)(xh.ctypes.data, wh.ctypes.data, y.ctypes.data)
        if library().mxjax_onednn_conv_run(c_flat, len(flat), ptrs, 3) != 0:
            raise RuntimeError("oneDNN convolution failed")
        return y

    def im2col(x, w):
        cols = jnp.stack([x[:, :, i:i + 11, j:j + 11] for i in range(3) for j in range(3)], axis=2)
        return jnp.einsum("nckhw,ock->nohw", cols, w.reshape(64, 32, 9))

    ways = {
        "XLA convolution (lax.conv_general_dilated)": lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), [(0, 0), (0, 0)], dimension_numbers=("NCHW", "OIHW", "NCHW")),
        "oneDNN via XLA FFI custom call (mxjax)": lambda x, w: ops.maybe_convolution(
            x, w, None, (1, 1), (0, 0), (1, 1), 1, False),
        "oneDNN via jax.pure_callback": lambda x, w: jax.pure_callback(host, out, x, w),
        "im2col + matmul in XLA": im2col,
    }
    print(f"one convolution forward, 64x32x13x13 * 64x32x3x3, median of 5 rounds of {steps} calls")
    want = None
    for label, fn in ways.items():
        fn = jax.jit(fn)
        y = jax.block_until_ready(fn(x, w))
        want = y if want is None else want
        err = float(jnp.abs(y - want).max())
        rounds = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(steps):
                y = fn(x, w)
            jax.block_until_ready(y)
            rounds.append((time.perf_counter() - t) / steps * 1e3)
        print(f"  {label:<46} {onp.median(rounds):7.3f} ms   (max diff vs XLA {err:.1e})")


def breakdown(steps: int) -> None:
    """Where the CNN step's time goes: each layer's forward + backward, alone, jitted."""
    import jax
    import jax.numpy as jnp

    from mxjax._onednn import ops
    from mxjax.operator import get_op

    conv, pool = get_op("Convolution").compute, get_op("Pooling").compute
    rng = onp.random.default_rng(0)
    f32 = lambda *s: jnp.asarray(rng.standard_normal(s), jnp.float32)  # noqa: E731

    def timed(fn, *args):
        fn = jax.jit(fn)
        jax.block_until_ready(fn(*args))
        rounds = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(steps):
                y = fn(*args)
            jax.block_until_ready(y)
            rounds.append((time.perf_counter() - t) / steps * 1e3)
        return float(onp.median(rounds))

    def conv_grad(x, w):
        f = lambda x, w: (conv(x, w, kernel=(3, 3), num_filter=w.shape[0], no_bias=True) ** 2).sum()  # noqa: E731
        return jax.grad(f, argnums=(0, 1))(x, w)

    def pool_grad(x):
        return jax.grad(lambda x: (pool(x, kernel=(2, 2), stride=(2, 2)) ** 2).sum())(x)

    print(f"CNN layers alone, forward + backward (median of 5 rounds of {steps}), ms")
    for label, (x, w) in (("conv 1x28x28 -> 32", (f32(64, 1, 28, 28), f32(32, 1, 3, 3))),
                          ("conv 32x13x13 -> 64", (f32(64, 32, 13, 13), f32(64, 32, 3, 3)))):
        ops.MEMORY_LAST, old = False, ops.MEMORY_LAST
        one = timed(conv_grad, x, w)
        saved, ops._usable = ops._usable, lambda x: "timing XLA"
        xla = timed(conv_grad, x, w)
        ops._usable, ops.MEMORY_LAST = saved, old
        print(f"  {label:<24} XLA {xla:7.2f}   oneDNN {one:7.2f}")
    for label, shape in (("maxpool 32x26x26", (64, 32, 26, 26)), ("maxpool 64x11x11", (64, 64, 11, 11))):
        print(f"  {label:<24} XLA {timed(pool_grad, f32(*shape)):7.2f}")


MARK = "mxjax-benchmark-timed"


def spawn(cmd: list, env: dict) -> dict:
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            return {**json.loads(line), "stdout": out.stdout}
    raise RuntimeError(f"{cmd[:3]} failed:\n{out.stderr[-2000:]}")


def primitive_times(stdout: str, key: str, steps: int) -> dict:
    """ms per step of each kind of oneDNN primitive ONEDNN_VERBOSE=profile_exec logged in the
    timed run ``key``: convolutions, reorders of activations and of weights, the rest."""
    lines = stdout.split(f"{MARK} {key} begin", 1)[-1].split(f"{MARK} {key} end", 1)[0].splitlines()
    total: dict = {}
    for line in lines:
        fields = line.split(",")
        if not line.startswith("onednn_verbose") or "exec" not in fields:
            continue
        kind = fields[fields.index("exec") + 2]
        if kind == "reorder":  # weights' blocked layouts start with the output-channel block: "A..."/"AB..."
            kind = "reorder (weights)" if "blocked:A" in line else "reorder (activations)"
        total[kind] = total.get(kind, 0.0) + float(fields[-1]) / steps
    return total


# The CNN's convolutions, (batch, in channels, out channels, output height/width, kernel side): a
# training step runs each as forward, backward-data and backward-weights, each as many flops.
CNN_CONVS = ((64, 1, 32, 26, 3), (64, 32, 64, 11, 3))


def floor(me: list, native_ms: float, onednn_ms: float, steps: int) -> None:
    """Where the oneDNN training step's time goes, and the ratios to XLA native it could reach:
    with oneDNN's kernels as they are but no reorders, and with no convolution time at all."""
    res = spawn(me, {**os.environ, "MXNET_ONEDNN_ENABLED": "1", "ONEDNN_VERBOSE": "profile_exec"})
    times = primitive_times(res["stdout"], "ms", steps)
    kernels = times.get("convolution", 0.0)
    rest = onednn_ms - kernels - sum(ms for kind, ms in times.items() if kind.startswith("reorder"))
    gflop = sum(3 * 2 * n * i * o * hw * hw * k * k for n, i, o, hw, k in CNN_CONVS) / 1e9
    print("  where the oneDNN step's time goes (ONEDNN_VERBOSE=profile_exec, one run), ms per step:")
    for kind, ms in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"    {kind:<32} {ms:7.2f}")
    print(f"    {'the rest (XLA ops, dispatch)':<32} {rest:7.2f}   (the step's median minus convolutions "
          "and reorders)")
    a = onp.random.default_rng(0).random((2048, 2048), dtype=onp.float32)
    a @ a
    t = time.perf_counter()
    for _ in range(5):
        a @ a
    peak = 2 * 2048 ** 3 * 5 / (time.perf_counter() - t) / 1e9  # this CPU's practical float32 rate
    at_peak = gflop / peak * 1e3
    print(f"  the convolution kernels: {gflop:.2f} GFLOP per step at {gflop / kernels * 1e3:.0f} GFLOP/s "
          f"(a 2048x2048 float32 matrix product in NumPy: {peak:.0f} GFLOP/s)")
    print(f"  floor with oneDNN's kernels and no reorders: {kernels + rest:.2f} ms, at most "
          f"{native_ms / (kernels + rest):.2f}x XLA native's {native_ms:.2f} ms; with the convolutions at the "
          f"matrix product's rate: {at_peak + rest:.2f} ms, {native_ms / (at_peak + rest):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, help="timed steps per round (default 40; resnet18-infer 3)")
    parser.add_argument("--warm", type=int, help="untimed steps first: trace, compile (default 5; resnet18-infer 1)")
    parser.add_argument("--batch", type=int, default=32, help="resnet18-infer's batch (smaller: shorter run)")
    parser.add_argument("--rounds", type=int, help="rounds; each runs every variant once (default 3; resnet18-infer 2)")
    parser.add_argument("--mxnet", default=os.environ.get("MXNET191_PYTHON"),
                        help="a Python with MXNet installed, to time the same step there (optional)")
    parser.add_argument("--model", choices=("cnn", "resnet18", "resnet18-infer"), default="cnn",
                        help="cnn: the step above; resnet18: resnet18_v1 (10 classes), batch 8 of 3x112x112; "
                             "resnet18-infer: resnet18_v1 forward only, batch --batch of 3x224x224")
    parser.add_argument("--designs", action="store_true",
                        help="instead: one convolution through XLA, the FFI, pure_callback and im2col")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--layout-any", type=int, help="oneDNN picks layouts of: 0 nothing, 1 weights, 2 all")
    parser.add_argument("--memory-last", type=int, help="1: activations stored channel-last for oneDNN")
    parser.add_argument("--no-pack", action="store_true",
                        help="inference reorders the convolution weights at every call (mxjax/_onednn/packing.py)")
    parser.add_argument("--infer-xla-channels", type=int,
                        help="inference on XLA up to this many input channels (mxjax/_onednn/ops.py's rule)")
    args = parser.parse_args()
    heavy = args.model == "resnet18-infer"
    args.steps = args.steps if args.steps is not None else 3 if heavy else 40
    args.warm = args.warm if args.warm is not None else 1 if heavy else 5
    args.rounds = args.rounds if args.rounds is not None else 2 if heavy else 3
    if args.designs:
        designs(args.steps)
        breakdown(args.steps)
        return
    if args.child:
        child(args.model, args.steps, args.warm, args.batch, args.layout_any, args.memory_last,
              args.infer_xla_channels, not args.no_pack)
        return
    me = [sys.executable, os.path.abspath(__file__), "--child", "--model", args.model, "--steps", str(args.steps),
          "--warm", str(args.warm), "--batch", str(args.batch)]
    if args.infer_xla_channels is not None:
        me += ["--infer-xla-channels", str(args.infer_xla_channels)]
    variants = {"mxjax hybridized, oneDNN": (me, {"MXNET_ONEDNN_ENABLED": "1"}),
                "mxjax hybridized, XLA native (MXNET_ONEDNN_ENABLED=0)": (me, {"MXNET_ONEDNN_ENABLED": "0"})}
    if heavy:  # inference: what packing the weights once saves
        variants["mxjax hybridized, oneDNN, weights reordered per call"] = (me + ["--no-pack"],
                                                                           {"MXNET_ONEDNN_ENABLED": "1"})
    if args.mxnet and os.path.exists(args.mxnet):
        variants["MXNet (" + args.mxnet + ")"] = ([args.mxnet, "-c", MXNET_STEP, args.model, str(args.steps),
                                                    str(args.warm), str(args.batch)], {})
    times: dict = {label: {"ms": [], "infer_ms": []} for label in variants}
    info: dict = {}
    for _ in range(args.rounds):
        for label, (cmd, extra) in variants.items():
            try:
                res = spawn(cmd, {**os.environ, **extra})
            except RuntimeError as err:
                print(f"{label}: {err}")
                continue
            for key in ("ms", "infer_ms"):
                if key in res:
                    times[label][key].append(res[key])
            info[label] = res
    what = {"cnn": "CNN, batch 64 of 1x28x28", "resnet18": "resnet18_v1, batch 8 of 3x112x112",
            "resnet18-infer": f"resnet18_v1, batch {args.batch} of 3x224x224"}[args.model]
    print(f"{what}, CPU ({len(os.sched_getaffinity(0))} cores); median over {args.rounds} rounds of "
          f"{args.steps} steps")
    native = "mxjax hybridized, XLA native (MXNET_ONEDNN_ENABLED=0)"
    ratios = {}
    shown = [(key, title) for key, title in (("ms", "training step (record, backward, trainer.step)"),
                                             ("infer_ms", "forward only")) if any(ts[key] for ts in times.values())]
    for key, title in shown:
        print(f"  {title}")
        base = float(onp.median(times[native][key])) if times[native][key] else onp.nan
        for label, ts in times.items():
            if not ts[key]:
                continue
            med = float(onp.median(ts[key]))
            extra = info[label]
            paths = (f"  [convolutions traced: oneDNN {extra['onednn_traces']} (inference on XLA: "
                     f"{extra['infer_xla_traces']}, on packed weights: {extra['packed_traces']}), "
                     f"XLA {extra['lax_traces']}]"
                     if "onednn_traces" in extra and key == shown[0][0] else "")
            print(f"    {label:<56} {med:8.2f} ms  {base / med:5.2f}x vs XLA native{paths}")
            if label == "mxjax hybridized, oneDNN":
                ratios[key] = base / med
    if "ms" in ratios:
        print(f"  goal: training step with oneDNN >= 4x faster than XLA native: {ratios['ms']:.2f}x, "
              f"{'met' if ratios['ms'] >= 4 else 'NOT met'}")
        floor(me, float(onp.median(times[native]["ms"])),
              float(onp.median(times["mxjax hybridized, oneDNN"]["ms"])), args.steps)


if __name__ == "__main__":
    main()
