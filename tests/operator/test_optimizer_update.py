"""The optimizer-update ops' registration, input checks and the reductions MXNet's
multi-tensor optimizers use (all_finite, multi_sum_sq, multi_lars) against NumPy."""
from __future__ import annotations

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.ndarray import _updates
from mxjax.operator import get_op
from mxjax.operator.optimizer_update import UPDATES

ND = mx.nd if hasattr(mx.nd, "sgd_update") else _updates
CONTRIB = mx.nd.contrib if hasattr(mx.nd.contrib, "adamw_update") else _updates
RNG = onp.random.RandomState(0)


def nd(*shape, dtype="float32"):
    return mx.nd.array(RNG.uniform(-1, 1, shape), dtype=dtype)


@pytest.mark.parametrize("name", _updates.__all__)
def test_registered_under_mxnet_names(name):
    op = get_op(name)
    assert not op.differentiable
    assert getattr(ND, name).op is op


@pytest.mark.parametrize("name", _updates.CONTRIB)
def test_contrib_registered_under_mxnet2_internal_names(name):
    op = get_op("_" + name)
    assert get_op("_contrib_" + name) is op
    assert getattr(CONTRIB, name).op is op


def test_symbol_namespace_has_the_ops():
    s = mx.sym.sgd_mom_update(mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("m"), lr=0.1, momentum=0.9)
    assert s.list_arguments() == ["w", "g", "m"]
    assert '"sgd_mom_update"' in s.tojson()


def test_mutated_inputs_follow_mxnet():
    assert UPDATES["sgd_mom_update"].mutated_slots(3) == [2]
    assert UPDATES["mp_sgd_mom_update"].mutated_slots(4) == [2, 3]
    assert UPDATES["adam_update"].mutated_slots(4) == [2, 3]
    assert UPDATES["multi_sgd_mom_update"].mutated_slots(6) == [2, 5]
    assert UPDATES["preloaded_multi_mp_sgd_update"].mutated_slots(8) == [2, 5]
    assert UPDATES["_multi_adamw_update"].mutated_slots(9) == [2, 3, 6, 7]
    assert UPDATES["mp_lamb_update_phase2"].mutated_slots(5) == []  # MXNet writes only the weight


def test_without_out_weight_is_untouched_states_are_updated():
    w, g, m = nd(4), nd(4), mx.nd.zeros((4,))
    before = w.asnumpy()
    new = ND.sgd_mom_update(w, g, m, lr=0.5, momentum=0.9)
    onp.testing.assert_array_equal(w.asnumpy(), before)
    onp.testing.assert_allclose(m.asnumpy(), -0.5 * g.asnumpy(), rtol=1e-6)
    onp.testing.assert_allclose(new.asnumpy(), before - 0.5 * g.asnumpy(), rtol=1e-6)


def test_keyword_arrays_and_clip_zero():
    w, g = nd(3), nd(3)
    out = ND.sgd_update(weight=w, grad=g, lr=0.1, clip_gradient=0.0)  # clip to [0, 0]: kernels clip for >= 0
    onp.testing.assert_allclose(out.asnumpy(), w.asnumpy())


@pytest.mark.parametrize("call, match", [
    (lambda: ND.sgd_update(nd(2, 3), nd(3, 2), lr=0.1), r"sgd_update: grad has shape \(3, 2\) but weight's shape "
                                                        r"\(2, 3\) is expected"),
    (lambda: ND.sgd_mom_update(nd(3), nd(3), nd(3, dtype="float64"), lr=0.1), r"sgd_mom_update: mom has dtype float64"),
    (lambda: ND.mp_sgd_update(nd(3, dtype="float16"), nd(3, dtype="float16"), nd(3, dtype="float16"), lr=0.1),
     r"mp_sgd_update: weight32 has dtype float16 but float32 is expected"),
    (lambda: ND.sgd_update(nd(3), nd(3)), r"sgd_update: Required parameter lr of float is not presented"),
    (lambda: ND.ftml_update(nd(3), nd(3), nd(3), nd(3), nd(3), lr=0.1), r"ftml_update: Required parameter t"),
    (lambda: ND.multi_sgd_update(nd(3), nd(3), nd(3), lrs=(0.1, 0.1), wds=(0, 0), num_weights=2),
     r"multi_sgd_update: expected 4 input arrays \(2 per weight for num_weights=2\), got 3"),
    (lambda: ND.multi_sgd_update(nd(3), nd(3), lrs=(0.1, 0.1), wds=(0,), num_weights=1),
     r"multi_sgd_update: lrs has 2 values but num_weights=1"),
    (lambda: ND.multi_sum_sq(nd(3), nd(2), num_arrays=3), r"multi_sum_sq: expected num_arrays=3 input arrays, got 2"),
    (lambda: CONTRIB.multi_lamb_update([nd(3)], [nd(3)], [nd(3)], [nd(3)], [1, 2], [0.1], [0.0]),
     r"multi_lamb_update: step_count has 2 values"),
    (lambda: CONTRIB.adamw_update(nd(3), nd(3), nd(3), nd(4), 1.0, lr=0.1, eta=1.0),
     r"adamw_update: var has shape \(4,\)"),
    (lambda: ND.sgd_update(nd(3), nd(3), lr=0.1, momentum=0.9), r"sgd_update: unknown parameter"),
])
def test_bad_input_names_the_op(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


def test_all_finite_and_multi_all_finite():
    good, bad = nd(3, 2), mx.nd.array([1.0, float("nan")])
    assert ND.all_finite(good).asnumpy().tolist() == [1.0]
    assert ND.all_finite(mx.nd.array([1.0, float("inf")])).dtype == onp.float32
    assert ND.all_finite(bad).asnumpy().tolist() == [0.0]
    assert ND.multi_all_finite(good, good, num_arrays=2).asnumpy().tolist() == [1.0]
    assert ND.multi_all_finite(good, bad, num_arrays=2).asnumpy().tolist() == [0.0]
    flag = mx.nd.array([1.0])  # init_output=False: chunks AND into one flag
    ND.multi_all_finite(good, num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [1.0]
    ND.multi_all_finite(bad, num_arrays=1, init_output=False, out=flag)
    ND.multi_all_finite(good, num_arrays=1, init_output=False, out=flag)
    assert flag.asnumpy().tolist() == [0.0]


def test_multi_sum_sq_and_multi_lars_against_numpy():
    xs = [nd(3, 2), nd(5), nd(2, 2, dtype="float16")]
    got = ND.multi_sum_sq(*xs, num_arrays=3, scale=2.0)
    want = [onp.sum(onp.square(2.0 * x.asnumpy().astype(onp.float32))) for x in xs]
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    lrs, w2, g2, wds = ([0.1, 0.2, 0.3, 0.4], [4.0, 0.0, 9.0, 1.0], [1.0, 1.0, 0.0, 4.0], [0.1, 0.1, 0.1, 0.0])
    got = ND.multi_lars(*(mx.nd.array(v) for v in (lrs, w2, g2, wds)), eta=0.5, eps=1e-3, rescale_grad=2.0)
    wn, gn = onp.sqrt(w2), onp.sqrt(g2) * 2.0
    want = onp.where((wn > 0) & (gn > 0), onp.array(lrs) * 0.5 * wn / (gn + onp.array(wds) * wn + 1e-3), lrs)
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_reset_arrays_zeroes_in_place():
    a, b = nd(2, 3), nd(4, dtype="float16")
    assert ND.reset_arrays(a, b, num_arrays=2) == []
    assert not a.asnumpy().any() and not b.asnumpy().any() and b.dtype == onp.float16


def test_preloaded_takes_rates_from_arrays():
    ws, gs = [nd(3), nd(2)], [nd(3), nd(2)]
    want = [w.asnumpy() - lr * (g.asnumpy() + wd * w.asnumpy()) for w, g, lr, wd in zip(ws, gs, (0.1, 0.2), (0.0, 0.5))]
    ND.preloaded_multi_sgd_update(ws[0], gs[0], ws[1], gs[1], mx.nd.array([0.1, 0.2]), mx.nd.array([0.0, 0.5]),
                                  num_weights=2, out=ws)
    for w, v in zip(ws, want):  # float32 arithmetic against a float64 reference
        onp.testing.assert_allclose(w.asnumpy(), v, rtol=1e-5, atol=1e-7)


def test_changing_learning_rate_does_not_recompile():
    w, g, m, v = nd(5), nd(5), mx.nd.zeros((5,)), mx.nd.zeros((5,))
    compiled = len(get_op("adam_update")._bound)
    for step in range(1, 4):
        ND.adam_update(w, g, m, v, lr=0.1 / step, wd=0.01, out=w)
    kernels = [k for (name, _), k in _updates._KERNELS.items() if name == "adam_update"]
    assert kernels and all(len(k._bound) <= 1 for k in kernels)
    assert len(get_op("adam_update")._bound) == compiled  # the registered op was not compiled per lr


def test_recorded_and_imperative_paths_agree():
    w0, g0 = nd(4).asnumpy(), nd(4).asnumpy()
    results = []
    for recording in (False, True):
        w, m = mx.nd.array(w0), mx.nd.zeros((4,))
        if recording:
            with mx.autograd.record():
                ND.nag_mom_update(w, mx.nd.array(g0), m, lr=0.1, momentum=0.9, wd=0.1, out=w)
        else:
            ND.nag_mom_update(w, mx.nd.array(g0), m, lr=0.1, momentum=0.9, wd=0.1, out=w)
        results.append((w.asnumpy(), m.asnumpy()))
    onp.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    onp.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
