"""Names MXNet's modules carry from mx.base / mx.symbol, and the small module aliases (same objects as MXNet's)."""
import mxjax as mx
from mxjax import base


def test_autograd_reexports():
    ag = mx.autograd
    for name in ("MXCallbackList", "c_array", "c_array_buf", "c_handle_array", "check_call", "string_types"):
        assert getattr(ag, name) is getattr(base, name), name
    assert ag.is_np_array is mx.util.is_np_array
    assert ag.Symbol is mx.sym.Symbol


def test_autograd_get_symbol_is_a_real_symbol():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.exp(x) * 2
    sym = mx.autograd.get_symbol(y)
    assert isinstance(sym, mx.autograd.Symbol)
    out = sym._bind(mx.cpu(), {sym.list_arguments()[0]: mx.nd.array([0.0, 1.0])}).forward()[0]
    assert abs(float(out.asnumpy()[1]) - 2 * 2.718281828459045) < 1e-5


def test_engine_initializer_profiler_reexports():
    assert mx.engine.check_call is base.check_call
    assert mx.initializer.is_np_array is mx.util.is_np_array and mx.initializer.string_types is base.string_types
    for name in ("c_str", "c_str_array", "check_call", "py_str"):
        assert getattr(mx.profiler, name) is getattr(base, name), name
    arr = mx.profiler.c_str_array(["ab", "c"])
    assert [arr[0], arr[1]] == [b"ab", b"c"] and mx.profiler.py_str(mx.profiler.c_str("é").value) == "é"


def test_executor_module_and_np_symbol():
    assert mx.executor.Executor is mx.sym.Executor
    exe = (mx.sym.var("a") * 2)._bind(mx.cpu(), {"a": mx.nd.array([1.5])})
    assert isinstance(exe, mx.executor.Executor) and float(exe.forward()[0].asnumpy()[0]) == 3.0
    assert mx.np_symbol is mx.sym.np
    assert mx.np_symbol.add(mx.sym.var("a"), mx.sym.var("b")).list_arguments() == ["a", "b"]
