"""Per-op overhead of the imperative invoke path vs raw ``jax.numpy``, measured in one run.

Prints microseconds per op and the ratio to raw eager ``jax.numpy`` for
``c = a + b`` on shape (100,) and a dependent chain ``x = x * 1.0001``,
for ``mx.np`` and ``mx.nd`` arrays.  Goal (issue 2): ratio <= 1.3.  With bulk execution on (the
default), ``c = a + b`` whose result is dropped measures recording only: a value nobody holds is
never computed.

``--chain`` times a 20-op elementwise chain on a (100,) array, read at the end (issue 17):
mxjax imperative (bulk execution on, and off), one ``jax.jit`` of the same chain, raw eager
``jax.numpy``, and PyTorch eager when ``--torch-python`` names an interpreter that has torch
(it is never a dependency).  Goals: imperative <= 2x the ``jax.jit`` chain, and faster than
PyTorch eager.  It also times the ``jax.jit`` call after 10 us of other Python, as a loop sees it
(asynchronous XLA:CPU wakes a worker thread for each program), and ``--naive`` runs it all again
under ``MXNET_ENGINE_TYPE=NaiveEngine``, where XLA:CPU runs programs on the calling thread.

``--indexing`` times the bounds-checked index ops instead (issue 18): ``x[idx]`` with an
index array, ``take``, ``gather_nd`` and ``x[idx] = v``, each imperatively and inside a
hybridized block, in microseconds per call.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import time
import timeit

import jax
import jax.numpy as jnp
import numpy as onp

import mxjax as mx
from mxjax.engine.naive import xla_synchronous


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


def _setitem(x, idx):
    y = x.copy()
    y[idx] = 1.0
    return y


def _indexing_workloads():
    """(name, fn(x, idx), hybridizable) triples, each one indexing op on an mx.np array
    (deferred compute records no in-place writes, so ``x[idx] = v`` runs imperatively only)."""
    return [
        ("x[idx]", lambda x, idx: x[idx], True),
        ("take", lambda x, idx: mx.np.take(x, idx, axis=0), True),
        ("gather_nd", lambda x, idx: mx.npx.gather_nd(x, idx.reshape(1, -1)), True),
        ("index_update", lambda x, idx: mx.npx.index_update(x, idx.reshape(1, -1), 1.0), True),
        ("x[idx] = 1", _setitem, False),
    ]


class _Apply(mx.gluon.HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, x, idx):
        return self._fn(x, idx)


def indexing_main(args: argparse.Namespace) -> None:
    x = mx.np.array(onp.arange(64 * 32, dtype=onp.float32).reshape(64, 32))
    idx = mx.np.array(onp.arange(0, 64, 3), dtype="int64")
    number = max(args.number // 10, 10)
    print(f"{'op':<12} {'imperative us':>14} {'hybridized us':>14}")
    for name, fn, hybridizable in _indexing_workloads():
        eager = per_op_us(lambda: fn(x, idx).wait_to_read(), number, args.repeat)
        hybrid = "-"
        if hybridizable:
            block = _Apply(fn)
            block.hybridize()
            hybrid = f"{per_op_us(lambda: block(x, idx).wait_to_read(), number, args.repeat):.2f}"
        print(f"{name:<12} {eager:14.2f} {hybrid:>14}")


_CHAIN_LINKS = 10  # each link is two ops: y * 1.0001 + 0.0001


def _chain(y):
    for _ in range(_CHAIN_LINKS):
        y = y * 1.0001 + 0.0001
    return y


def _torch_chain_us(python: str, number: int, repeat: int, cuda: bool = False) -> float | None:
    read = "torch.cuda.synchronize()" if cuda else "y.numpy()"
    code = textwrap.dedent(f"""
        import timeit, torch
        torch.set_num_threads(1)
        x = torch.arange(100, dtype=torch.float32, device={"'cuda'" if cuda else "'cpu'"})
        def run():
            y = x
            for _ in range({_CHAIN_LINKS}):
                y = y * 1.0001 + 0.0001
            {read}
        run()
        print(min(timeit.repeat(run, number={number}, repeat={repeat})) / {number} * 1e6)
    """)
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600)
    except OSError:
        return None
    return float(done.stdout.split()[-1]) if done.returncode == 0 else None


def _after_python_us(jitted, jx, number: int, repeat: int, busy_us: float = 10.0) -> float:
    """One ``jax.jit`` call as a loop with other Python in it sees it: ``busy_us`` of Python (spun,
    then subtracted) before each call.  Asynchronous XLA:CPU hands a program over ~1000 flops to a
    worker thread; after the caller did other work the thread has gone to sleep and must be woken."""
    def run():
        end = time.perf_counter() + busy_us * 1e-6
        while time.perf_counter() < end:
            pass
        jitted(jx).block_until_ready()
    return per_op_us(run, number, repeat) - busy_us


def chain_main(args: argparse.Namespace) -> None:
    values = onp.arange(100, dtype=onp.float32)
    device = _device(args.device)
    x, jx = mx.np.array(values, device=device), jax.device_put(values, device.jax_device)
    jitted = jax.jit(_chain)
    number = max(args.number // 10, 50)
    rounds = {}
    for _ in range(3):  # interleaved rounds, the best of each kept
        for name, run in (("jax.jit (one program)", lambda: jitted(jx).block_until_ready()),
                          ("jax.jit after 10 us of Python", None),
                          ("jax.numpy eager", lambda: _chain(jx).block_until_ready()),
                          ("mxjax imperative, bulk", lambda: _chain(x).wait_to_read()),
                          ("mxjax imperative, no bulk", None)):
            if name.startswith("jax.jit after"):
                t = _after_python_us(jitted, jx, number, args.repeat)
            elif run is None:
                previous = mx.engine.set_imperative_bulk(False)
                t = per_op_us(lambda: _chain(x).wait_to_read(), number, args.repeat)
                mx.engine.set_imperative_bulk(previous["enabled"])
            else:
                t = per_op_us(run, number, args.repeat)
            rounds[name] = min(t, rounds.get(name, t))
    if args.torch_python:
        t = _torch_chain_us(args.torch_python, number, args.repeat, cuda=device.device_type == "gpu")
        if t is not None:
            rounds["torch eager"] = t
    base = rounds["jax.jit (one program)"]
    dispatch = "synchronous" if xla_synchronous() else "asynchronous"
    print(f"20-op elementwise chain on (100,) on {device}, read at the end: us per chain "
          f"(engine {mx.engine.engine_type()}, XLA:CPU dispatch {dispatch})")
    print(f"{'how':<30} {'us':>9} {'x jax.jit':>10}")
    for name, t in rounds.items():
        print(f"{name:<30} {t:9.2f} {t / base:10.2f}")
    ratio = rounds["mxjax imperative, bulk"] / base
    print(f"goal: imperative <= 2x jax.jit: {ratio:.2f}, {'met' if ratio <= 2 else 'NOT met'} "
          f"({rounds['mxjax imperative, bulk'] / rounds['jax.jit after 10 us of Python']:.2f}x "
          f"the jax.jit call after other Python)")
    if "torch eager" in rounds:
        vs = rounds["mxjax imperative, bulk"] / rounds["torch eager"]
        print(f"goal: faster than torch eager: {vs:.2f}x torch's time, {'met' if vs < 1 else 'NOT met'}")
    if args.naive and mx.engine.engine_type() != "NaiveEngine":  # the same, with XLA:CPU synchronous
        print("\nthe same with MXNET_ENGINE_TYPE=NaiveEngine (XLA:CPU runs programs on the calling thread):",
              flush=True)
        argv = [sys.executable, __file__, "--chain", "--number", str(args.number), "--repeat", str(args.repeat),
                "--device", args.device]
        if args.torch_python:
            argv += ["--torch-python", args.torch_python]
        subprocess.run(argv, env={**os.environ, "MXNET_ENGINE_TYPE": "NaiveEngine"}, check=False)


def _device(text: str) -> mx.Device:
    kind, _, index = text.rstrip(")").partition("(")
    return mx.Device(kind, int(index or 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--indexing", action="store_true", help="time the bounds-checked index ops")
    parser.add_argument("--chain", action="store_true", help="time a 20-op chain (bulk execution)")
    parser.add_argument("--torch-python", default=None, help="an interpreter with torch, for --chain")
    parser.add_argument("--device", default="cpu", help="with --chain: cpu or gpu(N), where every side runs")
    parser.add_argument("--naive", action="store_true",
                        help="with --chain: run it again under MXNET_ENGINE_TYPE=NaiveEngine (synchronous XLA:CPU)")
    args = parser.parse_args()
    if args.indexing:
        indexing_main(args)
        return
    if args.chain:
        chain_main(args)
        return

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
