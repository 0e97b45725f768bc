"""Hybridized blocks follow their structure (children added, replaced, removed), trace once under
threads, and say when ``forward`` reads a traced array's values."""
from __future__ import annotations

import threading
import warnings

import numpy as onp
import pytest

import mxjax as mx
from mxjax import gluon, np
from mxjax._value_reads import TracedValueError, TracedValueWarning
from mxjax.gluon import nn
from oracle import compilations


def _x(rows=2, cols=5):
    return np.array(onp.arange(rows * cols, dtype="float32").reshape(rows, cols) / 10)


def _imperative(block, x):
    block.hybridize(False)
    try:
        return block(x).asnumpy()
    finally:
        block.hybridize(True)


def test_adding_a_child_retraces():
    net = nn.HybridSequential()
    net.add(nn.Dense(3))
    net.initialize()
    net.hybridize()
    x = _x()
    assert net(x).shape == (2, 3)
    extra = nn.Dense(4)
    extra.initialize()
    net.add(extra)
    out = net(x)
    assert out.shape == (2, 4)
    onp.testing.assert_allclose(out.asnumpy(), _imperative(net, x), rtol=1e-5)


class _Head(gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.body = nn.HybridSequential()
        self.body.add(nn.Dense(3))
        self.out = nn.Dense(2)

    def forward(self, x):
        return self.out(self.body(x))


def test_replacing_a_child_attribute_retraces():
    net = _Head()
    net.initialize()
    net.hybridize()
    x = _x()
    first = net(x).asnumpy()
    net.out = nn.Dense(6)
    net.out.initialize()
    out = net(x)
    assert out.shape == (2, 6)
    onp.testing.assert_allclose(out.asnumpy(), _imperative(net, x), rtol=1e-5)
    assert first.shape == (2, 2)


def test_a_change_deep_in_the_tree_retraces_the_ancestors():
    # MXNet clears only the block whose child changed; its hybridized ancestors keep the old graph
    net = _Head()
    net.initialize()
    net.hybridize()
    x = _x()
    net(x)
    net.body.add(nn.Activation("relu"))
    onp.testing.assert_allclose(net(x).asnumpy(), _imperative(net, x), rtol=1e-5)
    net.body[0].weight.set_data(-net.body[0].weight.data())  # the relu now changes the result
    onp.testing.assert_allclose(net(x).asnumpy(), _imperative(net, x), rtol=1e-5)


def test_deleting_a_child_attribute_removes_it():
    class Optional(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(2)
            self.scale = nn.Dense(2)

        def forward(self, x):
            y = self.fc(x)
            return self.scale(y) if hasattr(self, "scale") else y

    net = Optional()
    net.initialize()
    net.hybridize()
    x = _x()
    with_scale = net(x).asnumpy()
    del net.scale
    assert "scale" not in net._children and "scale.weight" not in net.collect_params()
    without = net(x).asnumpy()
    onp.testing.assert_allclose(without, net.fc(x).asnumpy(), rtol=1e-5)
    assert not onp.allclose(with_scale, without)


class _Counting(gluon.HybridBlock):
    """Counts its traces: Python in ``forward`` runs once per trace of a hybridized block."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, in_units=5)  # shapes known: no imperative first call
        self.traces = 0

    def forward(self, x):
        self.traces += 1
        return self.fc(x)


def test_plain_calls_and_unrelated_blocks_do_not_retrace():
    net = _Counting()
    net.initialize()
    net.hybridize()
    x = _x()
    for _ in range(3):
        net(x)
    other = nn.HybridSequential()  # another tree changes: this one is compared, found the same
    other.add(nn.Dense(2), nn.Dense(2))
    net(x)
    net.fc.cast("float32")  # a cast to the same dtype changes nothing either
    net(x)
    assert net.traces == 1
    net.hybridize(static_alloc=True)  # new options: traced again
    net(x)
    assert net.traces == 2


def test_concurrent_first_calls_trace_once():
    net = _Counting()
    net.initialize()
    net(_x())  # parameters get their shapes
    net.hybridize()
    x = _x()
    want = _imperative(net, x)
    net.traces = 0
    barrier, results, errors = threading.Barrier(6), [], []

    def call():
        barrier.wait()
        try:
            results.append(net(x).asnumpy())
        except Exception as err:  # collected: the test fails below with the message
            errors.append(err)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert net.traces == 1
    for r in results:
        onp.testing.assert_allclose(r, want, rtol=1e-6)


class _Branchy(gluon.HybridBlock):
    def forward(self, x):
        if x.sum() > 0:  # a value read while tracing
            return x * 2
        return x * 3


def test_value_read_while_tracing_warns_with_the_line(monkeypatch):
    monkeypatch.delenv("MXNET_TRACE_VALUE_READ", raising=False)
    net = _Branchy()
    net.hybridize()
    with pytest.warns(TracedValueWarning, match=r"_Branchy.forward reads the values .*bool\(\)") as caught:
        net(np.ones(3))
    assert caught[0].filename == __file__
    assert "if x.sum() > 0" in open(__file__).read().splitlines()[caught[0].lineno - 1]


def test_value_read_while_tracing_can_raise(monkeypatch):
    monkeypatch.setenv("MXNET_TRACE_VALUE_READ", "raise")
    net = _Branchy()
    net.hybridize()
    with pytest.raises(TracedValueError, match=r"test_block_retrace.py:\d+"):
        net(np.ones(3))


@pytest.mark.parametrize("mode", ["ignore", None])
def test_no_warning_when_ignored_imperative_or_printing(monkeypatch, mode):
    if mode:
        monkeypatch.setenv("MXNET_TRACE_VALUE_READ", mode)
    else:
        monkeypatch.delenv("MXNET_TRACE_VALUE_READ", raising=False)

    class Printing(gluon.HybridBlock):
        def forward(self, x):
            repr(x)  # printing while tracing reads no value into the program's logic
            return x + np.array([1.0, 2.0, 3.0]).sum().item()  # a constant's value is a constant

    with warnings.catch_warnings():
        warnings.simplefilter("error", TracedValueWarning)
        onp.testing.assert_allclose(_Branchy()(-np.ones(3)).asnumpy(), [-3, -3, -3])  # imperative
        net = Printing()
        net.hybridize()
        onp.testing.assert_allclose(net(np.zeros(3)).asnumpy(), [6, 6, 6])
        if mode == "ignore":
            hybrid = _Branchy()
            hybrid.hybridize()
            hybrid(np.ones(3))


def test_unknown_mode_is_an_error(monkeypatch):
    monkeypatch.setenv("MXNET_TRACE_VALUE_READ", "loud")
    net = _Branchy()
    net.hybridize()
    with pytest.raises(mx.base.MXNetValueError, match="MXNET_TRACE_VALUE_READ='loud'"):
        net(np.ones(3))


def test_deferred_shapes_compile_one_program():
    """The first call of a hybridized block with deferred parameter shapes runs it once
    imperatively to learn them; its hybridized children run as they are then, not as programs
    of their own (which nothing would call again): one program compiled, right answers."""
    net = nn.HybridSequential()
    for _ in range(3):
        inner = nn.HybridSequential()
        inner.add(nn.Dense(8, activation="relu"), nn.Dense(4))
        net.add(inner)
    net.initialize(mx.init.Uniform(0.5))
    net.hybridize()
    x = _x()
    with compilations() as compiles:
        got = net(x).asnumpy()
    programs = [m for m in compiles if m.startswith("Compiling jit(run)")]  # a cached op's graph program
    assert len(programs) == 1, programs
    onp.testing.assert_allclose(got, _imperative(net, x), rtol=1e-6, atol=1e-6)
    onp.testing.assert_allclose(net[1](net[0](x)).asnumpy(), _imperative(net[1], _imperative(net[0], x)),
                                rtol=1e-6, atol=1e-6)  # children called alone still work
