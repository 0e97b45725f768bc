"""Per-op overhead of the imperative invoke path vs raw ``jax.numpy``, measured in one run.

Prints microseconds per op and the ratio to raw eager ``jax.numpy`` for
``c = a + b`` on shape (100,) and a dependent chain ``x = x * 1.0001``,
for ``mx.np`` and ``mx.nd`` arrays.  Goal (issue 2): ratio <= 1.3.
"""
from __future__ import annotations

import argparse
import timeit

import jax
import jax.numpy as jnp
import numpy as onp

import mxjax as mx


def per_op_us(stmt, number: int, repeat: int) -> float:
    stmt()  # compile / warm caches
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def chain_us(x, steps: int, repeat: int) -> float:
    def run():
        y = x
        for _ in range(steps):
            y = y * 1.0001
        jax.block_until_ready(y.to_jax() if hasattr(y, "to_jax") else y)
    run()
    return min(timeit.repeat(run, number=1, repeat=repeat)) / steps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    values = onp.arange(100, dtype=onp.float32)
    ja, jb = jnp.asarray(values), jnp.asarray(values + 1)
    na, nb = mx.np.array(values), mx.np.array(values + 1)
    da, db = mx.nd.array(values), mx.nd.array(values + 1)

    rows = []
    raw_add = per_op_us(lambda: ja + jb, args.number, args.repeat)
    rows.append(("c = a + b", "jax.numpy", raw_add, 1.0))
    for name, a, b in (("mx.np", na, nb), ("mx.nd", da, db)):
        t = per_op_us(lambda: a + b, args.number, args.repeat)
        rows.append(("c = a + b", name, t, t / raw_add))

    steps = args.number // 4
    raw_chain = chain_us(ja, steps, args.repeat)
    rows.append(("x = x * 1.0001", "jax.numpy", raw_chain, 1.0))
    for name, x in (("mx.np", na), ("mx.nd", da)):
        t = chain_us(x, steps, args.repeat)
        rows.append(("x = x * 1.0001", name, t, t / raw_chain))

    print(f"{'workload':<16} {'front-end':<10} {'us/op':>8} {'ratio':>7}")
    for workload, name, t, ratio in rows:
        print(f"{workload:<16} {name:<10} {t:8.2f} {ratio:7.2f}")
    worst = max(r[3] for r in rows)
    print(f"worst ratio {worst:.2f} (goal <= 1.3): {'met' if worst <= 1.3 else 'NOT met'}")


if __name__ == "__main__":
    main()
