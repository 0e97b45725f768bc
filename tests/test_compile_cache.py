"""The process-wide compile cache: LRU eviction by entries and bytes, stats, limits, flat memory."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

import mxjax as mx
from mxjax import gluon, np, npx
from mxjax.base import MXNetValueError


@pytest.fixture
def limits():
    previous = npx.set_compile_cache()
    yield
    npx.set_compile_cache(**previous)


def _distinct_shapes(count, start=1000):
    # shapes no other test uses, so every call is a first call
    return [(start + i, 3) for i in range(count)]


def _full(shape, value=1.0):
    """An input array made on the host: no op (and no program) of its own."""
    return np.array(onp.full(shape, value, "float32"))


def test_lru_drops_least_recently_used_op_programs(limits):
    x = _full((7000, 3), 0.5)
    npx.set_compile_cache(max_entries=3)
    ops = [np.arcsinh, np.arccos, np.arcsin, np.arctan]
    before = npx.compile_stats()
    for fn in ops:  # four new programs in a cache of three: the least recently used (arcsinh) is dropped
        onp.testing.assert_allclose(fn(x).asnumpy(), getattr(onp, fn.__name__)(onp.full(x.shape, 0.5, "float32")),
                                    rtol=1e-6)
    after = npx.compile_stats()
    assert after["entries"] <= 3
    assert after["misses"] - before["misses"] == 4
    assert after["evictions"] - before["evictions"] >= 1
    ops[-1](x).wait_to_read()  # the newest is kept: a hit
    assert npx.compile_stats()["hits"] > after["hits"]
    assert npx.compile_stats()["misses"] == after["misses"]
    ops[0](x).wait_to_read()  # the oldest was dropped: compiled again
    assert npx.compile_stats()["misses"] == after["misses"] + 1


def test_one_op_over_many_shapes_stays_within_the_limit(limits):
    arrays = [_full(s) for s in _distinct_shapes(5, start=7050)]
    npx.set_compile_cache(max_entries=3)
    for a in arrays:  # one op's function compiles a program per shape; past the limit it starts afresh
        onp.testing.assert_allclose(np.arcsinh(a).asnumpy(), onp.arcsinh(onp.ones(a.shape, "float32")), rtol=1e-6)
        assert npx.compile_stats()["entries"] <= 3


def test_byte_limit_drops_programs(limits):
    arrays = [_full(s) for s in _distinct_shapes(3, start=7100)]
    npx.set_compile_cache(max_entries=0, max_bytes=1)  # every program is larger: one is kept at a time
    for a in arrays:
        np.arccosh(a).wait_to_read()
    stats = npx.compile_stats()
    assert stats["entries"] == 1 and stats["bytes"] > 1
    assert stats["max_bytes"] == 1 and stats["max_entries"] == 0


class _Scale(gluon.HybridBlock):
    def forward(self, x):
        return x * 2 + 1


def test_hybridized_block_programs_are_evicted_and_retraced(limits):
    arrays = [np.ones(s) for s in _distinct_shapes(3, start=7200)]
    block = _Scale()
    block.hybridize()
    npx.set_compile_cache(max_entries=2)
    for a in arrays:
        onp.testing.assert_allclose(block(a).asnumpy(), onp.full(a.shape, 3.0))
    assert len(block.compile_stats()) <= 2
    assert npx.compile_stats()["entries"] <= 2
    onp.testing.assert_allclose(block(arrays[0]).asnumpy(), onp.full(arrays[0].shape, 3.0))  # traced again


def test_shrinking_the_limit_evicts_at_once(limits):
    arrays = [_full(s, 0.5) for s in _distinct_shapes(4, start=7300)]
    npx.set_compile_cache(max_entries=0)
    for a in arrays:
        np.arctanh(a).wait_to_read()
    assert npx.compile_stats()["entries"] >= 4
    previous = npx.set_compile_cache(max_entries=2)
    assert previous["max_entries"] == 0
    assert npx.compile_stats()["entries"] <= 2


@pytest.mark.parametrize("kwargs", [{"max_entries": -1}, {"max_bytes": 1.5}, {"max_entries": True},
                                    {"max_entries": "10"}])
def test_bad_limits_are_rejected(kwargs):
    with pytest.raises(MXNetValueError, match="set_compile_cache"):
        npx.set_compile_cache(**kwargs)


def _run(code, **env):
    environ = dict(os.environ, **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=environ, timeout=600)
    return done


def test_limits_from_the_environment():
    done = _run("import mxjax as mx; s = mx.npx.compile_stats(); print(s['max_entries'], s['max_bytes'])",
                MXNET_COMPILE_CACHE_SIZE="7", MXNET_COMPILE_CACHE_BYTES="12345")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["7", "12345"]
    bad = _run("import mxjax", MXNET_COMPILE_CACHE_SIZE="many")
    assert bad.returncode != 0 and "MXNET_COMPILE_CACHE_SIZE='many'" in bad.stderr


def test_memory_stays_flat_over_500_shapes():
    # Without a bound each program keeps ~1-3 MB (XLA:CPU), so 500 shapes of an imperative op and of a
    # hybridized block would add hundreds of MB; with 32 entries memory stops growing once it is full.
    done = _run("""
        import mxjax as mx
        from mxjax import gluon, np, npx
        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096 / 2**20
        class Net(gluon.HybridBlock):
            def forward(self, x):
                return np.tanh(x) * 2
        net = Net(); net.hybridize()
        npx.set_compile_cache(max_entries=32)
        marks = {}
        for n in range(1, 501):  # one new program per shape: an op's or the block's, in turn
            x = np.ones((n, 2))
            (np.sinh(x) if n % 2 else net(x)).wait_to_read()
            if n in (150, 500):
                marks[n] = rss()
        s = npx.compile_stats()
        print(marks[150], marks[500], s["entries"], s["evictions"])
    """)
    assert done.returncode == 0, done.stderr
    full, end, entries, evictions = (float(v) for v in done.stdout.split())
    assert entries <= 32 and evictions >= 450
    assert end - full < 60, f"RSS grew {end - full:.0f} MB over the last 350 shapes with a full cache"
