"""mx.test_utils: each helper against NumPy, finite differences or MXNet 2.0's recorded signatures."""
from __future__ import annotations

import inspect
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import mxjax as mx
from mxjax import test_utils as tu
from mxjax.base import MXNetError, MXNetValueError

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "test_utils"


# ----------------------------------------------------------------------------- API shape

def test_signatures_match_mxnet_2():
    recorded = json.loads((FIXTURES / "signatures.json").read_text())
    checked = 0
    for name in tu.__all__:
        if name not in recorded:
            continue
        params = inspect.signature(getattr(tu, name)).parameters.values()
        mine = [[p.name, p.kind.name, None if p.default is inspect.Parameter.empty else repr(p.default)]
                for p in params]
        assert mine == recorded[name], name
        checked += 1
    assert checked >= 60
    functions = {name for name in tu.__all__ if inspect.isfunction(getattr(tu, name))}  # the fixture's scope
    assert functions <= set(recorded), functions - set(recorded)


def test_reachable_as_mx_test_utils_and_light_to_import():
    assert mx.test_utils.assert_almost_equal is tu.assert_almost_equal
    code = "import sys, mxjax; assert 'pytest' not in sys.modules and 'scipy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


# ----------------------------------------------------------------------------- tolerances

def test_default_tolerances_follow_mxnet():
    rt, at = tu.default_rtols(), tu.default_atols()
    assert rt[np.dtype(np.float16)] == 1e-2 and at[np.dtype(np.float16)] == 1e-1
    assert rt[np.dtype(np.float32)] == 1e-4 and at[np.dtype(np.float32)] == 1e-3
    assert rt[np.dtype(np.float64)] == 1e-5 and at[np.dtype(np.float64)] == 1e-20
    assert rt[np.dtype(np.int32)] == 0 and at[np.dtype(np.bool_)] == 0
    assert tu.default_numeric_eps()[np.dtype(np.float32)] == 2.0 ** -9
    assert tu.get_rtol() == 1e-5 and tu.get_atol() == 1e-20 and tu.get_rtol(0.5) == 0.5
    assert tu.get_atol(dtype=np.float16) == 1e-1 and tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1


def test_get_tols_takes_the_looser_dtype():
    half, single = np.zeros(2, np.float16), mx.np.zeros(2, dtype="float32")
    assert tu.get_tols(half, single, None, None) == (1e-2, 1e-1)
    assert tu.get_tols(single, single, None, None) == (1e-4, 1e-3)
    assert tu.get_tols(single, 1.0, None, None) == (1e-4, 1e-3)  # a Python float is float64
    assert tu.get_tols(single, single, 0.5, {np.dtype(np.float32): 0.25}) == (0.5, 0.25)
    assert tu.effective_dtype(single) == np.float32 and tu.effective_dtype(half) == np.float16
    with pytest.raises(TypeError, match="complex64"):
        tu.get_tols(np.zeros(2, np.complex64), np.zeros(2, np.complex64), None, None)


# ----------------------------------------------------------------------------- comparisons

def test_almost_equal_is_numpy_allclose_with_float64_defaults():
    a = np.array([1.0, 2.0, 3.0])
    for delta in (0.0, 1e-6, 1e-4, np.nan):
        b = a + delta
        assert tu.almost_equal(a, b) == np.allclose(a, b, rtol=1e-5, atol=1e-20)
    assert tu.almost_equal(a, np.array([1.0]) + 0.0, use_broadcast=True) is False
    with pytest.raises(AssertionError, match="not equal"):
        tu.almost_equal(a, a[:1], use_broadcast=False)
    assert tu.almost_equal(np.array([np.nan]), np.array([np.nan]), equal_nan=True)


def test_assert_almost_equal_passes_within_dtype_tolerance():
    x = np.random.rand(3, 4).astype(np.float32)
    tu.assert_almost_equal(x, x + 5e-4)  # float32: atol 1e-3
    tu.assert_almost_equal(mx.np.array(x), x)
    tu.assert_almost_equal(mx.nd.array(x), mx.np.array(x + 1e-5))
    tu.assert_almost_equal(2.0, 2.0 + 1e-7)
    tu.assert_almost_equal(x.astype(np.float16), x.astype(np.float16) + np.float16(0.05))
    tu.assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), equal_nan=True)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(x.astype(np.float64), x.astype(np.float64) + 5e-4)


def test_assert_almost_equal_reports_worst_positions():
    a = np.zeros((3, 4), np.float32)
    b = a.copy()
    b[1, 2], b[2, 0], b[0, 3] = 5.0, 2.0, 0.5
    with pytest.raises(AssertionError) as info:
        tu.assert_almost_equal(a, b, names=("mine", "ref"), mismatches=(2, 10))
    text = str(info.value)
    assert "exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03" in text
    assert "mismatch 25.000000%: 3 of 12 elements" in text
    assert "Location of maximum error: (1, 2), mine=0.00000000, ref=5.00000000" in text
    assert "  1: Error" in text and "(1, 2)" in text and "  2: Error" in text and "(2, 0), mine" in text
    assert "  3: Error" not in text  # mismatches[0] limits the listing
    rel = 5.0 / (1e-3 + 1e-4 * 5.0)
    assert f"Error {rel:f} exceeds" in text


def test_assert_almost_equal_edge_cases():
    with pytest.raises(AssertionError, match="a.shape = \\(2,\\) and b.shape = \\(3,\\)"):
        tu.assert_almost_equal(np.zeros(2), np.zeros(3), use_broadcast=False)
    with pytest.raises(AssertionError, match="cannot compare a of shape \\(2,\\) with b of shape \\(3,\\)"):
        tu.assert_almost_equal(np.zeros(2), np.zeros(3))
    with pytest.raises(AssertionError, match="Location of maximum error: \\(0,\\)"):
        tu.assert_almost_equal(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))
    with pytest.raises(AssertionError, match="Error .* exceeds tolerance"):
        tu.assert_almost_equal(np.float32(1.0), np.float32(2.0))
    tu.assert_almost_equal(np.ones((2, 3)), np.ones(3))  # broadcasting allowed by default


def test_allclose_ignore_nan_and_with_err():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(AssertionError):
        tu.assert_allclose(x, x * (1 + 1e-6))  # rtol 1e-7 by default
    tu.assert_allclose(np.array([np.nan]), np.array([np.nan]))  # equal_nan=True by default
    tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 2.0]))
    b = np.arange(10.0)
    a = b.copy()
    a[3] += 1
    tu.assert_almost_equal_with_err(a, b, etol=0.15)
    with pytest.raises(AssertionError, match="mismatch 10.000000%"):
        tu.assert_almost_equal_with_err(a, b, etol=0.05)


def test_same_assert_exception_and_tuples():
    assert tu.same(np.arange(3), mx.np.arange(3).asnumpy()) and not tu.same(np.arange(3), np.arange(4))
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError, match="did not raise ValueError"):
        tu.assert_exception(int, ValueError, "3")
    tu.compare_ndarray_tuple((np.ones(2), (np.zeros(1),)), (np.ones(2), (np.zeros(1),)))
    with pytest.raises(AssertionError):
        tu.compare_ndarray_tuple((np.ones(2),), (np.zeros(2),))


# ----------------------------------------------------------------------------- random data

def test_random_data():
    np.random.seed(0)
    arr = tu.rand_ndarray((3, 4))
    assert type(arr) is mx.nd.NDArray and arr.shape == (3, 4) and arr.dtype == np.float32
    assert tu.rand_ndarray((2,), dtype="float64").dtype == np.float64
    with pytest.raises(MXNetValueError, match="'csr' is not supported"):
        tu.rand_ndarray((3, 4), stype="csr")
    for _ in range(20):
        s2, s3, sn = tu.rand_shape_2d(3, 4), tu.rand_shape_3d(2, 2, 2), tu.rand_shape_nd(4, dim=5)
        assert 1 <= s2[0] <= 3 and 1 <= s2[1] <= 4 and all(1 <= d <= 2 for d in s3)
        assert len(sn) == 4 and all(1 <= d <= 5 for d in sn)
        assert 0 in tu.rand_shape_nd(50, dim=1, allow_zero_size=True)
        x, y = tu.rand_coord_2d(0, 3, 10, 12)
        assert 0 <= x < 3 and 10 <= y < 12
    a, b = tu.random_arrays((2, 3), ())
    assert a.shape == (2, 3) and b.shape == () and a.dtype == b.dtype == np.float32
    u = tu.random_uniform_arrays((1000,), low=2.0, high=3.0)[0]
    assert u.dtype == np.float32 and u.min() >= 2.0 and u.max() < 3.0
    picked = tu.random_sample(list(range(10)), 4)
    assert len(set(picked)) == 4 and set(picked) <= set(range(10))


def test_matrix_generators():
    np.random.seed(1)
    m = tu.new_matrix_with_real_eigvals_nd((2, 4, 4))
    assert np.allclose(np.linalg.eigvals(m).imag, 0) and np.abs(np.linalg.eigvals(m)).max() < 10 + 1e-6
    q = tu.new_orthonormal_matrix_2d(5)
    assert np.allclose(q.T @ q, np.eye(5))
    s = tu.new_sym_matrix_with_real_eigvals_nd((3, 3, 3))
    assert np.allclose(s, np.swapaxes(s, -1, -2))


# ----------------------------------------------------------------------------- NumPy helpers

def test_np_reduce_and_collapse_sum_like():
    x = np.random.rand(2, 3, 4)
    assert np.allclose(tu.np_reduce(x, (0, 2), True, np.sum), x.sum(axis=(0, 2), keepdims=True))
    assert np.allclose(tu.np_reduce(x, None, False, np.max), x.max())
    assert np.allclose(tu.np_reduce(x, 1, False, np.sum), x.sum(axis=1))
    assert np.allclose(tu.collapse_sum_like(x, (3, 1)), x.sum(axis=(0, 2))[:, None])
    assert tu.collapse_sum_like(np.zeros((0, 3)), (3,)).shape == (3,)
    with pytest.raises(MXNetValueError, match="does not broadcast"):
        tu.collapse_sum_like(x, (2, 4))
    assert np.array_equal(tu.assign_each(np.array([1, 2]), lambda v: v * 2), [2.0, 4.0])
    assert np.array_equal(tu.assign_each2(np.array([1, 2]), np.array([3, 4]), np.add), [4.0, 6.0])
    assert np.array_equal(tu.create_2d_tensor(3, 2).asnumpy(), [[0, 0], [1, 1], [2, 2]])
    assert tu.create_vector(4).dtype == np.int64 and tu.create_2d_np_tensor(2, 2).shape == (2, 2)


# ----------------------------------------------------------------------------- environment and machine

def test_device_and_dtype_defaults():
    assert tu.default_device() == mx.current_device() and tu.default_dtype() is np.float32
    token = mx.device._current.set(None)
    try:
        tu.set_default_device(mx.cpu(1))
        assert tu.default_device() == mx.cpu(1)
    finally:
        mx.device._current.reset(token)
    assert tu.default_device() == mx.cpu(0)


def test_environment_scope_and_decorator(monkeypatch):
    monkeypatch.setenv("MXJAX_TU_A", "old")
    monkeypatch.delenv("MXJAX_TU_B", raising=False)
    with tu.environment({"MXJAX_TU_A": "new", "MXJAX_TU_B": "1"}):
        assert os.environ["MXJAX_TU_A"] == "new" and os.environ["MXJAX_TU_B"] == "1"
    assert os.environ["MXJAX_TU_A"] == "old" and "MXJAX_TU_B" not in os.environ
    with pytest.raises(KeyError):
        with tu.environment("MXJAX_TU_A", None):
            assert "MXJAX_TU_A" not in os.environ
            raise KeyError("body")
    assert os.environ["MXJAX_TU_A"] == "old"

    @tu.environment("MXJAX_TU_B", "2")
    def read():
        return os.environ.get("MXJAX_TU_B")

    assert read() == "2" and "MXJAX_TU_B" not in os.environ
    with pytest.raises(MXNetValueError):
        with tu.environment("a", "b", "c"):
            pass


def test_discard_stderr(capfd):
    with tu.discard_stderr():
        os.write(2, b"hidden\n")
        print("hidden too", file=sys.stderr)
    os.write(2, b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def test_machine_helpers(tmp_path):
    assert list(tu.list_gpus()) == list(range(mx.num_gpus()))
    assert tu.is_op_runnable() is True and tu.has_tvm_ops() is False
    target = tmp_path / "data.bin"
    target.write_bytes(b"x")
    assert tu.download("http://example.invalid/data.bin", dirname=str(tmp_path)) == str(target)
    with pytest.raises(MXNetError, match="does not fetch files"):
        tu.download("http://example.invalid/other.bin", dirname=str(tmp_path))
    with pytest.raises(MXNetError, match="overwrite=True"):
        tu.download("http://example.invalid/data.bin", dirname=str(tmp_path), overwrite=True)
    with tu.environment("CD_JOB", "1"):
        assert tu.is_cd_run()


# ----------------------------------------------------------------------------- generator statistics

def test_chi_square_p_value_matches_closed_form():
    # with 3 buckets (2 degrees of freedom) the chi-square survival function is exp(-x / 2)
    counts = np.array([300, 360, 340])
    gen = lambda n: np.repeat([0, 1, 2], counts)  # noqa: E731
    p, obs, expected = tu.chi_square_check(gen, [0, 1, 2], [1 / 3] * 3, nsamples=1000)
    stat = ((counts - 1000 / 3) ** 2 / (1000 / 3)).sum()
    assert np.array_equal(obs, counts) and np.allclose(expected, 1000 / 3)
    assert abs(p - np.exp(-stat / 2)) < 1e-12


def test_generator_checks_accept_good_and_reject_bad_generators():
    np.random.seed(3)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: 2.0 * q, 4)  # uniform on [0, 2)
    assert buckets[1] == (0.5, 1.0) and probs == [0.25] * 4
    good = lambda n: np.random.uniform(0, 2, n)  # noqa: E731
    bad = lambda n: np.random.uniform(0, 2, n) ** 1.2  # noqa: E731
    assert len(tu.verify_generator(good, buckets, probs, nsamples=20000, nrepeat=5)) == 5
    with pytest.raises(AssertionError, match="Generator test fails"):
        tu.verify_generator(lambda n: np.clip(bad(n), 0, 1.999), buckets, probs, nsamples=20000)
    normal = lambda n: mx.nd.array(np.random.normal(1.0, 2.0, n))  # noqa: E731
    assert tu.mean_check(normal, 1.0, 2.0, nsamples=20000) and not tu.mean_check(normal, 1.5, 2.0, nsamples=20000)
    assert tu.var_check(normal, 2.0, nsamples=20000) and not tu.var_check(normal, 2.5, nsamples=20000)


# ----------------------------------------------------------------------------- symbol checks

def _sin_times():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    return mx.sym.sin(a) * b


def test_check_symbolic_forward_and_backward():
    np.random.seed(4)
    sym = _sin_times()
    x, y = np.random.rand(2, 3), np.random.rand(2, 3)
    out = tu.check_symbolic_forward(sym, [x, y], [np.sin(x) * y])
    assert out[0].dtype == np.float32
    tu.check_symbolic_forward(sym, {"a": x, "b": y}, {sym.list_outputs()[0]: np.sin(x) * y}, dtype=np.float64,
                              rtol=1e-12, atol=0)
    with pytest.raises(AssertionError, match="EXPECTED_.*FORWARD_"):
        tu.check_symbolic_forward(sym, [x, y], [np.sin(x) * y + 0.1])
    g = np.random.rand(2, 3)
    grads = tu.check_symbolic_backward(sym, [x, y], [g], [np.cos(x) * y * g, np.sin(x) * g])
    assert set(grads) == {"a", "b"}
    tu.check_symbolic_backward(sym, [x, y], {sym.list_outputs()[0]: g}, {"a": np.cos(x) * y * g},
                               grad_req={"a": "add", "b": "null"})
    with pytest.raises(AssertionError, match="BACKWARD_b"):
        tu.check_symbolic_backward(sym, [x, y], [g], [np.cos(x) * y * g, np.cos(x) * g])
    with pytest.raises(MXNetValueError, match="do not match"):
        tu.check_symbolic_forward(sym, {"a": x}, [x])


def test_same_array_and_same_symbol_structure():
    a = mx.nd.array(np.arange(3.0))
    assert tu.same_array(a, a) and not tu.same_array(a, a.copy())
    assert np.array_equal(a.asnumpy(), np.arange(3.0))  # the probe write is undone
    x = mx.sym.Variable("x")
    assert tu.same_symbol_structure(mx.sym.sin(x) * 2, mx.sym.sin(mx.sym.Variable("y")) * 3)
    assert not tu.same_symbol_structure(mx.sym.sin(x), mx.sym.cos(x))
    assert not tu.same_symbol_structure(mx.sym.sin(x), mx.sym.sin(mx.sym.sin(x)))


def test_numeric_grad_is_finite_differences():
    sym = _sin_times()
    x, y = np.random.rand(2, 2), np.random.rand(2, 2)
    exe = sym._bind(mx.cpu(), args={"a": mx.nd.array(x, dtype="float64"), "b": mx.nd.array(y, dtype="float64")})
    grads = tu.numeric_grad(exe, {"a": x, "b": y}, eps=1e-6, dtype=np.float64)
    assert np.allclose(grads["a"], np.cos(x) * y, atol=1e-8) and np.allclose(grads["b"], np.sin(x), atol=1e-8)
    assert np.allclose(exe.arg_dict["a"].asnumpy(), x)  # restored


def test_check_numeric_gradient_passes_and_catches_wrong_gradients():
    np.random.seed(5)
    sym = _sin_times()
    loc = [np.random.rand(3, 2), np.random.rand(3, 2)]
    tu.check_numeric_gradient(sym, loc)
    tu.check_numeric_gradient(sym, {"a": loc[0], "b": loc[1]}, grad_nodes={"a": "add", "b": "null"},
                              dtype=np.float64, numeric_eps=1e-6, rtol=1e-5, atol=1e-7)
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    wrong = mx.sym.BlockGrad(mx.sym.sin(a)) * b  # backward says d/da = 0, finite differences disagree
    with pytest.raises(AssertionError, match="NUMERICAL_a"):
        tu.check_numeric_gradient(wrong, loc)
    tu.check_numeric_gradient(wrong, loc, grad_nodes=["b"])
    with pytest.raises(MXNetValueError, match="too small"):
        tu.check_numeric_gradient(sym, loc, numeric_eps=1e-7)


def test_check_consistency_compares_dtypes():
    np.random.seed(6)
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    sym = mx.sym.broadcast_mul(mx.sym.sin(a), b, name="out")
    specs = [{"ctx": mx.cpu(0), "a": (3, 4), "b": (3, 4), "type_dict": {"a": t, "b": t}}
             for t in (np.float64, np.float32, np.float16)]
    truth = tu.check_consistency(sym, specs)
    assert truth["a"].dtype == np.float64 and set(truth) == {"out_output", "a", "b"}
    off = mx.sym.broadcast_mul(mx.sym.sin(a) * 1.01, b, name="out")
    with pytest.raises(AssertionError, match="check_consistency"):
        tu.check_consistency([sym, off, sym], specs, rtol=1e-4, atol=1e-4)
    tu.check_consistency([sym, off, sym], specs, rtol=1e-4, atol=1e-4, raise_on_err=False)


def test_check_gluon_hybridize_consistency():
    from mxjax.gluon import nn

    x = mx.np.array(np.random.rand(2, 3))
    builder = lambda: nn.Dense(4, in_units=3)  # noqa: E731
    tu.check_gluon_hybridize_consistency(builder, [x])
    with pytest.raises(AssertionError):
        tu.check_gluon_hybridize_consistency(builder, [x], numpy_func=lambda v: np.zeros((2, 4)) + 1)


def test_check_speed_times_forward_and_backward():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    y = mx.sym.FullyConnected(x, w, num_hidden=4, no_bias=True)
    assert 0 < tu.check_speed(y, x=(8, 16), w=(4, 16), N=2) < 60
    location = {"x": np.ones((8, 16)), "w": np.ones((4, 16))}
    assert 0 < tu.check_speed(y, location=location, typ="forward", N=2) < 60
    with pytest.raises(ValueError, match='typ can only be "whole" or "forward"'):
        tu.check_speed(y, location=location, typ="backward")


def test_compare_optimizer_passes_for_equal_rules_and_fails_for_different():
    tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                         mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), [(3, 4), (5,)], "float32")
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                             mx.optimizer.SGD(learning_rate=0.2, momentum=0.9), [(3, 4)], "float32")
    # SGLD adds noise: equal only when both draw it from the same seed
    tu.compare_optimizer_noise_seeded(mx.optimizer.SGLD(learning_rate=0.1), mx.optimizer.SGLD(learning_rate=0.1),
                                      [(30, 4)], "float32", noise_seed=3)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(mx.optimizer.SGLD(learning_rate=0.1), mx.optimizer.SGLD(learning_rate=0.1),
                             [(30, 4)], "float32")
    with pytest.raises(ValueError, match="storage type 'row_sparse' is not supported"):
        tu.compare_optimizer(mx.optimizer.SGD(), mx.optimizer.SGD(), [(2,)], "float32", w_stype="row_sparse")


def test_reexported_names_are_mxnets():
    assert tu.Symbol is mx.sym.Symbol and tu.np_symbol is mx.sym.np and tu.current_device is mx.device.current_device
