"""Benchmark mxjax.engine: push throughput and parallel speed-up, naive vs threaded.

Run: ``python benchmarks/engine.py`` (about half a minute).  Prints

* pushes/s of no-op fns on (a) independent vars and (b) one dependency chain,
  both as "push" (time spent in the push loop) and "end-to-end" (until
  ``wait_for_all`` returns), for both engines, plus the chain under ``bulk(16)``;
* the speed-up of 8 independent GIL-releasing ~20 ms NumPy matmul tasks on the
  threaded engine (2 workers) over the naive engine.

Goals: >= 100k pushes/s independent on threaded; speed-up >= 1.7.
"""
from __future__ import annotations

import os

# One BLAS thread per task, so parallelism comes from the engine's workers only.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mxjax import engine  # noqa: E402

N_PUSH = 100_000
REPEAT = 3
PAR_REPEAT = 5
N_TASKS = 8
TASK_MS = 20.0


def _noop() -> None:
    pass


def bench_pushes(kind: str, pattern: str, bulk: int = 0) -> tuple[float, float]:
    """Best-of-REPEAT (push rate, end-to-end rate) in pushes per second."""
    best_push = best_e2e = 0.0
    for _ in range(REPEAT):
        engine.set_engine(kind, num_workers=2)
        if pattern == "independent":
            targets = [(engine.new_variable(),) for _ in range(N_PUSH)]
        else:
            chain = (engine.new_variable(),)
            targets = [chain] * N_PUSH
        push = engine.push_sync
        prev = engine.set_bulk_size(bulk)
        t0 = time.perf_counter()
        for mv in targets:
            push(_noop, (), mv)
        t1 = time.perf_counter()
        engine.set_bulk_size(prev)      # flushes a partial bulk
        engine.wait_for_all()
        t2 = time.perf_counter()
        best_push = max(best_push, N_PUSH / (t1 - t0))
        best_e2e = max(best_e2e, N_PUSH / (t2 - t0))
    return best_push, best_e2e


def _calibrate_matmul() -> tuple[np.ndarray, int]:
    """A 600x600 float64 matrix and a repeat count making one task take ~TASK_MS."""
    a = np.random.default_rng(0).standard_normal((600, 600))
    a @ a
    t0 = time.perf_counter()
    for _ in range(5):
        a @ a
    per = (time.perf_counter() - t0) / 5
    return a, max(1, round(TASK_MS / 1000.0 / per))


def _run_tasks(kind: str, a: np.ndarray, reps: int) -> float:
    """Seconds for N_TASKS independent matmul tasks on a fresh engine of ``kind``."""
    engine.set_engine(kind, num_workers=2)
    outs = [None] * N_TASKS
    vs = [engine.new_variable() for _ in range(N_TASKS)]

    def task(i: int) -> None:
        b = a
        for _ in range(reps):
            b = a @ a
        outs[i] = b

    t0 = time.perf_counter()
    for i in range(N_TASKS):
        engine.push_sync(lambda i=i: task(i), (), (vs[i],))
    engine.wait_for_all()
    return time.perf_counter() - t0


def bench_parallel(a: np.ndarray, reps: int) -> tuple[float, float]:
    """Best-of-PAR_REPEAT (naive, threaded) seconds, interleaved so load noise hits both."""
    t_naive = t_thr = float("inf")
    for _ in range(PAR_REPEAT):
        t_naive = min(t_naive, _run_tasks("NaiveEngine", a, reps))
        t_thr = min(t_thr, _run_tasks("ThreadedEngine", a, reps))
    return t_naive, t_thr


def main() -> None:
    t_start = time.perf_counter()
    # Other processes on a small machine skew both rates and speed-up: show the load.
    print(f"mxjax.engine benchmark: {N_PUSH:,} no-op pushes, best of {REPEAT}, "
          f"cpu_count={os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    print(f"{'engine':<16}{'pattern':<20}{'push/s':>14}{'end-to-end/s':>16}")
    rates = {}
    for kind in ("NaiveEngine", "ThreadedEngine"):
        for pattern, bulk in (("independent", 0), ("chain", 0), ("chain", 16)):
            label = pattern if not bulk else f"{pattern} bulk({bulk})"
            push_rate, e2e_rate = bench_pushes(kind, pattern, bulk)
            rates[(kind, label)] = (push_rate, e2e_rate)
            print(f"{kind:<16}{label:<20}{push_rate:>14,.0f}{e2e_rate:>16,.0f}")

    a, reps = _calibrate_matmul()
    t_naive, t_thr = bench_parallel(a, reps)
    speedup = t_naive / t_thr
    print()
    print(f"{N_TASKS} independent matmul tasks (600x600 float64 @ x{reps}, "
          f"~{t_naive / N_TASKS * 1000:.1f} ms each):")
    print(f"  naive {t_naive * 1000:8.1f} ms   threaded(2 workers) {t_thr * 1000:8.1f} ms   "
          f"speed-up {speedup:.2f}x (goal >= 1.7)")
    thr_ind = rates[("ThreadedEngine", "independent")][0]
    print()
    print(f"threaded independent push rate {thr_ind:,.0f}/s (goal >= 100,000): "
          f"{'OK' if thr_ind >= 100_000 else 'BELOW GOAL'}")
    print(f"threaded/naive push-rate ratio: independent "
          f"{thr_ind / rates[('NaiveEngine', 'independent')][0]:.2f}, chain "
          f"{rates[('ThreadedEngine', 'chain')][0] / rates[('NaiveEngine', 'chain')][0]:.2f}")
    print(f"parallel speed-up: {'OK' if speedup >= 1.7 else 'BELOW GOAL'}")
    print(f"total benchmark time {time.perf_counter() - t_start:.1f} s, "
          f"load average now {os.getloadavg()[0]:.2f}")
    engine.set_engine("NaiveEngine")   # stop the workers before exit


if __name__ == "__main__":
    main()
