"""mx.name: NameManager counters per hint, Prefix, the current manager and its scoping."""
import threading

import mxjax as mx


def test_name_manager_counts_per_hint_and_keeps_given_names():
    manager = mx.name.NameManager()
    # MXNet 2.0.0b1: fc0 fc1 x
    assert [manager.get(None, "fc"), manager.get(None, "fc"), manager.get("x", "fc")] == ["fc0", "fc1", "x"]
    assert manager.get(None, "conv") == "conv0"


def test_prefix_prefixes_automatic_and_given_names():
    prefix = mx.name.Prefix("p_")
    # MXNet 2.0.0b1: Prefix.get prefixes the user's name too ('mynet_fc1' in its docstring example)
    assert prefix.get(None, "conv") == "p_conv0"
    assert prefix.get("fc1", "fullyconnected") == "p_fc1"


def test_current_follows_with_blocks():
    outer = mx.name.current()
    with mx.name.NameManager() as first:
        assert mx.name.current() is first
        with mx.name.Prefix("net_") as second:
            assert mx.name.current() is second
            assert mx.name.current().get(None, "conv") == "net_conv0"
        assert mx.name.current() is first
    assert mx.name.current() is outer


def test_scope_does_not_leak_into_other_threads():
    seen = []
    with mx.name.Prefix("main_"):
        thread = threading.Thread(target=lambda: seen.append(mx.name.current()))
        thread.start()
        thread.join()
    assert not isinstance(seen[0], mx.name.Prefix)


def test_symbols_use_the_current_manager():
    a = mx.sym.var("a")
    with mx.name.NameManager():
        assert mx.sym.FullyConnected(a, num_hidden=2).name == "fullyconnected0"
    with mx.name.Prefix("net_"):
        assert mx.sym.Activation(a, act_type="relu").name == "net_activation0"
