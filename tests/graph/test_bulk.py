"""Bulk execution of imperative ops: held back, run as one program at a read, same results as eager."""
import inspect
import subprocess
import sys
import threading
import traceback

import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

import mxjax as mx
from mxjax import _config
from mxjax import engine, gluon, np, npx
from mxjax.base import MXNetError
from mxjax.graph import bulk
from oracle import compilations


def _is_held(x):
    """Whether ``x``'s value is still held back (its op recorded, not run)."""
    return type(x._var).__name__ == "Pending"


@pytest.fixture(autouse=True, params=["native", "python"])
def recorder(request):
    """Every test runs with both recorders: the C one (graph/_record.c, where it was built) and
    graph/bulk.py's Python one, which must keep doing the same."""
    native = request.param == "native"
    if bulk.use_native(native) != native:
        pytest.skip("the C recorder was not built")
    _config.drop_compiled()  # each variant compiles (and sees each structure) from the start
    yield request.param
    bulk.use_native(True)


def test_the_recorder_in_use_is_the_one_asked_for(recorder):
    assert (bulk.record is bulk.record_python) == (recorder == "python")
    x = np.array(onp.ones(3, dtype="float32"))
    y = x + 1
    assert _is_held(y) and y.asnumpy().tolist() == [2.0, 2.0, 2.0]


@pytest.fixture
def eager():
    """Bulk execution off for one test (the oracle)."""
    previous = engine.set_imperative_bulk(False)
    yield
    engine.set_imperative_bulk(previous["enabled"])


def test_ops_are_held_until_a_read():
    a = np.array(onp.arange(6, dtype="float32").reshape(2, 3))
    b = (a * 2 + 1).sum(axis=0)
    assert _is_held(b) and b.shape == (3,) and b.dtype == onp.float32
    onp.testing.assert_allclose(b.asnumpy(), (onp.arange(6).reshape(2, 3) * 2 + 1).sum(axis=0))
    assert not _is_held(b)


def test_switching_off_runs_each_op_now(eager):
    a = np.ones((3,))
    b = a + 1
    assert not _is_held(b)
    onp.testing.assert_allclose(b.asnumpy(), [2, 2, 2])


def test_environment_switch_turns_it_off():
    code = "import mxjax as mx; b = mx.np.ones((2,)) + 1; print(type(b._var).__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "MXNET_EXEC_BULK_EXEC_IMPERATIVE": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "NoneType"


def test_engine_bulk_sets_the_segment_size_and_flushes_at_exit():
    x = np.zeros((4,))
    x.wait_to_read()
    with engine.bulk(3):
        a = x + 1
        b = a + 1
        assert _is_held(a) and _is_held(b)
        c = b + 1  # the third op fills the segment: it runs
        assert not _is_held(c) or c._var.value is not None
        d = c + 1
        assert _is_held(d)
    assert d._var is None or d._var.value is not None  # the scope's end ran it
    onp.testing.assert_allclose(d.asnumpy(), [4, 4, 4, 4])


def test_bad_settings_are_rejected():
    with pytest.raises(mx.base.MXNetValueError, match="max_nodes"):
        engine.set_imperative_bulk(max_nodes=0)
    with pytest.raises(mx.base.MXNetValueError, match="compile_after"):
        engine.set_imperative_bulk(compile_after=1.5)


def test_a_write_after_recording_does_not_change_what_was_recorded():
    a = np.array([1.0, 2.0, 3.0])
    b = a * 10
    a[:] = 5.0
    a += 1
    onp.testing.assert_allclose(b.asnumpy(), [10, 20, 30])
    onp.testing.assert_allclose(a.asnumpy(), [6, 6, 6])


def _loop_body(host):
    y = np.array(host)
    for _ in range(10):
        y = np.tanh(y * 1.5 + 0.25)
    return y.asnumpy()


def test_a_loop_body_compiles_once_and_gives_eager_results(eager):
    host = onp.linspace(-1, 1, 50).astype("float32")
    want = _loop_body(host)
    engine.set_imperative_bulk(True)
    before = npx.compile_stats()["by_kind"].get("bulk", 0)
    for _ in range(6):
        onp.testing.assert_allclose(_loop_body(host), want, rtol=1e-6)
    assert npx.compile_stats()["by_kind"].get("bulk", 0) - before <= 1


def test_recompiles_stay_bounded_under_varying_shapes():
    def run_all():
        for n in range(1, 9):
            x = np.array(onp.ones((n, 3), "float32"))
            y = (x * 2 - 1).sum(axis=1)
            onp.testing.assert_allclose(y.asnumpy(), onp.full(n, 3.0))
    before = npx.compile_stats()["by_kind"].get("bulk", 0)
    run_all()
    run_all()
    first = npx.compile_stats()["by_kind"].get("bulk", 0)
    assert first - before <= 8  # at most one program per shape
    run_all()
    assert npx.compile_stats()["by_kind"].get("bulk", 0) == first  # and none again


def test_scalars_are_part_of_the_program():
    x = np.array([1.0, 2.0])
    for scale in (0.5, 2.0, 3.0, 2.0, 0.5):
        onp.testing.assert_allclose((x * scale + 1).asnumpy(), onp.array([1.0, 2.0]) * scale + 1)
    for _ in range(3):  # -0.0 and 0.0 compare equal but give different infinities
        onp.testing.assert_array_equal((1 / (x * 0.0 + 0.0)).asnumpy(), [onp.inf, onp.inf])
        onp.testing.assert_array_equal((1 / (x * -0.0 - 0.0)).asnumpy(), [-onp.inf, -onp.inf])


def test_a_value_recorded_on_one_thread_reads_on_another():
    out = {}

    def worker():
        x = np.array([1.0, 2.0, 3.0])
        out["y"] = (x * x).sum()
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert out["y"].item() == 14.0


def test_waitall_runs_every_thread_s_ops():
    out = {}

    def worker():
        out["y"] = np.array([1.0, 2.0]) * 3
    t = threading.Thread(target=worker)
    t.start()
    t.join()
    mx.nd.waitall()
    assert out["y"]._var is None or out["y"]._var.value is not None
    onp.testing.assert_allclose(out["y"].asnumpy(), [3, 6])


def test_a_shape_error_is_raised_at_the_line_of_the_op():
    a, b = np.ones((2, 3)), np.ones((4,))
    with pytest.raises(MXNetError, match=r"\(2, 3\).*\(4,\)") as info:
        c = a + b  # noqa: F841  (this line)
    lines = [frame.lineno for frame in traceback.extract_tb(info.tb) if frame.filename == __file__]
    assert lines and lines[-1] == sys._getframe().f_lineno - 2


def test_a_failure_while_running_names_the_op_and_is_raised_at_the_read():
    a = np.array(onp.arange(4, dtype="float32"))
    b = a + 1
    c = b * 2
    a.to_jax().delete()  # the recorded input is gone by the time the segment runs
    with pytest.raises(MXNetError, match=r"add.*\(4,\) float32"):
        c.asnumpy()
    with pytest.raises(MXNetError):  # and at every later read
        b.asnumpy()


def test_imperative_ops_on_weights_before_a_donating_update():
    net = gluon.nn.Dense(3, in_units=4)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = np.ones((2, 4))
    w_before = net.weight.data().asnumpy()
    norm = (net.weight.data() ** 2).sum()  # held back, reading the weight buffer the update donates
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(2)
    assert abs(norm.item() - (w_before ** 2).sum()) < 1e-4


_OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "/": lambda a, b: a / b, "**": lambda a, b: a ** b, "<": lambda a, b: a < b,
              "==": lambda a, b: a == b, "r-": lambda a, b: b - a, "r/": lambda a, b: b / a}


@pytest.mark.parametrize("module", ["np", "nd"])
@pytest.mark.parametrize("operand", ["float", "int", "bool", "float32 scalar", "int64 scalar", "int array",
                                     "float array"])
def test_operators_give_the_eager_values_and_dtypes_for_every_operand(module, operand, recorder):
    """``x op other`` for each operator and kind of operand: the value and dtype of the same
    expression with bulk execution off; a Python float or int, or an array, is held back."""
    make = np.array if module == "np" else mx.nd.array
    x = make(onp.array([1.5, 2.0, 4.0], dtype="float32"))
    other = {"float": 2.5, "int": 2, "bool": True, "float32 scalar": onp.float32(2.5),
             "int64 scalar": onp.int64(3), "int array": make(onp.array([1, 2, 3], dtype="int32")),
             "float array": make(onp.array([0.5, 2.0, 1.0], dtype="float32"))}[operand]
    for name, fn in _OPERATORS.items():
        got = fn(x, other)
        if operand in ("float", "int", "float array"):
            assert _is_held(got), name
        previous = engine.set_imperative_bulk(False)
        try:
            want = fn(x, other)
        finally:
            engine.set_imperative_bulk(previous["enabled"])
        assert type(got) is type(want) and got.dtype == want.dtype, (name, got.dtype, want.dtype)
        onp.testing.assert_array_equal(got.asnumpy(), want.asnumpy(), err_msg=name)
    assert (-x).asnumpy().tolist() == [-1.5, -2.0, -4.0]


def test_namespace_functions_called_with_arrays_only_give_eager_results(recorder):
    """``np.tanh(x)``, ``np.multiply(x, 2)``, ``npx.relu(x)``, ``x.sum()``, ``np.sum(x, axis=0)`` (arrays
    positionally, keywords seen before: one C call with the C recorder), and the calls it leaves to
    Python (a list, ``out=``): held back, with eager's values and dtypes."""
    x = np.array(onp.array([[-1.5, 2.0], [0.5, -4.0]], dtype="float32"))
    calls = [lambda: np.tanh(x), lambda: np.multiply(x, 2), lambda: np.add(1, x), lambda: npx.relu(x),
             lambda: x.sum(), lambda: np.maximum(x, [0.0, 1.0]), lambda: np.sum(x, axis=0),
             lambda: np.sum(x, axis=0), lambda: x.sum(axis=1, keepdims=True),
             lambda: np.exp(x, out=np.zeros((2, 2)))]
    for i, call in enumerate(calls):
        got = call()
        if i < len(calls) - 1:
            assert _is_held(got), i
        previous = engine.set_imperative_bulk(False)
        try:
            want = call()
        finally:
            engine.set_imperative_bulk(previous["enabled"])
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, i
        onp.testing.assert_array_equal(got.asnumpy(), want.asnumpy(), err_msg=str(i))


def test_a_numpy_input_is_recorded_as_it_was_when_the_op_ran(recorder):
    """A NumPy array given to an op is held back with the op (not run now), as a copy: writing into
    it before the read does not reach the result; dtypes as eager (float64 NumPy input kept)."""
    x = np.array(onp.array([1.0, 2.0, 3.0], dtype="float32"))
    host = onp.array([1.5, 2.0, 3.0])
    y = x * host
    z = np.maximum(onp.array([2, 0, 4], dtype="int32"), x)
    assert _is_held(y) and _is_held(z)
    host[:] = 100.0
    assert y.dtype == onp.float64 and y.asnumpy().tolist() == [1.5, 4.0, 9.0]
    assert z.dtype == onp.float32 and z.asnumpy().tolist() == [2.0, 2.0, 4.0]
    with pytest.raises(MXNetError, match="add"):  # an array JAX does not take: the op runs now, names itself
        x + onp.array(["a", "b", "c"])
    big = onp.ones((3, 1 << 15))  # a large one runs its op now (no copy), with the same result
    w = x.reshape(3, 1) * big
    assert not _is_held(w) and w.dtype == onp.float64 and w.asnumpy()[:, :2].tolist() == [[1, 1], [2, 2], [3, 3]]


def test_eager_basic_indexing_is_held_and_compiles_once_per_window_size(recorder):
    """``x[i]`` and ``x[i:i+2]`` (a window with run-time offsets, given as a NumPy array) are recorded:
    a loop over every index gives NumPy's values and compiles one program for its segment."""
    host = onp.arange(24, dtype="float32").reshape(6, 4)
    x = np.array(host)

    def step(i):
        row, rows = x[i], x[i:i + 2]
        assert _is_held(row) and _is_held(rows)
        return (row * 2).asnumpy(), rows.sum(axis=0).asnumpy()
    counts = []
    for i in range(5):
        with compilations() as made:
            row, rows = step(i)
        counts.append(len(made))
        onp.testing.assert_array_equal(row, host[i] * 2)
        onp.testing.assert_array_equal(rows, host[i:i + 2].sum(axis=0))
    assert sum(counts[3:]) == 0 and sum(counts) > 0, counts  # (a structure compiles once it repeats)


def test_an_operator_method_reads_as_the_python_method_it_stands_for():
    """``help``, ``inspect`` and docs see the operator's Python function (whichever recorder runs it)."""
    method = np.ndarray.__mul__
    assert method.__name__ == "multiply" and list(inspect.signature(method).parameters) == ["self", "other"]
    x = np.array(onp.ones(2, dtype="float32"))
    bound = x.__mul__
    assert bound.__self__ is x and bound(3).asnumpy().tolist() == [3.0, 3.0]
    with pytest.raises(TypeError):
        x.__mul__()


_UNARY = [("tanh", lambda x: np.tanh(x), onp.tanh), ("exp", lambda x: np.exp(x * 0.1), lambda v: onp.exp(v * 0.1)),
          ("abs", lambda x: np.abs(x), onp.abs), ("neg", lambda x: -x, lambda v: -v),
          ("sum0", lambda x: x.sum(axis=0, keepdims=True) + x, lambda v: v.sum(axis=0, keepdims=True) + v),
          ("square", lambda x: x * x * 0.5, lambda v: v * v * 0.5)]
_BINARY = [("add", lambda x, y: x + y, onp.add), ("mul", lambda x, y: x * y, onp.multiply),
           ("max", lambda x, y: np.maximum(x, y), onp.maximum), ("sub", lambda x, y: x - y, onp.subtract)]


def _run(program, host, check):
    """Run ``program`` over a pool of values (two inputs first); with ``check`` compare the values
    that the program reads midway (a segment boundary) against float64 NumPy as it goes."""
    pool = [np.array(h) for h in host]
    ref = [h.astype("float64") for h in host]
    for which, i, j, read in program:
        i, j = i % len(pool), j % len(pool)
        if which < len(_UNARY):
            _, fn, oracle = _UNARY[which]
            pool.append(fn(pool[i]))
            ref.append(oracle(ref[i]))
        else:
            _, fn, oracle = _BINARY[which - len(_UNARY)]
            pool.append(fn(pool[i], pool[j]))
            ref.append(oracle(ref[i], ref[j]))
        if read and check:
            onp.testing.assert_allclose(pool[-1].asnumpy(), ref[-1], rtol=1e-4, atol=1e-4)
    return pool, ref


@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([(3,), (2, 3), (4, 2)]),
       program=st.lists(st.tuples(st.integers(0, len(_UNARY) + len(_BINARY) - 1), st.integers(0, 50),
                                  st.integers(0, 50), st.booleans()), min_size=1, max_size=12),
       seed=st.integers(0, 2 ** 16))
def test_random_op_sequences_equal_eager_op_by_op(shape, program, seed):
    """The same random program three times: run op by op (first sighting), then compiled; every
    value equals NumPy's, and the last run equals a run with bulk execution off bit for bit."""
    rng = onp.random.default_rng(seed)
    host = [rng.standard_normal(shape).astype("float32") for _ in range(2)]
    for _ in range(3):
        pool, ref = _run(program, host, check=True)
        for got, want in zip(pool, ref):
            onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4)
    previous = engine.set_imperative_bulk(False)
    try:
        eager_pool, _ = _run(program, host, check=False)
    finally:
        engine.set_imperative_bulk(previous["enabled"])
    pool, _ = _run(program, host, check=False)
    for got, want in zip(pool, eager_pool):
        onp.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=2e-6, atol=1e-6)
