"""Shared timing for the benchmarks: rounds in which every contender runs once, in an order
shuffled per round, so that load on the machine (and what ran just before) hits all alike."""
from __future__ import annotations

import time

import numpy as onp


def timed_rounds(runs: dict, repeat: int, steps: int) -> dict:
    """Per label, the seconds per step of each round; ``runs[label](steps)`` runs ``steps`` steps."""
    times: dict = {label: [] for label in runs}
    order = list(runs)
    shuffle = onp.random.default_rng(0).shuffle
    for _ in range(repeat):
        shuffle(order)
        for label in order:
            t = time.perf_counter()
            runs[label](steps)
            times[label].append((time.perf_counter() - t) / steps)
    return times
