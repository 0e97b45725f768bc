"""mx.util: NumPy-semantics switches, scopes and decorators, env vars, GPU queries, wrappers.

Expected values marked "MXNet 2.0.0b1" were read from the reference MXNet 2.0.0b1 running the same call.
"""
import os
import threading

import jax
import numpy as onp
import pytest

import mxjax as mx
from mxjax import gluon, util
from mxjax.base import MXNetError


# ----------------------------------------------------------------------------- flags

def test_defaults_after_import_are_numpy_semantics():
    # MXNet 2.0.0b1: import mxnet leaves is_np_array, is_np_shape True, is_np_default_dtype False
    assert (util.is_np_array(), util.is_np_shape(), util.is_np_default_dtype()) == (True, True, False)
    assert mx.is_np_array is util.is_np_array and mx.npx.is_np_array() is True


def test_reset_np_and_set_np_change_all_three_flags():
    util.reset_np()
    assert (util.is_np_array(), util.is_np_shape(), util.is_np_default_dtype()) == (False, False, False)
    util.set_np(dtype=True)
    assert (util.is_np_array(), util.is_np_shape(), util.is_np_default_dtype()) == (True, True, True)
    util.set_np()
    assert util.is_np_default_dtype() is False


def test_set_np_array_without_shape_is_mxnets_value_error():
    with pytest.raises(ValueError, match="NumPy Shape semantics is required in using NumPy array semantics"):
        util.set_np(shape=False, array=True)


def test_set_np_shape_returns_previous_and_refuses_while_array_on():
    with pytest.raises(ValueError, match="Deactivating NumPy shape semantics while NumPy array"):
        util.set_np_shape(False)
    util.set_np(shape=True, array=False)
    assert util.set_np_shape(False) is True
    assert util.is_np_shape() is False
    assert util.set_np_shape(True) is False
    assert mx.set_np_shape is util.set_np_shape


def test_default_dtype_flag_reaches_creation_ops():
    assert mx.np.ones(2).dtype == onp.float32 and mx.np.arange(3).dtype == onp.float32
    assert util.set_np_default_dtype(True) is False
    assert mx.np.ones(2).dtype == onp.float64 and mx.np.zeros(2).dtype == onp.float64
    assert mx.np.arange(3).dtype == onp.float64
    assert util.set_np_default_dtype(False) is True
    assert mx.np.ones(2).dtype == onp.float32


def test_scopes_restore_flags():
    util.set_np(shape=True, array=False)
    with util.np_array(True):
        assert util.is_np_array()
        with util.np_array(False):
            assert not util.is_np_array()
        assert util.is_np_array()
    assert not util.is_np_array()
    with util.np_shape(False):
        assert not util.is_np_shape()
    assert util.is_np_shape()
    with util.np_default_dtype(True):
        assert util.is_np_default_dtype() and mx.np.ones(1).dtype == onp.float64
    assert not util.is_np_default_dtype()


def test_np_shape_off_scope_refused_while_array_on():
    with pytest.raises(ValueError, match="Deactivating NumPy shape semantics"):
        with util.np_shape(False):
            pass


def test_scopes_are_per_thread():
    seen = {}
    entered, release = threading.Event(), threading.Event()

    def other():
        entered.wait()
        seen["other"] = util.is_np_array()
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    util.set_np(shape=True, array=True)
    with util.np_array(False):
        seen["inside"] = util.is_np_array()
        entered.set()
        release.wait()
    thread.join()
    assert seen == {"inside": False, "other": True}


# ----------------------------------------------------------------------------- decorators

def test_use_np_on_a_function():
    util.reset_np()

    @util.use_np
    def flags(x, y=1):
        """doc"""
        return util.is_np_array(), util.is_np_shape(), x + y

    assert flags(1, y=2) == (True, True, 3)
    assert flags.__name__ == "flags" and flags.__doc__ == "doc"
    assert not util.is_np_array()


def test_use_np_default_dtype_on_a_function():
    @util.use_np_default_dtype
    def make():
        return mx.np.ones(2).dtype

    assert make() == onp.float64
    assert mx.np.ones(2).dtype == onp.float32


def test_use_np_on_a_hybrid_block_class():
    util.reset_np()

    @util.use_np
    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = gluon.Parameter("w", shape=(2, 2))
            self.seen = None

        def forward(self, x):
            self.seen = (util.is_np_array(), util.is_np_shape())
            return mx.np.dot(x, self.w.data()) + mx.np.ones(())

        @property
        def flags(self):
            return util.is_np_array(), util.is_np_shape()

        @staticmethod
        def static_flag():
            return util.is_np_array()

        @classmethod
        def class_flag(cls):
            return cls.__name__, util.is_np_array()

    net = Net()
    net.initialize()
    out = net(mx.np.ones((2, 2)))
    assert isinstance(out, mx.np.ndarray) and net.seen == (True, True)
    assert net.flags == (True, True)
    assert Net.static_flag() and net.static_flag()
    assert Net.class_flag() == ("Net", True) and net.class_flag() == ("Net", True)
    net.hybridize()
    onp.testing.assert_allclose(net(mx.np.ones((2, 2))).asnumpy(), out.asnumpy(), rtol=1e-6)
    assert not util.is_np_array() and not util.is_np_shape()


def test_use_np_rejects_non_callables():
    with pytest.raises(TypeError, match="use_np_array can only decorate classes and callable objects"):
        util.use_np(3)


def test_set_module():
    @util.set_module("mxnet.numpy")
    def f():
        pass

    assert f.__module__ == "mxnet.numpy"
    assert util.set_module(None)(f).__module__ == "mxnet.numpy"


# ----------------------------------------------------------------------------- environment

def test_getenv_setenv_use_os_environ(monkeypatch):
    monkeypatch.delenv("MXJAX_TEST_UTIL_VAR", raising=False)
    assert util.getenv("MXJAX_TEST_UTIL_VAR") is None  # MXNet 2.0.0b1: None for unset
    util.setenv("MXJAX_TEST_UTIL_VAR", "1")
    assert os.environ["MXJAX_TEST_UTIL_VAR"] == "1" and util.getenv("MXJAX_TEST_UTIL_VAR") == "1"
    monkeypatch.setenv("MXJAX_TEST_UTIL_VAR", "b")
    assert util.getenv("MXJAX_TEST_UTIL_VAR") == "b"
    util.setenv("MXJAX_TEST_UTIL_VAR", None)
    assert "MXJAX_TEST_UTIL_VAR" not in os.environ and util.getenv("MXJAX_TEST_UTIL_VAR") is None


# ----------------------------------------------------------------------------- GPUs

def _jax_gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def test_gpu_count_matches_jax():
    assert util.get_gpu_count() == len(_jax_gpus()) == mx.device.num_gpus()


@pytest.mark.skipif(bool(_jax_gpus()), reason="checks the no-GPU errors")
def test_gpu_queries_without_gpu_raise_like_mxnet():
    # MXNet 2.0.0b1 (CPU build): MXNetError "This call is only supported for MXNet built with CUDA support."
    with pytest.raises(MXNetError, match="only supported for MXNet built with CUDA support"):
        util.get_gpu_memory(0)
    with pytest.raises(MXNetError, match="only supported for MXNet built with CUDA support"):
        mx.context.gpu_memory_info(0)
    with pytest.raises(MXNetError, match="USE_CUDA=1"):
        util.get_max_supported_compute_capability()
    with pytest.raises(MXNetError, match="does not exist"):
        util.get_cuda_compute_capability(mx.gpu(0))


@pytest.mark.skipif(not _jax_gpus(), reason="needs a GPU")
def test_gpu_queries_with_gpu():
    free, total = util.get_gpu_memory(0)
    assert 0 <= free <= total and total > 0
    capability = util.get_cuda_compute_capability(mx.gpu(0))
    assert capability >= 35
    assert util.get_rtc_compile_opts(mx.gpu(0))[0].startswith("--gpu-architecture=")


def test_compute_capability_needs_a_gpu_device():
    with pytest.raises(ValueError, match="Expecting a gpu context to get cuda compute capability"):
        util.get_cuda_compute_capability(mx.cpu())


def test_flush_denorms_is_on_and_cannot_be_turned_off():
    assert util.set_flush_denorms(True) is True
    tiny = mx.np.array([1e-39], dtype="float32")
    assert float((tiny * 2).asnumpy()[0]) == 0.0  # flushed, as MXNet's default
    with pytest.raises(MXNetError, match="always flushes denormal"):
        util.set_flush_denorms(False)


# ----------------------------------------------------------------------------- function wrappers

def _unary(x, out=None):
    return x


def _binary(x1, x2, out=None):
    return x1


# (keywords, unary outcome, binary outcome) from MXNet 2.0.0b1
_UFUNC_CASES = [
    ({"casting": "same_kind"}, None, None),
    ({"subok": 1}, None, None),
    ({"dtype": "float32"}, (NotImplementedError, "dtype=float32 is not implemented yet for operator _unary"),
     (NotImplementedError, "dtype=float32 is not implemented yet")),
    ({"casting": "unsafe"}, (NotImplementedError, "casting=unsafe is not implemented yet for operator _unary"),
     (NotImplementedError, "casting=unsafe is not implemented yet")),
    ({"casting": "bad"}, (TypeError, "casting=bad not understood for operator _unary"),
     (TypeError, "casting bad not understood")),
    ({"foo": 1}, (TypeError, "foo is an invalid keyword to function '_unary'"),
     (TypeError, "foo is an invalid keyword to function '_binary'")),
    ({"order": "C"}, (NotImplementedError, "order=C is not implemented yet"),
     (NotImplementedError, "order=C is not implemented yet")),
    ({"order": 3}, (TypeError, "order=3 not understood"), (TypeError, "order 3 not understood")),
    ({"where": False}, (NotImplementedError, "where=False"), (NotImplementedError, "where=False")),
    ({"dtype": "int16"}, (TypeError, "dtype=int16 not understood"), (TypeError, "dtype int16 not understood")),
    ({"dtype": onp.float32}, (NotImplementedError, "not implemented yet"), (NotImplementedError, "not implemented")),
]


@pytest.mark.parametrize("kwargs, unary, binary", _UFUNC_CASES)
def test_wrap_np_ufunc_keyword_checks(kwargs, unary, binary):
    for wrapped, args, outcome in [(util.wrap_np_unary_func(_unary), (1,), unary),
                                   (util.wrap_np_binary_func(_binary), (1, 2), binary)]:
        if outcome is None:
            assert wrapped(*args, **kwargs) == 1
        else:
            with pytest.raises(outcome[0], match=outcome[1].replace("(", r"\(")):
                wrapped(*args, **kwargs)


def test_np_ufunc_legal_option():
    # MXNet 2.0.0b1: np.float32 is legal, np.dtype('float32') and unknown keys are not
    assert util.np_ufunc_legal_option("dtype", onp.float32)
    assert not util.np_ufunc_legal_option("dtype", onp.dtype("float32"))
    assert not util.np_ufunc_legal_option("x", 1)
    assert util.np_ufunc_legal_option("casting", "no") and not util.np_ufunc_legal_option("casting", "x")


def test_keyword_renaming_wrappers():
    def record(*args, **kwargs):
        return args, kwargs

    assert util.wrap_ctx_to_device_func(record)(1, ctx="cpu") == ((1,), {"device": "cpu"})
    assert util.wrap_data_api_statical_func(record)(ddof=1) == ((), {"correction": 1})
    assert util.wrap_data_api_linalg_func(record)(UPLO="U", rcond=0.1) == ((), {"upper": True, "rtol": 0.1})
    assert util.wrap_data_api_linalg_func(record)(UPLO="L", tol=2) == ((), {"upper": False, "rtol": 2})
    assert util.wrap_sort_functions(record)(kind="stable") == ((), {"stable": True})
    assert util.wrap_sort_functions(record)(kind="quicksort") == ((), {"stable": False})
    with pytest.raises(NotImplementedError, match="order not supported"):
        util.wrap_sort_functions(record)(order="x")


def test_wrap_ctx_to_device_on_a_real_creation_function():
    zeros = util.wrap_ctx_to_device_func(mx.np.zeros)
    assert zeros((2,), ctx=mx.cpu()).device == mx.cpu()


@pytest.mark.parametrize("number, dtype", [  # MXNet 2.0.0b1
    (1, onp.int64), (True, onp.int64), (-5, onp.int64), (2**63 - 1, onp.int64), (2**63, onp.uint64),
    (1.5, onp.float32), (0.1, onp.float32), (1e40, onp.float64), (16777217.0, onp.float64),
    (3.0, onp.float32), (float("nan"), onp.float32), (float("inf"), onp.float64),
    (onp.float64(0.1), onp.float32), (onp.int8(3), onp.int8), (onp.float16(2), onp.float16),
])
def test_dtype_from_number(number, dtype):
    assert onp.dtype(util.dtype_from_number(number)) == onp.dtype(dtype)


def test_dtype_from_number_errors_and_np_default_dtype():
    with pytest.raises(OverflowError, match="Integer out of bounds"):
        util.dtype_from_number(2**64)
    with pytest.raises(TypeError, match="expected an int or float"):
        util.dtype_from_number("a")
    util.set_np(dtype=True)
    assert util.dtype_from_number(0.5) is onp.float64  # MXNet 2.0.0b1


def test_default_array_follows_np_array_semantics():
    arr = util.default_array([1, 2])
    assert isinstance(arr, mx.np.ndarray) and arr.dtype == onp.float32
    util.reset_np()
    legacy = util.default_array([1, 2], dtype="int32")
    assert type(legacy) is mx.nd.NDArray and legacy.dtype == onp.int32


def test_numpy_fallback_runs_on_host_numpy():
    @util.numpy_fallback
    def eig_and_pairs(a, b=None):
        return onp.linalg.eigvals(a) if b is None else [a + b, a * 2]

    values = eig_and_pairs(mx.np.array([[2.0, 0.0], [0.0, 3.0]]))
    assert isinstance(values, mx.np.ndarray)
    onp.testing.assert_allclose(onp.sort(values.asnumpy()), [2.0, 3.0])
    pair = eig_and_pairs(mx.np.array([1.0, 2.0]), b=mx.np.array([1.0, 1.0]))
    assert isinstance(pair, list) and all(isinstance(p, mx.np.ndarray) for p in pair)
    onp.testing.assert_allclose(pair[0].asnumpy(), [2.0, 3.0])

    @util.numpy_fallback
    def nothing(a):
        return None

    with pytest.raises(ValueError, match="Only functions with return values"):
        nothing(mx.np.ones(1))


def test_test_utils_reexports():
    from mxjax import test_utils

    assert test_utils.use_np is util.use_np and test_utils.getenv is util.getenv
    assert test_utils.Features is mx.runtime.Features
