"""Counts of compiled programs that tests of autograd assert on."""
import mxjax as mx


def autograd_programs():
    """Programs autograd compiled: its backwards ("tape") and its reads before backward, which run
    as bulk segments do ("bulk")."""
    by_kind = mx.npx.compile_stats()["by_kind"]
    return by_kind.get("tape", 0) + by_kind.get("bulk", 0)
