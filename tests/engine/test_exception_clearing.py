"""A failure stored by an engine op is raised once, then cleared (MXNet 1.9.1 and 2.0 alike).

Expected sequences were checked in both reference builds with an asynchronously
failing op (``mx.nd.random.normal(scale=-1)``): once a wait point (``wait_to_read``,
``asnumpy``, ``waitall``) has raised an exception, no later wait raises it again,
including waits on arrays that inherited it by reading the failed array.
"""
from __future__ import annotations

import pytest

import mxjax as mx
from mxjax.base import MXNetError


class _Boom(MXNetError):
    """The failure the test op raises."""


def _failed_array(eng, message="boom"):
    """An array whose pending engine write fails (as MXNet's asynchronous op errors do)."""
    x = mx.nd.zeros((2,))

    def fail():
        raise _Boom(message)
    eng.push_sync(fail, mutate_vars=[x.engine_var], name="failing_op")
    return x


def _raises(fn):
    try:
        fn()
    except _Boom as err:
        return str(err)
    return None


def test_wait_to_read_then_waitall_and_asnumpy(eng):
    a = _failed_array(eng)
    assert _raises(a.wait_to_read) == "boom"
    assert _raises(mx.nd.waitall) is None
    assert _raises(a.asnumpy) is None


def test_asnumpy_raises_once(eng):
    a = _failed_array(eng)
    assert _raises(a.asnumpy) == "boom"
    assert _raises(a.asnumpy) is None
    assert _raises(mx.nd.waitall) is None


def test_waitall_raises_once(eng):
    a = _failed_array(eng)
    assert _raises(mx.nd.waitall) == "boom"
    assert _raises(mx.nd.waitall) is None
    assert _raises(a.asnumpy) is None


def test_inherited_failure_cleared_from_its_source(eng):
    a = _failed_array(eng)
    b = a + 1  # reads the failed array: inherits its failure
    assert _raises(b.wait_to_read) == "boom"
    assert _raises(a.wait_to_read) is None
    assert _raises(mx.nd.waitall) is None


def test_source_failure_cleared_from_its_readers(eng):
    a = _failed_array(eng)
    b = a * 2
    c = b + 1
    assert _raises(a.wait_to_read) == "boom"
    assert _raises(b.wait_to_read) is None
    assert _raises(c.asnumpy) is None
    assert _raises(mx.nd.waitall) is None


def test_distinct_failures_each_raised_once(eng):
    """MXNet 2.0: a second, independent failure is still reported (by the next waitall)."""
    a = _failed_array(eng, "first")
    c = _failed_array(eng, "second")
    assert _raises(a.wait_to_read) == "first"
    assert _raises(mx.nd.waitall) == "second"
    assert _raises(c.asnumpy) is None
    assert _raises(mx.nd.waitall) is None


def test_cleared_array_is_usable_again(eng):
    a = _failed_array(eng)
    with pytest.raises(_Boom):
        a.wait_to_read()
    out = (a + 1).asnumpy()  # the buffer keeps its old value: zeros
    assert out.tolist() == [1.0, 1.0]


def test_reader_of_a_cleared_failure_can_be_read(eng):
    """The reader's op never ran; once the failure is reported its array reads as zeros
    (MXNet leaves that memory uninitialised) and later ops on it run."""
    a = _failed_array(eng)
    b = a + 1
    c = b * 3
    assert _raises(a.wait_to_read) == "boom"
    assert _raises(c.wait_to_read) is None
    assert b.asnumpy().tolist() == [0.0, 0.0]
    assert (b + 2).asnumpy().tolist() == [2.0, 2.0]
