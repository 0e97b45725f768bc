"""Symbol executors: training-step speed vs raw JAX, the memory planner's savings, mirror, in one run.

1. An MLP 784-512-512-10 (ReLU, softmax cross-entropy as ``-mean(pick(log_softmax))``),
   batch 128, built as a Symbol and bound with ``simple_bind``: ``forward(is_train=True)``
   + ``backward()`` + gradients ready, against ``jax.jit(jax.value_and_grad(f))`` of
   the same function in jnp.  Goal (issue 5): ratio <= 1.05.
2. The static memory planner (``Executor.memory_plan``) on that MLP and on a
   ResNet-style graph (conv-BN-ReLU blocks with residual adds): bytes of the
   intermediate values without sharing vs planned, forward and forward+backward.
   Goal: forward+backward saves >= 50% of the no-sharing bytes.
3. XLA's compiled memory analysis of the same training programs with and without
   mirroring (``executor.mirror``, i.e. ``MXNET_BACKWARD_DO_MIRROR=1``).
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as onp

import mxjax as mx

SIZES = (784, 512, 512, 10)
BATCH = 128


def mlp_symbol() -> mx.sym.Symbol:
    h = mx.sym.var("data")
    for i, n in enumerate(SIZES[1:]):
        h = mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{i}")
        if i < len(SIZES) - 2:
            h = mx.sym.Activation(h, act_type="relu", name=f"relu{i}")
    return _loss(h)


def _loss(logits: mx.sym.Symbol) -> mx.sym.Symbol:
    picked = mx.sym.pick(mx.sym.log_softmax(logits), mx.sym.var("label"))
    return mx.sym.negative(mx.sym.mean(picked), name="loss")


def resnet_symbol(blocks: int = 3, channels: int = 16) -> mx.sym.Symbol:
    def conv_bn(x: mx.sym.Symbol, name: str, relu: bool = True) -> mx.sym.Symbol:
        h = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=channels, no_bias=True,
                               name=f"{name}_conv")
        h = mx.sym.BatchNorm(h, fix_gamma=False, name=f"{name}_bn")
        return mx.sym.Activation(h, act_type="relu", name=f"{name}_relu") if relu else h

    h = conv_bn(mx.sym.var("data"), "stem")
    for i in range(blocks):
        residual = conv_bn(conv_bn(h, f"b{i}a"), f"b{i}b", relu=False)
        h = mx.sym.Activation(h + residual, act_type="relu", name=f"b{i}_out")
    h = mx.sym.mean(h, axis=(2, 3), name="pool")
    return _loss(mx.sym.FullyConnected(h, num_hidden=10, name="fc"))


def bind(sym: mx.sym.Symbol, **shapes: tuple) -> mx.sym.Executor:
    grad_req = {n: "null" if n in ("data", "label") else "write" for n in sym.list_arguments()}
    return sym.simple_bind(mx.cpu(), grad_req=grad_req, type_dict={"label": "int32"}, **shapes)


def jax_loss(params: list, x: jax.Array, y: jax.Array) -> jax.Array:
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i].T + params[i + 1]
        if i < len(params) - 2:
            h = jax.nn.relu(h)
    return -jnp.take_along_axis(jax.nn.log_softmax(h), y[:, None], axis=1).mean()


def best_of(steps: dict, repeat: int, rounds: int) -> dict:
    """Best time per step, measured in interleaved rounds (a noisy machine slows all alike)."""
    for step in steps.values():
        step()
        step()  # compile, warm caches, settle the executor into its steady form
    best = {name: float("inf") for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            for _ in range(repeat):
                start = time.perf_counter()
                step()
                best[name] = min(best[name], time.perf_counter() - start)
    return best


def speed(repeat: int, rounds: int) -> float:
    rng = onp.random.default_rng(0)
    ex = bind(mlp_symbol(), data=(BATCH, SIZES[0]), label=(BATCH,))
    x = rng.normal(size=(BATCH, SIZES[0])).astype(onp.float32)
    y = rng.integers(0, SIZES[-1], size=BATCH).astype(onp.int32)
    ex.arg_dict["data"][:] = x
    ex.arg_dict["label"][:] = y
    params = []
    for i, (n_in, n_out) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        w = rng.normal(0, n_in ** -0.5, size=(n_out, n_in)).astype(onp.float32)
        ex.arg_dict[f"fc{i}_weight"][:] = w
        params += [jnp.asarray(w), jnp.zeros(n_out, jnp.float32)]
    jitted = jax.jit(jax.value_and_grad(jax_loss))
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    grads = list(ex.grad_dict.values())

    def mx_step() -> None:
        ex.forward(is_train=True)
        ex.backward()
        for g in grads:
            g.wait_to_read()

    def jax_step() -> None:
        jax.block_until_ready(jitted(params, jx, jy))

    best = best_of({"jax": jax_step, "mx": mx_step}, repeat, rounds)
    # the same loss and gradients as JAX (a correctness guard for the numbers above)
    loss, want = jitted(params, jx, jy)
    onp.testing.assert_allclose(ex.outputs[0].asnumpy(), onp.asarray(loss), rtol=1e-5)
    for i, g in enumerate(want):
        name = f"fc{i // 2}_{'weight' if i % 2 == 0 else 'bias'}"
        onp.testing.assert_allclose(ex.grad_dict[name].asnumpy(), onp.asarray(g), rtol=2e-3, atol=1e-5)
    print(f"{'MLP 784-512-512-10, batch 128':<44} {'ms':>8} {'x jitted':>9}")
    print(f"{'jax.jit(jax.value_and_grad(f))':<44} {best['jax'] * 1e3:8.3f} {1.0:9.3f}")
    ratio = best["mx"] / best["jax"]
    print(f"{'executor forward(is_train=True) + backward()':<44} {best['mx'] * 1e3:8.3f} {ratio:9.3f}")
    print(f"executor / jitted = {ratio:.3f} (goal <= 1.05): {'met' if ratio <= 1.05 else 'NOT met'}")
    return ratio


def _mb(n: int) -> str:
    return f"{n / 2 ** 20:8.2f}"


def memory(resnet_batch: int) -> None:
    graphs = {
        "MLP 784-512-512-10, batch 128": bind(mlp_symbol(), data=(BATCH, SIZES[0]), label=(BATCH,)),
        f"ResNet-style (3 res. blocks, 16 ch, 32x32), batch {resnet_batch}":
            bind(resnet_symbol(), data=(resnet_batch, 3, 32, 32), label=(resnet_batch,)),
    }
    print("\nStatic memory plan (intermediate values; bound arrays are external and not counted), MB")
    print(f"{'graph':<52} {'pass':<17} {'no share':>8} {'planned':>8} {'saved':>7}")
    savings = []
    for name, ex in graphs.items():
        for backward in (False, True):
            plan = ex.memory_plan(include_backward=backward)
            which = "forward+backward" if backward else "forward"
            print(f"{name:<52} {which:<17} {_mb(plan.no_sharing_bytes)} {_mb(plan.planned_bytes)} "
                  f"{100 * plan.saving:6.1f}%")
            if backward:
                savings.append(plan.saving)
    met = all(s >= 0.5 for s in savings)
    print(f"forward+backward saving >= 50% of no-sharing bytes: {'met' if met else 'NOT met'}")

    print("\nXLA compiled memory analysis, MB (training forward: outputs include the residuals kept "
          "for backward; peak ~ arguments + outputs + temp - aliased)")
    print(f"{'graph':<52} {'program':<17} {'mirror':<6} {'outputs':>8} {'temp':>8} {'peak':>8}")
    for name, ex in graphs.items():
        reports = {mirror: ex.memory_analysis(mirror=mirror) for mirror in (False, True)}
        for program in ("training forward", "forward+backward"):
            for mirror, report in reports.items():
                s = report[program]
                peak = (s["argument_size_in_bytes"] + s["output_size_in_bytes"] + s["temp_size_in_bytes"]
                        - s["alias_size_in_bytes"])
                print(f"{name:<52} {program:<17} {'on' if mirror else 'off':<6} "
                      f"{_mb(s['output_size_in_bytes'])} {_mb(s['temp_size_in_bytes'])} {_mb(peak)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--resnet-batch", type=int, default=32)
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}")
    speed(args.repeat, args.rounds)
    memory(args.resnet_batch)


if __name__ == "__main__":
    main()
