"""Engine semantics: ordering, async ops, operators, deletion, bulk, failures (both engines)."""
from __future__ import annotations

import threading
import time

import pytest

pytestmark = pytest.mark.timeout(60)


def _writer(log, tag, delay=0.0):
    def fn():
        if delay:
            time.sleep(delay)
        log.append(tag)
    return fn


# ----------------------------------------------------------------------------- ordering

def test_read_after_write(eng):
    a, b = eng.new_variable("a"), eng.new_variable("b")
    box = {}
    eng.push_sync(lambda: (time.sleep(0.05), box.__setitem__("a", 1)), mutate_vars=[a])
    eng.push_sync(lambda: box.__setitem__("b", box.get("a", 0) + 1), const_vars=[a],
                  mutate_vars=[b])
    eng.wait_for_variable(b)
    assert box == {"a": 1, "b": 2}
    assert a.pending == 0 and b.pending == 0


def test_write_after_read(eng):
    a, out = eng.new_variable(), eng.new_variable()
    state = {"a": 1}
    seen = []
    eng.push_sync(lambda: (time.sleep(0.05), seen.append(state["a"])), const_vars=[a],
                  mutate_vars=[out])
    eng.push_sync(lambda: state.__setitem__("a", 2), mutate_vars=[a])
    eng.wait_for_variable(a)
    eng.wait_for_variable(out)
    assert seen == [1] and state["a"] == 2


def test_write_after_write(eng):
    a = eng.new_variable()
    log = []
    for i in range(50):
        eng.push_sync(_writer(log, i, 0.002 if i % 10 == 0 else 0.0), mutate_vars=[a])
    eng.wait_for_variable(a)
    assert log == list(range(50))
    assert a.version == 50


def test_wait_for_variable_waits_for_readers(eng):
    a, o1, o2 = eng.new_variable(), eng.new_variable(), eng.new_variable()
    done = []
    eng.push_sync(lambda: (time.sleep(0.1), done.append(1)), const_vars=[a], mutate_vars=[o1])
    eng.push_sync(lambda: (time.sleep(0.1), done.append(2)), const_vars=[a], mutate_vars=[o2])
    eng.wait_for_variable(a)     # waits for every op using a, readers included
    assert sorted(done) == [1, 2]


def test_concurrent_readers_run_concurrently(threaded_only):
    eng = threaded_only
    a, o1, o2 = eng.new_variable(), eng.new_variable(), eng.new_variable()
    barrier = threading.Barrier(2, timeout=5)
    # Both readers of `a` must be inside their fn at the same time to pass the barrier.
    eng.push_sync(barrier.wait, const_vars=[a], mutate_vars=[o1])
    eng.push_sync(barrier.wait, const_vars=[a], mutate_vars=[o2])
    eng.wait_for_all()


def test_independent_sleeps_overlap(threaded_only):
    eng = threaded_only
    a, b = eng.new_variable(), eng.new_variable()
    t0 = time.perf_counter()
    eng.push_sync(lambda: time.sleep(0.2), mutate_vars=[a])
    eng.push_sync(lambda: time.sleep(0.2), mutate_vars=[b])
    eng.wait_for_all()
    assert time.perf_counter() - t0 < 0.35


def test_pending_attribute(eng):
    a = eng.new_variable()
    gate = threading.Event()
    if eng.engine_type() == "ThreadedEngine":
        eng.push_sync(lambda: gate.wait(5), mutate_vars=[a])
        assert a.pending == 1
        eng.push_sync(lambda: None, const_vars=[a])
        assert a.pending == 2
        gate.set()
    else:
        eng.push_sync(lambda: None, mutate_vars=[a])
    eng.wait_for_variable(a)
    assert a.pending == 0 and a.exception is None


def test_priority_order(eng):
    if eng.engine_type() == "ThreadedEngine":
        eng.set_engine("ThreadedEngine", num_workers=1)
    gate = threading.Event()
    blocker, log = eng.new_variable(), []
    eng.push_sync(lambda: gate.wait(5), mutate_vars=[blocker])
    if eng.engine_type() == "ThreadedEngine":
        time.sleep(0.05)      # the only worker is now blocked: later ops queue as ready
    for i, prio in enumerate([0, 5, -3, 5, 0, 9]):
        eng.push_sync(_writer(log, (prio, i)), mutate_vars=[eng.new_variable()], priority=prio)
    gate.set()
    eng.wait_for_all()
    if eng.engine_type() == "ThreadedEngine":
        assert log == [(9, 5), (5, 1), (5, 3), (0, 0), (0, 4), (-3, 2)]
    else:  # inline: push order
        assert [i for _, i in log] == list(range(6))


def test_duplicate_and_overlapping_vars(eng):
    a, b = eng.new_variable(), eng.new_variable()
    log = []
    eng.push_sync(_writer(log, 1), const_vars=[a, a, b], mutate_vars=[b, b])
    eng.push_sync(_writer(log, 2), const_vars=[b], mutate_vars=[a])
    eng.wait_for_all()
    assert log == [1, 2]
    with pytest.raises(TypeError):
        eng.push_sync(lambda: None, mutate_vars=[object()])


def test_nested_push(eng):
    a, b = eng.new_variable(), eng.new_variable()
    log = []

    def outer():
        log.append("outer")
        eng.push_sync(_writer(log, "inner"), const_vars=[a], mutate_vars=[b])

    eng.push_sync(outer, mutate_vars=[a])
    eng.wait_for_all()
    eng.wait_for_variable(b)
    assert log == ["outer", "inner"]


def test_multithreaded_pushes_to_one_var(eng):
    a = eng.new_variable()
    counter = {"n": 0}

    def inc():
        n = counter["n"]
        time.sleep(0)           # invite a race if writers were not exclusive
        counter["n"] = n + 1

    def pusher():
        for _ in range(200):
            eng.push_sync(inc, mutate_vars=[a])

    threads = [threading.Thread(target=pusher) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    eng.wait_for_variable(a)
    assert counter["n"] == 800


# ----------------------------------------------------------------------------- async ops

def test_push_async_completed_from_timer(eng):
    a, b = eng.new_variable(), eng.new_variable()
    log = []

    def fn(on_complete):
        def later():
            log.append("async")
            on_complete()
        threading.Timer(0.05, later).start()

    eng.push_async(fn, mutate_vars=[a])
    eng.push_sync(_writer(log, "after"), const_vars=[a], mutate_vars=[b])
    eng.wait_for_variable(b)
    assert log == ["async", "after"]


def test_push_async_inline_completion_and_double_call(eng):
    a = eng.new_variable()
    errors = []

    def fn(on_complete):
        on_complete()
        try:
            on_complete()
        except eng.EngineError as e:
            errors.append(e)

    eng.push_async(fn, mutate_vars=[a])
    eng.wait_for_variable(a)
    assert len(errors) == 1


# ----------------------------------------------------------------------------- operators

def test_operator_push_and_delete(eng):
    a = eng.new_variable()
    log = []
    op = eng.new_operator(lambda: log.append(len(log)), [], [a], name="counter")
    for _ in range(5):
        eng.push(op)
    eng.delete_operator(op)
    eng.wait_for_variable(a)
    assert log == [0, 1, 2, 3, 4]
    with pytest.raises(eng.EngineError, match="deleted"):
        eng.push(op)


def test_async_operator(eng):
    a = eng.new_variable()
    log = []

    def fn(on_complete):
        threading.Timer(0.01, lambda: (log.append("x"), on_complete())).start()

    op = eng.new_operator(fn, [], [a], is_async=True)
    eng.push(op)
    eng.push(op)
    eng.wait_for_variable(a)
    assert log == ["x", "x"]


# ----------------------------------------------------------------------------- deletion

def test_delete_variable(eng):
    a, b = eng.new_variable(), eng.new_variable()
    log = []
    eng.push_sync(_writer(log, "w", 0.05), mutate_vars=[a])
    eng.delete_variable(a, lambda: log.append("deleted"))
    assert a.deleted
    with pytest.raises(eng.EngineError, match="deleted"):
        eng.push_sync(lambda: None, const_vars=[a], mutate_vars=[b])
    with pytest.raises(eng.EngineError, match="deleted"):
        eng.push_sync(lambda: None, mutate_vars=[a])
    with pytest.raises(eng.EngineError):
        eng.delete_variable(a)
    eng.wait_for_variable(a)    # fine after deletion
    assert log == ["w", "deleted"]
    eng.wait_for_all()


# ----------------------------------------------------------------------------- bulk

def test_bulk_matches_serial(eng):
    vs = [eng.new_variable() for _ in range(4)]
    state = [0] * 4
    log = []

    def op(i, j):
        def fn():
            state[j] = state[i] * 3 + j + 1
            log.append((i, j))
        return fn

    with eng.bulk(8):
        for k in range(50):
            i, j = k % 4, (k * 3 + 1) % 4
            eng.push_sync(op(i, j), const_vars=[vs[i]], mutate_vars=[vs[j]])
        if eng.engine_type() == "ThreadedEngine":
            assert any(v.pending for v in vs)   # buffered ops count as pending
        eng.wait_for_variable(vs[0])             # waits flush the buffer
    eng.wait_for_all()
    expect, exp_log = [0] * 4, []
    for k in range(50):
        i, j = k % 4, (k * 3 + 1) % 4
        expect[j] = expect[i] * 3 + j + 1
        exp_log.append((i, j))
    assert state == expect and log == exp_log
    assert all(v.pending == 0 for v in vs)


def test_set_bulk_size_returns_previous(eng):
    assert eng.set_bulk_size(4) == 0
    a = eng.new_variable()
    log = []
    eng.push_sync(_writer(log, 1), mutate_vars=[a])
    assert eng.set_bulk_size(0) == 4     # flushes
    eng.wait_for_variable(a)
    assert log == [1]


def test_bulk_failure_inside_batch(eng):
    a, b, c = eng.new_variable(), eng.new_variable(), eng.new_variable()
    err = KeyError("in bulk")
    ran = []

    def bad():
        raise err

    with eng.bulk(16):
        eng.push_sync(bad, mutate_vars=[a])
        eng.push_sync(lambda: ran.append("b"), const_vars=[a], mutate_vars=[b])
        eng.push_sync(lambda: ran.append("c"), mutate_vars=[c])
    with pytest.raises(KeyError) as info:
        eng.wait_for_variable(b)
    assert info.value is err
    eng.wait_for_variable(c)
    assert ran == ["c"]
    eng.wait_for_all()  # reported once (at b, which inherited it from a): cleared everywhere


# ----------------------------------------------------------------------------- failures

class CustomError(Exception):
    pass


def test_exception_stored_not_raised_at_push(eng):
    a = eng.new_variable()
    err = CustomError("original message")

    def bad():
        raise err

    eng.push_sync(bad, mutate_vars=[a])     # must not raise here, even inline
    with pytest.raises(CustomError, match="original message") as info:
        eng.wait_for_variable(a)
    assert info.value is err
    eng.wait_for_variable(a)                # reported once: cleared from a
    assert a.exception is None


def test_exception_chain_of_three(eng):
    a, b, c, d = (eng.new_variable(n) for n in "abcd")
    err = ValueError("chain")
    ran = []

    def bad():
        raise err

    eng.push_sync(bad, mutate_vars=[a])
    eng.push_sync(lambda: ran.append("b"), const_vars=[a], mutate_vars=[b])
    eng.push_sync(lambda: ran.append("c"), const_vars=[b], mutate_vars=[c])
    eng.push_sync(lambda: ran.append("d"), mutate_vars=[d])     # unrelated
    with pytest.raises(ValueError, match="chain") as info:
        eng.wait_for_variable(c)
    assert info.value is err
    eng.wait_for_variable(d)
    assert ran == ["d"]
    # reported once (MXNet 1.9.1/2.0): cleared from a and b too, which hold the same failure
    assert b.exception is None and a.exception is None and c.exception is None
    eng.wait_for_all()
    for v in (a, b, c, d):
        assert v.exception is None
        eng.wait_for_variable(v)
    # the engine keeps working on the formerly failed vars
    eng.push_sync(lambda: ran.append("again"), const_vars=[a], mutate_vars=[c])
    eng.wait_for_variable(c)
    assert ran[-1] == "again"


def test_write_to_failed_var_is_skipped(eng):
    a = eng.new_variable()
    err = RuntimeError("first")
    ran = []

    def bad():
        raise err

    eng.push_sync(bad, mutate_vars=[a])
    eng.push_sync(lambda: ran.append(1), mutate_vars=[a])
    with pytest.raises(RuntimeError, match="first"):
        eng.wait_for_variable(a)
    assert ran == []
    eng.push_sync(lambda: ran.append(2), mutate_vars=[a])
    eng.wait_for_variable(a)
    assert ran == [2]


def test_exception_across_push_async(eng):
    a, b, c = eng.new_variable(), eng.new_variable(), eng.new_variable()
    err = OSError(5, "async failure")

    def fn(on_complete):
        threading.Timer(0.02, on_complete, args=(err,)).start()

    eng.push_async(fn, mutate_vars=[a])
    ran = []

    def after(on_complete):
        ran.append(1)
        on_complete()

    eng.push_async(after, const_vars=[a], mutate_vars=[b])
    with pytest.raises(OSError) as info:
        eng.wait_for_variable(b)
    assert info.value is err and ran == []

    def raising(on_complete):
        raise ZeroDivisionError("sync raise in async fn")

    eng.push_async(raising, mutate_vars=[c])
    with pytest.raises(ZeroDivisionError, match="sync raise"):
        eng.wait_for_variable(c)
    eng.wait_for_all()  # the OSError was reported (at b) and is cleared from a as well


def test_exception_after_delete_variable(eng):
    a = eng.new_variable()
    err = IndexError("before delete")

    def bad():
        raise err

    eng.push_sync(bad, mutate_vars=[a])
    eng.delete_variable(a)
    with pytest.raises(IndexError) as info:
        eng.wait_for_variable(a)
    assert info.value is err
    eng.wait_for_variable(a)
    eng.wait_for_all()


def test_wait_for_all_raises_first_then_clears(eng):
    a, b = eng.new_variable(), eng.new_variable()
    first, second = ValueError("first"), TypeError("second")

    def raiser(e):
        def fn():
            raise e
        return fn

    eng.push_sync(raiser(first), mutate_vars=[a])
    eng.push_sync(raiser(second), mutate_vars=[b])
    with pytest.raises(ValueError, match="first") as info:
        eng.wait_for_all()
    assert info.value is first
    assert a.exception is None and b.exception is None
    eng.wait_for_all()
    eng.wait_for_variable(b)


def test_global_exception_without_mutate_vars(eng):
    a = eng.new_variable()
    err = AssertionError("no outputs")

    def bad():
        raise err

    eng.push_sync(bad, const_vars=[a])
    eng.wait_for_variable(a)                 # reads do not carry failures
    with pytest.raises(AssertionError) as info:
        eng.wait_for_all()
    assert info.value is err
    eng.wait_for_all()


def test_unrelated_vars_unaffected(eng):
    bad_var, good = eng.new_variable(), eng.new_variable()
    log = []

    def bad():
        raise ValueError("x")

    eng.push_sync(bad, mutate_vars=[bad_var])
    for i in range(20):
        eng.push_sync(_writer(log, i), mutate_vars=[good])
    eng.wait_for_variable(good)
    assert log == list(range(20)) and good.exception is None
    with pytest.raises(ValueError):
        eng.wait_for_variable(bad_var)


def test_read_inherits_onto_outputs(eng):
    a, x, y = eng.new_variable(), eng.new_variable(), eng.new_variable()
    err = ValueError("read me")

    def bad():
        raise err

    eng.push_sync(bad, mutate_vars=[a])
    eng.push_sync(lambda: None, const_vars=[a], mutate_vars=[x, y])
    with pytest.raises(ValueError) as info:
        eng.wait_for_variable(x)
    assert info.value is err
    for v in (y, a):  # the same failure: reported once, then cleared everywhere (as in MXNet)
        eng.wait_for_variable(v)
    eng.wait_for_all()


# ----------------------------------------------------------------------------- selection

def test_engine_type_from_env(eng, monkeypatch):
    kind = eng.engine_type()
    env_name = {"NaiveEngine": "NaiveEngine", "ThreadedEngine": "ThreadedEnginePerDevice"}[kind]
    monkeypatch.setenv("MXNET_ENGINE_TYPE", env_name)
    monkeypatch.setenv("MXNET_CPU_WORKER_NTHREADS", "3")
    monkeypatch.setattr(eng, "_engine", None)      # force "first use"
    created = eng.get_engine()
    try:
        assert eng.engine_type() == kind
        if kind == "ThreadedEngine":
            assert created.num_workers == 3
    finally:
        created.shutdown()


def test_engine_names(eng):
    for name, kind in [("ThreadedEnginePooled", "ThreadedEngine"),
                       ("ThreadedEngine", "ThreadedEngine"), ("NaiveEngine", "NaiveEngine")]:
        assert eng.set_engine(name).kind == kind
    with pytest.raises(ValueError, match="unknown engine"):
        eng.set_engine("GPUEngine")


def test_set_engine_drains_old_engine(eng):
    a = eng.new_variable()
    log = []
    eng.push_sync(_writer(log, "slow", 0.1), mutate_vars=[a])
    eng.set_engine("NaiveEngine")
    assert log == ["slow"] and a.pending == 0


def test_shutdown_joins_the_workers():
    # a daemon worker still unwinding when the interpreter finalizes can abort the process at exit
    from mxjax.engine.threaded import ThreadedEngine
    engine = ThreadedEngine(num_workers=2)
    done = []
    engine.push_sync(lambda: (time.sleep(0.05), done.append(1)), mutate_vars=[engine.new_variable()])
    engine.shutdown(wait=True, timeout=10)
    assert done == [1] and not any(t.is_alive() for t in engine._threads)
