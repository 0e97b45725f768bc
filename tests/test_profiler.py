"""mx.profiler: the Chrome trace lists what ran, dumps() aggregates it, the object API records its events.

The oracle for the statistics is the trace itself (counts and durations of its events) and
plain Python arithmetic; for durations of user ranges, ``time.sleep`` gives a lower bound.  Op
names are the ones MXNet 2.0's own profile shows for the same calls (``_npi_add``, ``_npi_exp``).
"""
from __future__ import annotations

import json
import threading
import time

import numpy as onp
import pytest

import mxjax as mx
from mxjax import profiler
from mxjax.base import MXNetError
from mxjax.gluon import nn


@pytest.fixture(autouse=True)
def fresh_profiler(tmp_path, monkeypatch):
    """Each test starts with a stopped profiler, no events, and a working folder of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(profiler, "_state", profiler._State())
    yield
    profiler.set_state("stop")
    profiler.resume()


def _run(tmp_path, body, **config):
    """Profile ``body()`` and return the trace's events (metadata left out)."""
    path = tmp_path / "trace.json"
    profiler.set_config(filename=str(path), continuous_dump=False, **config)
    profiler.set_state("run")
    body()
    profiler.set_state("stop")
    trace = json.loads(path.read_text())
    return [e for e in trace["traceEvents"] if e["ph"] != "M"]


def _complete_names(path):
    return [e["name"] for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]


def _names(events, category):
    return [e["name"] for e in events if e["cat"] == category]


def test_trace_is_chrome_format_and_lists_the_ops(tmp_path):
    a, b = mx.np.ones((100,)), mx.np.arange(100.0)

    def body():
        for _ in range(5):
            mx.np.add(a, b)
        mx.np.exp(a).wait_to_read()
        (a * b).sum()
    events = _run(tmp_path, body)
    complete = [e for e in events if e["ph"] == "X"]
    assert complete and len(complete) == len(events)
    for e in complete:
        assert {"name", "cat", "ph", "ts", "dur", "pid", "tid"} <= set(e)
        assert e["dur"] >= 0 and e["ts"] >= 0
    names = _names(events, "operator")
    assert names.count("_npi_add") == 5
    assert names.count("_npi_exp") == 1 and names.count("_npi_multiply") == 1 and names.count("_np_sum") == 1


def test_dumps_aggregates_counts_and_times(tmp_path):
    a = mx.np.ones((100,))

    def body():
        for _ in range(5):
            mx.np.add(a, a)
        for _ in range(2):
            mx.np.sqrt(a)
    events = _run(tmp_path, body, aggregate_stats=True)
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Unit"] == {"Time": "ms"}
    add = stats["Time"]["operator"]["_npi_add"]
    durations = [e["dur"] / 1000 for e in events if e["name"] == "_npi_add"]  # µs in the trace, ms here
    assert add["Count"] == 5 and stats["Time"]["operator"]["_npi_sqrt"]["Count"] == 2
    onp.testing.assert_allclose(add["Total"], sum(durations), rtol=1e-9)
    onp.testing.assert_allclose([add["Min"], add["Max"], add["Avg"]],
                                [min(durations), max(durations), sum(durations) / 5], rtol=1e-9)

    table = profiler.dumps(sort_by="count", ascending=True)
    assert "Profile Statistics:" in table and "Total Count" in table and "Avg Time (ms)" in table
    rows = [line.split() for line in table.splitlines() if line.startswith("_npi_")]
    assert [(r[0], int(r[1])) for r in rows] == [("_npi_sqrt", 2), ("_npi_add", 5)]  # ascending by count
    rows = [line.split()[0] for line in profiler.dumps(sort_by="count").splitlines() if line.startswith("_npi_")]
    assert rows == ["_npi_add", "_npi_sqrt"]

    assert "_npi_add" in profiler.dumps(reset=True)
    assert "_npi_add" not in profiler.dumps()


def test_dumps_is_empty_without_aggregate_stats(tmp_path):
    _run(tmp_path, lambda: mx.np.ones((3,)))
    assert profiler.dumps() == ""
    # as in MXNet, each set_config starts from the defaults: aggregate_stats goes back to False
    profiler.set_config(aggregate_stats=True)
    profiler.set_config(filename="other.json")
    _run(tmp_path, lambda: mx.np.ones((3,)))
    assert profiler.dumps() == ""


def test_pause_resume_excludes_ops(tmp_path):
    a = mx.np.ones((4,))

    def body():
        mx.np.exp(a)
        profiler.pause()
        for _ in range(3):
            mx.np.sin(a)
        profiler.resume()
        mx.np.cos(a)
    names = _names(_run(tmp_path, body), "operator")
    assert names == ["_npi_exp", "_npi_cos"]


def test_ops_after_stop_are_not_recorded(tmp_path):
    a = mx.np.ones((4,))
    events = _run(tmp_path, lambda: mx.np.exp(a))
    mx.np.sin(a)
    profiler.dump(finished=False)
    trace = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    assert _names(events, "operator") == ["_npi_exp"]
    assert [e["name"] for e in trace if e["ph"] == "X"] == ["_npi_exp"]


def test_hybridized_block_is_one_event(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = mx.np.ones((3, 5))
    expected = net(x).asnumpy()  # traced and compiled before profiling

    def body():
        for _ in range(3):
            onp.testing.assert_allclose(net(x).asnumpy(), expected, rtol=1e-6)
    events = _run(tmp_path, body)
    assert _names(events, "symbolic") == ["HybridSequential"] * 3
    assert _names(events, "operator") == []  # the ops inside run in the compiled program

    events = _run(tmp_path, body)  # a second run adds to the same trace
    assert _names(events, "symbolic") == ["HybridSequential"] * 6
    profiler.dump()  # finished: the next run starts a new trace
    events = _run(tmp_path, body, profile_symbolic=False)
    assert _names(events, "symbolic") == []


def test_imperative_switch_and_first_hybridized_call(tmp_path):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    net.hybridize()
    x = mx.np.ones((4, 3))
    events = _run(tmp_path, lambda: (net(x), mx.np.exp(x)), profile_imperative=False)
    # tracing the first call builds a graph without running ops: only the block's event appears
    assert _names(events, "symbolic") == ["Dense"]
    assert _names(events, "operator") == []


def test_executor_forward_is_one_event(tmp_path):
    data = mx.sym.var("data")
    out = mx.sym.exp(data) * 2
    executor = out.bind(mx.cpu(), {"data": mx.nd.array([0.0, 1.0])})
    result = []
    events = _run(tmp_path, lambda: result.append(executor.forward()[0].asnumpy()))
    onp.testing.assert_allclose(result[0], 2 * onp.exp([0.0, 1.0]), rtol=1e-6)
    assert _names(events, "symbolic") == ["Executor.forward"]


def test_autograd_ops_are_recorded_graph_building_is_not(tmp_path):
    x = mx.np.array([1.0, 2.0])
    x.attach_grad()

    def body():
        with mx.autograd.record():
            y = mx.np.tanh(x)
        y.backward()
        with mx._deferred_compute.context():
            mx.np.log(x)  # only recorded into a graph: nothing runs
        mx.sym.log(mx.sym.var("a"))
    names = _names(_run(tmp_path, body), "operator")
    assert names.count("_npi_tanh") == 1 and "_npi_log" not in names
    onp.testing.assert_allclose(x.grad.asnumpy(), 1 - onp.tanh([1.0, 2.0]) ** 2, rtol=1e-6)


def test_engine_ops_are_recorded_with_their_run_time(tmp_path):
    if mx.engine.engine_type() != "ThreadedEngine":
        pytest.skip("needs the threaded engine: ops must wait behind a pending host write")
    x = mx.np.zeros((3,))
    done, gate = threading.Event(), threading.Event()

    def slow_write():
        gate.wait(30)  # still pending when x + 1 is dispatched, however loaded the machine
        time.sleep(0.03)
        x._set_data(mx.np.array([1.0, 2.0, 3.0])._data)

    def host_async(on_complete):
        time.sleep(0.02)
        on_complete()

    def body():
        mx.engine.push_sync(slow_write, mutate_vars=[x.engine_var], name="slow_write")
        y = x + 1  # ordered after the write: runs on the engine
        gate.set()
        onp.testing.assert_array_equal(y.asnumpy(), [2.0, 3.0, 4.0])
        mx.engine.push_async(host_async, name="host_async")
        op = mx.engine.new_operator(done.set, name="reusable")
        mx.engine.push(op)
        mx.engine.wait_for_all()
    events = _run(tmp_path, body)
    by_name = {e["name"]: e for e in events if e["cat"] == "engine"}
    assert set(by_name) == {"slow_write", "add", "host_async", "reusable"} and done.is_set()
    assert by_name["slow_write"]["dur"] >= 30000 and by_name["host_async"]["dur"] >= 20000  # µs
    assert _names(events, "operator") == ["_npi_add"]  # the dispatch; its run is the engine event


def test_task_frame_event_ranges(tmp_path):
    domain = profiler.Domain("mydomain")
    task, frame = domain.new_task("mytask"), profiler.Frame(domain, "myframe")
    event = profiler.Event("myevent")

    def body():
        for r in (task, frame, event):
            r.start()
            time.sleep(0.01)
            r.stop()
        event.stop()  # without start: nothing
    events = _run(tmp_path, body, aggregate_stats=True)
    got = {(e["name"], e["cat"], e["ph"]) for e in events}
    assert got == {("mytask", "mydomain", "X"), ("myframe", "mydomain,frame", "X"), ("myevent", "event", "X")}
    assert all(e["dur"] >= 10000 for e in events)
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert stats["mydomain"]["mytask"]["Count"] == 1 and stats["event"]["myevent"]["Min"] >= 10
    assert str(domain) == "mydomain" and str(task) == "mytask" and str(event) == "myevent"


def test_counter_and_marker_events(tmp_path):
    domain = profiler.Domain("d")
    counter = domain.new_counter("c", 3)  # before running: its value counts, no event

    def body():
        nonlocal counter
        counter += 2
        counter -= 1
        counter.increment()
        counter.decrement(4)
        counter.set_value(10)
        marker = domain.new_marker("m")
        for where in ("global", "process", "thread"):
            marker.mark(where)
        profiler.Marker(domain, "default").mark()
    events = _run(tmp_path, body, aggregate_stats=True)
    values = [e["args"]["c"] for e in events if e["ph"] == "C"]
    assert values == [5, 4, 5, 1, 10]
    assert all(e["cat"] == "d" for e in events if e["ph"] == "C")
    marks = [(e["name"], e["s"], e["cat"]) for e in events if e["ph"] == "i"]
    assert marks == [("m", "g", "d,instant_marker"), ("m", "p", "d,instant_marker"),
                     ("m", "t", "d,instant_marker"), ("default", "p", "d,instant_marker")]
    summary = json.loads(profiler.dumps(format="json"))["Counter"]["d"]["c"]
    assert summary == {"Count": 5, "Min": 1, "Max": 10, "Avg": sum(values) / 5}
    assert "d,counter" in profiler.dumps()


def test_scope_names_nest_and_tag_ops(tmp_path):
    a = mx.np.ones((2,))
    seen = []

    def body():
        with profiler.scope("outer") as outer:
            with profiler.scope("inner:") as inner:
                seen.extend([outer, inner])
                mx.np.exp(a)
            with profiler.scope("alone", append_mode=False) as alone:
                seen.append(alone)
        mx.np.sin(a)
    events = _run(tmp_path, body)
    assert seen == ["outer:", "outer:inner:", "alone:"]
    tags = {e["name"]: e.get("args", {}).get("scope") for e in events}
    assert tags == {"_npi_exp": "outer:inner:", "_npi_sin": None}


def test_dump_finished_and_not(tmp_path):
    path = tmp_path / "p.json"
    a = mx.np.ones((2,))
    profiler.set_config(filename=str(path), continuous_dump=False)
    with pytest.raises(MXNetError, match="has not run"):
        profiler.dump()
    profiler.set_state("run")
    mx.np.exp(a)
    profiler.dump(finished=False)  # still running, events kept
    mx.np.sin(a)
    profiler.dump()  # stops and drops the events
    assert _complete_names(path) == ["_npi_exp", "_npi_sin"]
    mx.np.cos(a)
    with pytest.raises(MXNetError, match="set_state"):
        profiler.dump()
    profiler.set_state("run")
    mx.np.tan(a)
    profiler.set_state("stop")
    assert _complete_names(path) == ["_npi_tan"]


def test_continuous_dump_writes_while_running(tmp_path):
    path = tmp_path / "live.json"
    profiler.set_config(filename=str(path), dump_period=0.02)  # continuous_dump defaults to True
    profiler.set_state("run")
    mx.np.exp(mx.np.ones((2,)))
    names, deadline = [], time.monotonic() + 20
    while "_npi_exp" not in names and time.monotonic() < deadline:  # no stop(), no dump(): the dumper
        time.sleep(0.01)
        if path.exists():  # replaces the file whole, so every read is valid JSON
            names = [e["name"] for e in json.loads(path.read_text())["traceEvents"]]
    assert "_npi_exp" in names


def test_bad_config_keys_and_states_raise(monkeypatch):
    monkeypatch.setattr(profiler, "profiler_kvstore_handle", None)  # no kvstore created (others' tests make them)
    with pytest.raises(MXNetError, match="unknown argument 'bogus'"):
        profiler.set_config(bogus=1)
    with pytest.raises(ValueError, match="profile_all expects a boolean"):
        profiler.set_config(profile_all="maybe")
    with pytest.raises(ValueError, match="dump_period"):
        profiler.set_config(dump_period="x")
    with pytest.raises(KeyError):
        profiler.set_config(profile_process="foo")
    with pytest.raises(MXNetError, match="server"):
        profiler.set_config(profile_process="server")
    profiler.set_config(profile_all=1, profile_imperative="false", filename=3)  # MXNet's accepted spellings
    with pytest.raises(KeyError, match="'run' or 'stop'"):
        profiler.set_state("bogus")
    with pytest.raises(ValueError, match="'run' or 'stop'"):
        profiler.set_state("bogus")
    with pytest.raises(KeyError):
        profiler.pause("bogus")
    with pytest.raises(ValueError, match="format"):
        profiler.dumps(format="xml")
    with pytest.raises(ValueError, match="sort_by"):
        profiler.dumps(sort_by="name")
    with pytest.raises(ValueError, match="reset"):
        profiler.dumps(reset=None)
    with pytest.raises(MXNetError, match="scope must be one of"):
        profiler.Marker(profiler.Domain("d"), "m").mark("bogus")
    with pytest.raises(TypeError, match="Task: domain must be a profiler.Domain"):
        profiler.Task("notdomain", "t")
    with pytest.raises(ValueError, match="integer"):
        profiler.Counter(profiler.Domain("d"), "c", "abc")


def test_deprecated_aliases(tmp_path):
    path = tmp_path / "old.json"
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_config(mode="all", filename=str(path))
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_state("run")
    mx.np.exp(mx.np.ones((2,)))
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.dump_profile()
    assert "_npi_exp" in [e["name"] for e in json.loads(path.read_text())["traceEvents"]]
    with pytest.warns(UserWarning), pytest.raises(MXNetError, match="profile_bogus"):
        profiler.profiler_set_config(mode="bogus")
