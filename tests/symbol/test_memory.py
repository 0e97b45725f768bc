"""Memory planning for Symbol executors: planner invariants, XLA figures, donation, mirror, fused steps.

Invariants checked on every plan: no two values alive at once share a block; a
block passes from one value to the next only when the next one's producer depends
on every node that used the block (no sharing between nodes that may run in
parallel); in-place only for allowed ops, onto a value the op is the last reader
of, after every other reader; planned <= no-sharing bytes.
"""
from __future__ import annotations

import itertools
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetValueError
from mxjax.symbol.executor import MIRROR_ENV
from mxjax.symbol.memory import INPLACE_OPS, MemoryPlan, plan_memory


# ----------------------------------------------------------------------------- graphs

def _loss(logits):
    return mx.sym.negative(mx.sym.mean(mx.sym.pick(mx.sym.log_softmax(logits), mx.sym.var("label"))),
                           name="loss")


def _mlp():
    h = mx.sym.var("data")
    for i, n in enumerate((16, 16, 4)):
        h = mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{i}")
        if i < 2:
            h = mx.sym.Activation(h, act_type="relu", name=f"relu{i}")
    return _loss(h)


def _resnet():
    def conv_bn(x, name, relu=True):
        h = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, name=f"{name}_conv")
        h = mx.sym.BatchNorm(h, fix_gamma=False, name=f"{name}_bn")
        return mx.sym.Activation(h, act_type="relu", name=f"{name}_relu") if relu else h
    h = conv_bn(mx.sym.var("data"), "stem")
    for i in range(1):  # one residual block: conv graphs compile slowly on CPU
        h = mx.sym.Activation(h + conv_bn(conv_bn(h, f"b{i}a"), f"b{i}b", relu=False), act_type="relu",
                              name=f"b{i}_out")
    return _loss(mx.sym.FullyConnected(mx.sym.mean(h, axis=(2, 3)), num_hidden=3, name="fc"))


def _used_twice():
    y = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=8, name="fc"),
                          act_type="relu", name="y")
    return mx.sym.sum(y * y + mx.sym.sigmoid(y, name="sig"), name="out")


def _diamond():
    x = mx.sym.var("data")
    a = mx.sym.FullyConnected(mx.sym.FullyConnected(x, num_hidden=8, name="a1"), num_hidden=8, name="a2")
    b = mx.sym.FullyConnected(mx.sym.FullyConnected(x, num_hidden=8, name="b1"), num_hidden=8, name="b2")
    return mx.sym.sum(a + b, name="out")


GRAPHS = {
    "mlp": (_mlp, {"data": (4, 8), "label": (4,)}),
    "resnet": (_resnet, {"data": (2, 3, 6, 6), "label": (2,)}),
    "used_twice": (_used_twice, {"data": (4, 5)}),
    "diamond": (_diamond, {"data": (4, 5)}),
}


def _plan(name, backward, sym=None):
    make, shapes = GRAPHS[name]
    sym = sym or make()
    grad_args = [n for n in sym.list_arguments() if n not in ("data", "label")]
    return plan_memory(sym, shapes, include_backward=backward, grad_args=grad_args)


# ----------------------------------------------------------------------------- invariants

def _check_invariants(plan: MemoryPlan) -> None:
    assert plan.planned_bytes <= plan.no_sharing_bytes
    assert plan.planned_bytes == sum(plan.blocks)
    assert set(plan.assignment) == set(plan.sizes) == set(plan.lifetimes)
    inplace = set(plan.inplace)
    by_block: dict[int, list] = {}
    for label, block in plan.assignment.items():
        assert plan.blocks[block] >= plan.sizes[label]
        by_block.setdefault(block, []).append(label)
    for labels in by_block.values():
        for a, b in itertools.combinations(sorted(labels, key=lambda v: plan.lifetimes[v]), 2):
            (a_first, a_last), (b_first, _) = plan.lifetimes[a], plan.lifetimes[b]
            writer = plan.order[b_first]
            # never two live values in one block, except an in-place handover within one step
            assert a_last < b_first or (a_last == b_first and (writer, a) in inplace), (a, b)
            # no sharing between nodes that may run in parallel
            for user in [plan.producers[a], *plan.consumers[a]]:
                assert user == writer or plan.depends_on(writer, user), (a, b, user)
    for consumer, label in inplace:
        op = plan.ops[consumer]
        assert op.removesuffix("_backward") in INPLACE_OPS or op == "grad_sum", op
        assert consumer in plan.consumers[label] and plan.lifetimes[label][1] == plan.order.index(consumer)
        assert all(c == consumer or plan.depends_on(consumer, c) for c in plan.consumers[label])
        outs = [v for v in plan.assignment if v[0] == consumer and plan.assignment[v] == plan.assignment[label]]
        assert len(outs) == 1 and plan.sizes[outs[0]] == plan.sizes[label]
    for label in plan.assignment:
        assert label not in plan.external


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("backward", [False, True])
def test_plan_invariants(name, backward):
    _check_invariants(_plan(name, backward))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_backward_plan_covers_forward(name):
    sym = GRAPHS[name][0]()  # node names come from counters: plan one symbol twice
    fwd, both = _plan(name, False, sym), _plan(name, True, sym)
    assert both.planned_bytes >= fwd.planned_bytes
    assert both.no_sharing_bytes > fwd.no_sharing_bytes
    assert set(fwd.assignment) <= set(both.assignment)
    assert both.external_bytes > fwd.external_bytes  # gradients and head gradients are bound arrays


def test_mlp_inplace_and_savings():
    sym = _mlp()
    fwd, both = _plan("mlp", False, sym), _plan("mlp", True, sym)
    # ReLU overwrites the FullyConnected output it reads (FC's gradient does not need its output)
    assert ("relu0", ("fc0", 0)) in fwd.inplace and ("relu1", ("fc1", 0)) in fwd.inplace
    assert fwd.assignment[("relu0", 0)] == fwd.assignment[("fc0", 0)]
    # ReLU's gradient overwrites the output gradient it reads
    assert ("relu1_backward", ("fc2_backward", 0)) in both.inplace
    assert both.saving >= 0.5
    # bytes: float32 (4, 16) activations
    assert fwd.sizes[("fc0", 0)] == 4 * 16 * 4
    assert both.external[("fc0_weight", 0)] == 16 * 8 * 4 and ("fc0_backward", 1) in both.external


def test_resnet_shares_across_blocks():
    plan = _plan("resnet", True)
    assert plan.saving >= 0.5
    assert any(op == "grad_sum" for op in plan.ops.values())  # the residual input's two gradients
    # BatchNorm (a whole-channel op) is never in place; the residual add is
    assert not any(plan.ops[c] == "BatchNorm" for c, _ in plan.inplace)
    assert any(plan.ops[c] == "add" for c, _ in plan.inplace)


def test_value_used_twice_is_not_overwritten_while_read():
    plan = _plan("used_twice", False)
    readers = plan.consumers[("y", 0)]
    assert len(readers) == 2
    # sigmoid runs last but the multiply could run in parallel with it: no in-place onto y
    assert not any(label == ("y", 0) for _, label in plan.inplace)


def test_parallel_branches_never_share():
    plan = _plan("diamond", False)
    # a1 dies before b1 is made (sequentially a reuse would fit), but b1 may run in parallel with a2
    assert plan.lifetimes[("a1", 0)][1] < plan.lifetimes[("b1", 0)][0]
    assert plan.assignment[("a1", 0)] != plan.assignment[("b1", 0)]
    assert not plan.depends_on("b1", "a2") and plan.depends_on("out", "b2")


def test_size_aware_matching():
    x = mx.sym.var("data")
    big = mx.sym.FullyConnected(x, num_hidden=64, name="big")
    small = mx.sym.FullyConnected(big, num_hidden=8, name="small")
    tiny = mx.sym.FullyConnected(small, num_hidden=2, name="tiny")   # 8 bytes/row: 32x smaller than big
    again = mx.sym.FullyConnected(tiny, num_hidden=60, name="again")
    plan = plan_memory(mx.sym.sum(again, name="out"), {"data": (4, 3)})
    _check_invariants(plan)
    assert plan.assignment[("again", 0)] == plan.assignment[("big", 0)]  # best fit, within the match range
    assert plan.assignment[("tiny", 0)] != plan.assignment[("big", 0)]    # 32x apart: no match
    assert plan.blocks[plan.assignment[("big", 0)]] == 4 * 64 * 4


def test_plan_errors_and_summary():
    with pytest.raises(MXNetValueError, match="cannot infer the shapes"):
        plan_memory(_mlp(), {"label": (4,)})
    text = _plan("mlp", True).summary()
    assert "forward+backward" in text and "no sharing" in text and "planned" in text and "external" in text


# ----------------------------------------------------------------------------- executors

def _bound(name, mirror=False, seed=0, **grad_req):
    make, shapes = GRAPHS[name]
    sym = make()
    req = {n: "null" if n in ("data", "label") else grad_req.get(n, "write") for n in sym.list_arguments()}
    ex = sym.simple_bind(mx.cpu(), grad_req=req, type_dict={"label": "int32"}, **shapes)
    rng = onp.random.default_rng(seed)
    for n, a in ex.arg_dict.items():
        a[:] = rng.integers(0, 3, a.shape) if n == "label" else rng.standard_normal(a.shape).astype("float32")
    ex.mirror = mirror
    return ex


def _grads(ex):
    return {n: g.asnumpy() for n, g in ex.grad_dict.items()}


@pytest.mark.parametrize("name", ["mlp", "resnet"])
def test_mirror_gives_the_same_gradients(name):
    plain, mirrored = _bound(name), _bound(name, mirror=True)
    for _ in range(3):  # two-call form, then the fused form
        for ex in (plain, mirrored):
            ex.forward(is_train=True)
            ex.backward()
        for n, g in _grads(plain).items():
            onp.testing.assert_allclose(_grads(mirrored)[n], g, rtol=1e-5, atol=1e-6)
    report = {m: plain.memory_analysis(mirror=m)["training forward"] for m in (False, True)}
    # mirroring keeps fewer residuals between forward and backward
    assert report[True]["output_size_in_bytes"] < report[False]["output_size_in_bytes"]


def test_mirror_env_var(monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, "1")
    assert _mlp().simple_bind(mx.cpu(), data=(4, 8), label=(4,)).mirror
    monkeypatch.delenv(MIRROR_ENV)
    assert not _mlp().simple_bind(mx.cpu(), data=(4, 8), label=(4,)).mirror


def test_fused_and_two_call_forms_agree():
    fused, ref = _bound("resnet"), _bound("resnet")
    head = onp.full((1,), 0.5, "float32")  # the legacy mean's (1,)-shaped output
    fused.forward(is_train=True)
    fused.backward()
    fused.forward(is_train=True)
    assert fused._pending is not None  # a default backward followed: this forward ran fused
    fused.backward(head)               # explicit head gradient: the VJP is rebuilt
    ref.forward(is_train=True)
    ref.forward(is_train=True)         # a training forward without backward: stays two-call
    ref.backward(head)
    assert ref._pending is None
    for n, g in _grads(ref).items():
        onp.testing.assert_allclose(_grads(fused)[n], g, rtol=1e-5, atol=1e-6)
    for n, a in ref.aux_dict.items():
        onp.testing.assert_allclose(fused.aux_dict[n].asnumpy(), a.asnumpy(), rtol=1e-6)


def test_fused_backward_add_and_repeat():
    ex = _bound("mlp", fc0_bias="add")
    for _ in range(3):
        ex.forward(is_train=True)
        ex.backward()
    one = _bound("mlp")
    one.forward(is_train=True)
    one.backward()
    onp.testing.assert_allclose(ex.grad_dict["fc0_bias"].asnumpy(), 3 * one.grad_dict["fc0_bias"].asnumpy(),
                                rtol=1e-5, atol=1e-6)
    before = ex.grad_dict["fc0_bias"].asnumpy()
    ex.backward()  # backward twice after one forward adds the same gradient again
    onp.testing.assert_allclose(ex.grad_dict["fc0_bias"].asnumpy(), before + one.grad_dict["fc0_bias"].asnumpy(),
                                rtol=1e-5, atol=1e-6)


def test_aux_states_are_donated_only_when_dead():
    ex = _bound("resnet")
    names = ("stem_bn_moving_mean", "stem_bn_moving_var")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "donated buffers were not usable"
        ex.forward(is_train=True)
        assert ex._last_donated == ()  # bound arrays came from the caller (simple_bind): not donated
        ex.backward()
        old = ex.aux_dict[names[0]].to_jax()
        ex.forward(is_train=True)
        # `old` still refers to its buffer; the executor's own, unshared buffers go
        assert names[0] not in ex._last_donated and names[1] in ex._last_donated
        del old
        ex.forward(is_train=True)
        ex.backward()
        assert set(names) <= set(ex._last_donated)
        view = ex.aux_dict[names[0]].detach()                # the same buffer, another NDArray
        shared = ex.aux_dict[names[1]].as_np_ndarray()        # a view made, not read yet: it may read later
        want = view.asnumpy()
        ex.forward(is_train=True)
        ex.backward()
        assert not set(names) & set(ex._last_donated)
        onp.testing.assert_array_equal(view.asnumpy(), want)
        assert onp.isfinite(shared.asnumpy()).all()          # its buffer was kept (a donated one is deleted)
        alias = mx.nd.zeros(ex.aux_dict[names[1]].shape)
        ex.aux_dict[names[1]].copyto(alias)                   # a copy reads the buffer: handed out too
        want = alias.asnumpy()
        ex.forward(is_train=True)
        ex.backward()
        assert names[1] not in ex._last_donated and names[0] in ex._last_donated
        onp.testing.assert_array_equal(alias.asnumpy(), want)
        ex.forward(is_train=True)                             # the buffers of the last call: owned again
        ex.backward()
        assert set(names) <= set(ex._last_donated)
        doubled, halved = ex.aux_dict[names[1]] * 2, ex.aux_dict[names[1]] * 0.5  # ops read it (lazily)
        ex.forward(is_train=True)
        ex.backward()
        assert names[1] not in ex._last_donated and names[0] in ex._last_donated
        onp.testing.assert_array_equal(doubled.asnumpy(), 4 * halved.asnumpy())  # the old buffer, intact
    ref = _bound("resnet")
    for _ in range(7):  # as many training forwards as above, holding every aux buffer: no donation
        held = [a.to_jax() for a in ref.aux_arrays]
        ref.forward(is_train=True)
        ref.backward()
        assert ref._last_donated == () and not any(h.is_deleted() for h in held)
    for n, a in ref.aux_dict.items():
        onp.testing.assert_allclose(ex.aux_dict[n].asnumpy(), a.asnumpy(), rtol=1e-5, atol=1e-6)


def test_aux_states_read_by_another_thread_while_training(threads_switch_often):
    """A monitor thread reading BatchNorm's statistics while another trains: each read gives the
    statistics of some step (never a buffer a training call gave away), the training ends with the
    values of training alone, and nothing deadlocks."""
    ex, ref = _bound("resnet"), _bound("resnet")
    names = [n for n in ex.aux_dict if n.endswith("moving_var")]
    stop, errors = threading.Event(), []

    def monitor():
        while not stop.is_set():
            try:
                for n in names:
                    assert onp.isfinite(ex.aux_dict[n].asnumpy()).all()
            except Exception as err:  # (reported by the test's thread)
                errors.append(err)
                return

    def train(executor, steps):
        try:
            for _ in range(steps):
                executor.forward(is_train=True)
                executor.backward()
        except Exception as err:
            errors.append(err)
    reader = threading.Thread(target=monitor, daemon=True)
    trainer = threading.Thread(target=train, args=(ex, 300), daemon=True)
    reader.start()
    trainer.start()
    trainer.join(120)
    stop.set()
    reader.join(10)
    assert not trainer.is_alive() and not reader.is_alive(), "deadlocked"
    assert not errors, errors[0]
    train(ref, 300)
    for n, a in ref.aux_dict.items():
        onp.testing.assert_allclose(ex.aux_dict[n].asnumpy(), a.asnumpy(), rtol=1e-5, atol=1e-6)


def test_memory_plan_and_debug_str():
    ex = _bound("mlp")
    fwd, both = ex.memory_plan(), ex.memory_plan(include_backward=True)
    assert fwd.planned_bytes <= both.planned_bytes
    assert ("label", 0) in both.external and ("fc0_weight", 0) in both.external
    text = ex.debug_str()
    for needle in ("Memory plan (forward)", "Memory plan (forward+backward)", "XLA memory analysis",
                   "forward+backward: argument", "temp", f"{100 * both.saving:.1f}% saved"):
        assert needle in text, needle
    report = ex.memory_analysis()
    assert set(report) == {"forward", "training forward", "forward+backward"}
    assert report["forward"]["argument_size_in_bytes"] == sum(
        a.size * onp.dtype(a.dtype).itemsize for a in ex.arg_arrays)


def test_inference_only_executor_reports_forward():
    ex = _used_twice().simple_bind(mx.cpu(), grad_req="null", data=(4, 5))
    assert set(ex.memory_analysis()) == {"forward"}
    text = ex.debug_str()
    assert "Memory plan (forward)" in text and "forward+backward" not in text
    out = ex.forward(data=onp.ones((4, 5), "float32"))[0]
    assert out.shape == (1,)  # MXNet 1.x sum over all axes
    assert jnp.isfinite(jax.device_get(out.to_jax()))
