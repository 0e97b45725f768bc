"""mx.lr_scheduler: values at chosen updates vs hand-computed MXNet formulas, warm-up,
MXNet's statefulness, the optimizer's learning_rate following a scheduler, bad input."""
import math

import numpy as onp
import pytest

import mxjax as mx
from mxjax import lr_scheduler as lrs
from mxjax import optimizer as opt


def _values(sched, updates):
    return [sched(n) for n in updates]


def test_factor_scheduler():
    sched = lrs.FactorScheduler(step=2, factor=0.5, base_lr=1.0, stop_factor_lr=0.1)
    # base_lr * factor ** ((n - 1) // step), not below stop_factor_lr
    assert _values(sched, range(1, 12)) == pytest.approx([1, 1, .5, .5, .25, .25, .125, .125, .1, .1, .1])
    assert sched(1) == pytest.approx(0.1)  # stateful, as MXNet: it does not go back
    fresh = lrs.FactorScheduler(step=2, factor=0.5, base_lr=1.0, stop_factor_lr=0.01)
    assert fresh(7) == pytest.approx(0.125)  # a resumed run applies every missed decay at once


def test_multifactor_scheduler():
    sched = lrs.MultiFactorScheduler(step=[3, 5], factor=0.1, base_lr=1.0)
    assert _values(sched, [1, 2, 3, 4, 5, 6, 100]) == pytest.approx([1, 1, 1, .1, .1, .01, .01])
    assert lrs.MultiFactorScheduler(step=[3, 5], factor=0.1, base_lr=1.0)(6) == pytest.approx(0.01)


def test_poly_scheduler():
    sched = lrs.PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1)
    expected = [0.1 + 0.9 * (1 - n / 10) ** 2 for n in (0, 3, 6, 10)]
    assert _values(sched, [0, 3, 6, 10]) == pytest.approx(expected)
    assert sched(15) == pytest.approx(0.1)  # after max_update the last value stays
    assert lrs.PolyScheduler(max_update=4, pwr=1)(1) == pytest.approx(0.01 * 0.75)


def test_cosine_scheduler():
    sched = lrs.CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.2)
    assert _values(sched, [0, 5, 10, 20]) == pytest.approx([1.0, 0.6, 0.2, 0.2])
    assert sched(2) == pytest.approx(0.2 + 0.8 * (1 + math.cos(math.pi * 0.2)) / 2)


@pytest.mark.parametrize("make", [
    lambda **w: lrs.FactorScheduler(step=100, factor=0.5, base_lr=1.0, **w),
    lambda **w: lrs.MultiFactorScheduler(step=[100], factor=0.5, base_lr=1.0, **w),
    lambda **w: lrs.PolyScheduler(max_update=100, base_lr=1.0, **w),
    lambda **w: lrs.CosineScheduler(max_update=100, base_lr=1.0, **w),
])
def test_warmup(make):
    linear = make(warmup_steps=4, warmup_begin_lr=0.2)
    # warmup_begin_lr + (base_lr - warmup_begin_lr) * n / warmup_steps for n < warmup_steps
    assert _values(linear, [0, 1, 3]) == pytest.approx([0.2, 0.4, 0.8])
    assert linear(4) == pytest.approx(1.0)
    constant = make(warmup_steps=4, warmup_begin_lr=0.2, warmup_mode="constant")
    assert _values(constant, [0, 3]) == pytest.approx([0.2, 0.2])
    assert constant(4) == pytest.approx(1.0)


def test_decay_counts_from_the_end_of_warmup():
    poly = lrs.PolyScheduler(max_update=10, base_lr=1.0, pwr=2, warmup_steps=2, warmup_begin_lr=0.0)
    assert _values(poly, [1, 2, 6, 10]) == pytest.approx([0.5, 1.0, 0.25, 0.0])
    cos = lrs.CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.2, warmup_steps=4,
                              warmup_begin_lr=0.05, warmup_mode="constant")
    assert _values(cos, [3, 4, 7, 10]) == pytest.approx([0.05, 1.0, 0.6, 0.2])


def test_optimizer_learning_rate_follows_scheduler():
    o = opt.SGD(learning_rate=None, lr_scheduler=lrs.CosineScheduler(max_update=4, base_lr=1.0))
    w, g = mx.np.zeros(1), mx.np.ones(1)
    applied = []
    for _ in range(4):
        before = w.asnumpy()[0]
        o.update([0], [w], [g], [None])
        applied.append(before - w.asnumpy()[0])
        assert o.learning_rate == pytest.approx((1 + math.cos(math.pi * o.num_update / 4)) / 2)
    # the t-th update uses the scheduler at num_update = t (counted before the step)
    onp.testing.assert_allclose(applied, [(1 + math.cos(math.pi * t / 4)) / 2 for t in range(1, 5)],
                                rtol=1e-6, atol=1e-7)


def test_optimizer_overwrites_base_lr_as_mxnet():
    # MXNet: a given learning_rate replaces the scheduler's base_lr (with a warning); poly and
    # cosine decay from the base_lr they were built with, factor schedulers from the new one
    with pytest.warns(UserWarning, match="overwritten"):
        o = opt.SGD(learning_rate=0.5, lr_scheduler=lrs.FactorScheduler(step=1, factor=0.5, base_lr=1.0))
    o.num_update = 2
    assert o.learning_rate == pytest.approx(0.25)
    with pytest.warns(UserWarning, match="overwritten"):
        o = opt.SGD(learning_rate=0.5, lr_scheduler=lrs.PolyScheduler(max_update=4, base_lr=1.0, pwr=1))
    o.num_update = 2
    assert o.learning_rate == pytest.approx(0.5 * 1.0)
    assert o.lr_scheduler.base_lr == pytest.approx(0.5)


@pytest.mark.parametrize("make,match", [
    (lambda: lrs.FactorScheduler(step=0), "step must be greater or equal than 1"),
    (lambda: lrs.FactorScheduler(step=2, factor=1.5), "Factor must be no more than 1"),
    (lambda: lrs.MultiFactorScheduler(step=[5, 3]), "increasing integer list"),
    (lambda: lrs.MultiFactorScheduler(step=[0, 3]), "greater or equal than 1"),
    (lambda: lrs.MultiFactorScheduler(step=3), "non-empty list"),
    (lambda: lrs.MultiFactorScheduler(step=[3], factor=2), "Factor must be no more than 1"),
    (lambda: lrs.PolyScheduler(max_update=0), "strictly positive"),
    (lambda: lrs.PolyScheduler(max_update=2.5), "max_update must be an int"),
    (lambda: lrs.CosineScheduler(max_update=0), "strictly positive"),
    (lambda: lrs.CosineScheduler(max_update=10, base_lr=0.1, warmup_begin_lr=0.2, warmup_steps=2),
     "higher than warmup_begin_lr"),
    (lambda: lrs.FactorScheduler(step=2, warmup_steps=-1), "positive or 0"),
    (lambda: lrs.FactorScheduler(step=2, warmup_steps=2.0), "warmup_steps must be an int"),
    (lambda: lrs.CosineScheduler(max_update=10, warmup_steps=2, warmup_mode="cubic"), "linear and constant"),
])
def test_bad_input(make, match):
    with pytest.raises(ValueError, match=match):
        make()
    with pytest.raises(NotImplementedError, match="must define __call__"):
        lrs.LRScheduler()(1)
