"""Memory of compiled programs over many input shapes, with and without the compile cache's bound.

Runs an imperative MLP forward (about six ops, each one program per shape) and a
hybridized MLP (one program per shape) over ``--shapes`` batch sizes in a fresh
process per setting, and prints resident memory after each quarter, the growth
per shape once the cache is full, and the cache's counts.  Issue 18's goal: with
a bound, memory is flat once the cache is full.

    python benchmarks/compile_cache.py --shapes 500 --limit 64
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent("""
    import json, sys, time
    import mxjax as mx
    from mxjax import np, npx
    from mxjax.gluon import nn
    shapes, limit, hybrid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20
    npx.set_compile_cache(max_entries=limit)
    net = nn.HybridSequential()
    net.add(nn.Dense(64, activation="relu"), nn.Dense(32), nn.LayerNorm(), nn.Dense(10))
    net.initialize()
    if hybrid:
        net.hybridize()
    net(np.ones((1, 20))).wait_to_read()
    start, marks, began = rss(), [], time.perf_counter()
    for n in range(2, shapes + 2):
        net(np.ones((n, 20))).wait_to_read()
        if (n - 1) % max(1, shapes // 4) == 0:
            marks.append([n - 1, round(rss() - start, 1)])
    stats = npx.compile_stats()
    print(json.dumps({"marks": marks, "seconds": round(time.perf_counter() - began, 1),
                      "entries": stats["entries"], "evictions": stats["evictions"], "bytes": stats["bytes"]}))
""")


def run(shapes: int, limit: int, hybrid: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, str(shapes), str(limit), "1" if hybrid else "0"],
                          capture_output=True, text=True, env=dict(os.environ), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=500)
    parser.add_argument("--limit", type=int, default=64, help="entries kept (the bounded run)")
    parser.add_argument("--unbounded-shapes", type=int, default=100,
                        help="shapes for the unbounded run (it grows by MBs per shape)")
    args = parser.parse_args()
    for hybrid in (False, True):
        mode = "hybridized" if hybrid else "imperative"
        free = run(args.unbounded_shapes, 0, hybrid)
        bounded = run(args.shapes, args.limit, hybrid)
        per_free = free["marks"][-1][1] / free["marks"][-1][0]
        half = [m for m in bounded["marks"] if m[0] >= args.shapes // 2]
        slope = (half[-1][1] - half[0][1]) / max(1, half[-1][0] - half[0][0])
        print(f"{mode:10s} unbounded: +{per_free:.2f} MB per shape over {args.unbounded_shapes} shapes "
              f"({free['marks'][-1][1]:.0f} MB)")
        print(f"{mode:10s} limit {args.limit}: RSS growth (MB) at shapes {bounded['marks']}; "
              f"{slope:+.3f} MB per shape over the second half; {bounded['entries']} entries, "
              f"{bounded['evictions']} evictions, {bounded['bytes'] / 2**20:.1f} MB of executables, "
              f"{bounded['seconds']} s")


if __name__ == "__main__":
    main()
