"""Deferred tape nodes: a hybridized block under record() is differentiated with its loss in one
program, and fused with the optimizer's update; every path gives raw JAX's numbers."""
import re
import weakref

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

from compile_counts import autograd_programs

import mxjax as mx
from mxjax import _tape, autograd, gluon
from mxjax.gluon import nn
from mxjax.graph.lazy import Pending

pytestmark = pytest.mark.usefixtures("tape_recorders")  # the C and the Python recorder

RNG = onp.random.default_rng(3)
X = RNG.normal(size=(6, 5)).astype(onp.float32)
Y = RNG.integers(0, 3, size=6).astype(onp.int32)


def _net(hybridize=True, seed=0):
    mx.random.seed(seed)
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="tanh"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net(mx.np.array(X))
    if hybridize:
        net.hybridize()
    return net


def _params(net):
    return [jnp.asarray(p.data().asnumpy()) for p in net.collect_params().values()]


def _jax_loss(params, x, y):
    w0, b0, w1, b1 = params
    out = jnp.tanh(x @ w0.T + b0) @ w1.T + b1
    return -jnp.take_along_axis(jax.nn.log_softmax(out), y[:, None], axis=1).mean(), out


def _mx_loss(net, x, y):
    out = net(x)
    return -mx.npx.pick(mx.npx.log_softmax(out), y).mean(), out


def _oracle(params):
    (loss, out), grads = jax.value_and_grad(_jax_loss, has_aux=True)(params, jnp.asarray(X), jnp.asarray(Y))
    return onp.asarray(loss), onp.asarray(out), [onp.asarray(g) for g in grads]


def _not_run(x):
    """Whether ``x`` is a lazy output of a deferred node that has not run (a value of its region)."""
    return type(x._var) is Pending and x._var.value is None and type(x._var.segment) is _tape.plan.Plan


def _close(got, want, rtol=1e-5, atol=1e-6):
    onp.testing.assert_allclose(got.asnumpy() if hasattr(got, "asnumpy") else got, want, rtol=rtol, atol=atol)


def test_outputs_are_lazy_until_backward_and_match_jax():
    net = _net()
    want_loss, want_out, want_grads = _oracle(_params(net))
    x, y = mx.np.array(X), mx.np.array(Y)
    with autograd.record():
        loss, out = _mx_loss(net, x, y)
    assert _not_run(out) and _not_run(loss)  # nothing ran yet
    assert out.shape == (6, 3) and loss.shape == ()
    loss.backward()
    params = list(net.collect_params().values())
    assert all(isinstance(p.grad()._var, _tape.pending._GradLazy) for p in params)  # the program has not run yet
    _close(loss, want_loss)
    _close(out, want_out)
    for p, g in zip(params, want_grads):
        _close(p.grad(), g)


def test_the_tape_recorder_in_use_is_the_one_asked_for(tape_recorders, monkeypatch):
    """Once an op's input avals were seen, the C recorder records it alone; the Python one always."""
    from mxjax._tape import recording
    python_calls = []
    python_recorder = recording._record_deferred
    monkeypatch.setattr(recording, "_record_deferred",
                        lambda *a, **k: python_calls.append(a[4]) or python_recorder(*a, **k))
    _tape.clear_caches()  # every op's input avals unseen
    x0 = RNG.normal(size=(5, 11)).astype(onp.float32)
    x = mx.np.array(x0)
    x.attach_grad()
    for _ in range(3):
        with autograd.record():
            parts = mx.np.split(mx.np.tanh(x * 3), [4], axis=1)  # two outputs; a Python scalar input
            loss = (parts[0].sum() + (parts[1] ** 2).sum()) / 2
        loss.backward()
        t = onp.tanh(3 * x0)
        want = onp.concatenate([onp.full((5, 4), 1.0), 2 * t[:, 4:]], axis=1) * 3 * (1 - t ** 2) / 2
        _close(x.grad, want, rtol=1e-5, atol=1e-6)
    ops = 8  # multiply, tanh, split, sum, power, sum, add, divide
    assert len(python_calls) == (ops if tape_recorders == "native" else 3 * ops)

    # a hybridized block whose running statistics are the previous step's lazy outputs
    python_calls.clear()
    net = nn.HybridSequential()
    net.add(nn.Dense(6), nn.BatchNorm(), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(3):
        with autograd.record():
            loss = -mx.npx.pick(mx.npx.log_softmax(net(mx.np.array(X))), mx.np.array(Y)).mean()
        loss.backward()
        trainer.step(1)
    ops = 5  # the block, log_softmax, pick, mean, negative
    assert len(python_calls) == (ops if tape_recorders == "native" else 3 * ops)


def test_the_first_hybridized_training_step_compiles_one_program():
    """Its first call is trace + one XLA compile, as a hand-written jax.jit step's: the head
    gradient and the optimizer's hyper-parameters are put on the device, not made by programs."""
    mx.random.seed(5)
    net = nn.HybridSequential()
    net.add(nn.Dense(7, activation="relu"), nn.Dense(3))  # shapes no other test uses
    net.initialize(mx.init.Xavier())
    x, y = mx.np.array(RNG.normal(size=(9, 13)).astype(onp.float32)), mx.np.array(Y[:3].repeat(3))
    net(x).wait_to_read()
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "wd": 0.01})
    compiles = []

    def listen(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(duration)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        with autograd.record():
            loss = -mx.npx.pick(mx.npx.log_softmax(net(x)), y).mean()
        loss.backward()
        trainer.step(9)
        loss.wait_to_read()
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert len(compiles) == 1
    assert onp.isfinite(loss.item())


def test_reading_a_value_before_backward_runs_nodes_one_by_one():
    net = _net()
    _, _, want_grads = _oracle(_params(net))
    with autograd.record():
        loss, out = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
        assert onp.isfinite(float(loss))  # materializes the deferred nodes
        assert not _not_run(loss)
    loss.backward()
    for p, g in zip(net.collect_params().values(), want_grads):
        _close(p.grad(), g)


def test_a_repeated_read_before_backward_runs_the_imperative_ops_and_their_backward_as_one_program_each():
    x = mx.np.array(X)
    x.attach_grad()
    counts, values = [], []
    for _ in range(4):
        before = autograd_programs()
        with autograd.record():
            y = (mx.np.tanh(x * 2) + 1).sum()
            values.append(float(y))  # the four ops run, each with its VJP
        y.backward()
        _close(x.grad, 2 * (1 - onp.tanh(2 * X) ** 2), rtol=1e-5, atol=1e-6)  # (the backward runs when read)
        counts.append(autograd_programs() - before)
    # op by op at the first sighting, then one program for the read and one for the backward, compiled once
    assert counts == [0, 2, 0, 0]
    onp.testing.assert_allclose(values, (onp.tanh(2 * X) + 1).sum(), rtol=1e-5)


def test_a_repeated_read_runs_a_hybridized_block_and_its_loss_and_their_backward_as_one_program_each():
    net = _net()
    want_loss, _, want_grads = _oracle(_params(net))
    counts = []
    for _ in range(4):
        before = autograd_programs()
        with autograd.record():
            loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
            _close(float(loss), want_loss)  # the block and the four loss ops run, each with its VJP
        loss.backward()
        for p, g in zip(net.collect_params().values(), want_grads):
            _close(p.grad(), g)  # (the backward runs when a gradient is read)
        counts.append(autograd_programs() - before)
    assert counts == [0, 2, 0, 0]  # node by node at the first sighting, then the read's and the backward's


@pytest.mark.parametrize("hybridize", [True, False])
def test_a_loss_read_inside_record_at_every_step_trains_alike_and_compiles_once(hybridize):
    """Reading the loss before backward (as a loop printing it does) runs the region's ops with
    their VJPs -- as one program once the structure repeats -- and trains as a loop reading it
    after the step does; the steps after the structure repeats compile nothing new.  So does a loop
    with bulk execution off (the backward of the ops that ran is pending, and runs with the update)."""
    def train(read):
        net = _net(hybridize)
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5, "momentum": 0.9})
        seen, compiled = [], []
        for _ in range(5):
            before = mx.npx.compile_stats()["entries"]
            with autograd.record():
                loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
                if read:
                    seen.append(float(loss))
            loss.backward()
            trainer.step(1)
            if not read:
                seen.append(float(loss))
            compiled.append(mx.npx.compile_stats()["entries"] - before)
        return seen, [p.data().asnumpy() for p in net.collect_params().values()], compiled
    read_losses, read_weights, compiled = train(True)
    losses, weights, _ = train(False)
    onp.testing.assert_allclose(read_losses, losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(read_weights, weights):
        onp.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert compiled[-2:] == [0, 0], compiled
    previous = mx.engine.set_imperative_bulk(False)  # every op runs with its VJP, as after a read
    try:
        eager_losses, eager_weights, compiled = train(False)
    finally:
        mx.engine.set_imperative_bulk(previous["enabled"])
    onp.testing.assert_allclose(eager_losses, losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(eager_weights, weights):
        onp.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert compiled[-2:] == [0, 0], compiled


def _count_walks(monkeypatch):
    """Backwards that walk the graph (not a region sealed from its head as it was recorded)."""
    calls = []
    real = autograd._run_backward
    monkeypatch.setattr(autograd, "_run_backward", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_the_region_wired_while_recording_serves_backward(monkeypatch):
    walks = _count_walks(monkeypatch)
    net = _net()
    want_loss, want_out, want_grads = _oracle(_params(net))
    with autograd.record():
        loss, out = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    region = loss._ag[0].region
    assert region is out._ag[0].region and len(region.refs) == 5  # the block, log_softmax, pick, mean, -
    loss.backward()
    assert not walks  # no walk of the graph: the region was the plan
    _close(loss, want_loss)
    _close(out, want_out)
    for p, g in zip(net.collect_params().values(), want_grads):
        _close(p.grad(), g)
    nodes = [ref() for ref in region.refs]
    assert all(node.region is None for node in nodes if node is not None)  # run: the region's links are dropped
    assert region.nodes == [] and region.ext_values == []  # and the region lets go of its nodes and inputs


def test_a_region_left_without_backward_is_freed_without_the_cycle_collector():
    import gc
    import weakref
    net = _net()
    gc.disable()
    try:
        with autograd.record():
            loss, out = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
        node, region = weakref.ref(loss._ag[0]), weakref.ref(loss._ag[0].region)
        del loss, out
        assert node() is None and region() is None  # no cycle between a region and its nodes
    finally:
        gc.enable()


@pytest.mark.parametrize("case", ["branch", "read", "two_blocks"])
def test_every_deferred_node_of_a_thread_joins_its_region(monkeypatch, case):
    """A node the loss does not read (computed by the loss's program, with its VJP), a read before
    the loss (the region runs; what follows starts another, whose backward walks to the first) and
    two calls of the block (one region, not two) all give the oracle's gradients."""
    walks = _count_walks(monkeypatch)
    net = _net()
    _, want_out, want_grads = _oracle(_params(net))
    x, y = mx.np.array(X), mx.np.array(Y)
    with autograd.record():
        out = net(x)
        if case == "branch":  # recorded from the region but not part of the loss
            extra = out * 2
        scores = mx.npx.log_softmax(out)
        if case == "read":  # the region runs, each node with its VJP; the nodes after it start a new one
            scores = scores + out * 0
            _close(out, want_out)
        loss = -mx.npx.pick(scores, y).mean()
        if case == "two_blocks":
            loss = loss + (net(x) * 0).sum()
    assert len({id(loss._ag[0].region), id(out._ag[0].region)}) == (2 if case == "read" else 1)
    loss.backward()
    assert len(walks) == (1 if case == "read" else 0)
    for p, g in zip(net.collect_params().values(), want_grads):
        _close(p.grad(), g)
    if case == "branch":
        _close(extra, 2 * want_out)


def test_a_node_the_backward_does_not_reach_keeps_its_vjp_for_a_later_backward():
    """Two losses recorded together (one region): the first backward writes only the gradients it
    reaches, and computes the other loss's nodes with their VJPs, so its own backward still works
    -- op by op at first, then in the first backward's one program."""
    w0 = RNG.normal(size=(5,)).astype(onp.float32)
    for _ in range(3):
        x, w = mx.np.array(X), mx.np.array(w0)
        x.attach_grad()
        w.attach_grad()
        with autograd.record():
            a = (mx.np.tanh(x) * 2).sum()
            b = (w ** 2).sum()
        w.grad[:] = 7
        a.backward()
        _close(x.grad, 2 * (1 - onp.tanh(X) ** 2), rtol=1e-5)
        _close(w.grad, onp.full(5, 7, onp.float32))  # not reached: left as it was, as MXNet does
        b.backward()
        _close(w.grad, 2 * w0)
        _close(b, (w0 ** 2).sum())


@pytest.mark.parametrize("hold", ["nothing", "array", "view", "weakref"])
def test_the_program_keeps_only_outputs_something_can_still_read(hold):
    import weakref
    net = _net()
    want_loss, want_out, want_grads = _oracle(_params(net))
    x, y = mx.np.array(X), mx.np.array(Y)
    with autograd.record():
        out = net(x)
        scores = mx.npx.log_softmax(out)
        held = {"nothing": None, "array": scores, "view": scores.as_nd_ndarray(),
                "weakref": weakref.ref(scores)}[hold]
        loss = -mx.npx.pick(scores, y).mean()
        del scores
    region = loss._ag[0].region
    loss.backward()
    # per node (block, log_softmax, pick, mean, -): the user's out and loss, and what is held
    # (a weak reference keeps nothing: the array died with ``del scores``, as in MXNet)
    held_strongly = hold in ("array", "view")
    assert region.wiring[4] == ((True,), (held_strongly,), (False,), (False,), (True,))
    _close(loss, want_loss)
    _close(out, want_out)
    if held_strongly:
        _close(held, onp.asarray(jax.nn.log_softmax(want_out)))
    elif hold == "weakref":
        assert held() is None
    for p, g in zip(net.collect_params().values(), want_grads):
        _close(p.grad(), g)


def test_trainer_step_fuses_with_backward_and_matches_sgd(monkeypatch):
    built = []
    real = _tape.pending._with_update
    monkeypatch.setattr(_tape.pending, "_with_update", lambda *a: built.append(a) or real(*a))
    _tape.clear_caches()
    net = _net()
    params = _params(net)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    x, y = mx.np.array(X), mx.np.array(Y)
    momentum = [onp.zeros_like(p) for p in params]
    for _ in range(3):
        with autograd.record():
            loss, _ = _mx_loss(net, x, y)
        loss.backward()
        trainer.step(2)
        _, _, grads = _oracle(params)
        new = []
        for i, (w, g) in enumerate(zip(params, grads)):  # MXNet's SGD: mom = 0.9 mom - lr (g / 2 + wd w)
            momentum[i] = 0.9 * momentum[i] - 0.1 * (g / 2 + 0.01 * onp.asarray(w))
            new.append(jnp.asarray(onp.asarray(w) + momentum[i]))
        params = new
        for p, g in zip(net.collect_params().values(), grads):  # the gradients are kept, as in MXNet
            _close(p.grad(), g)
    for p, want in zip(net.collect_params().values(), params):
        _close(p.data(), onp.asarray(want), rtol=1e-4, atol=1e-5)
    assert len(built) == 1  # backward + update compiled together once, reused by later steps


def test_fused_update_donates_each_weight_into_its_new_value(monkeypatch):
    # a donated buffer is reused for the first output of its shape: if a gradient came first, XLA
    # would have to copy every weight before the program could start (it did, once)
    calls = []
    real = _tape.pending._with_update

    def spy(*a):
        program = real(*a)

        def run(*args):
            calls.append((program, jax.tree.map(lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype)
                                                if isinstance(v, jax.Array) else v, args)))
            return program(*args)
        return run
    monkeypatch.setattr(_tape.pending, "_with_update", spy)
    _tape.clear_caches()
    net = _net()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    with autograd.record():
        loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    loss.backward()
    trainer.step(1)
    (program, args), = calls
    text = program.lower(*args).compile().as_text()
    aliases = re.search(r"input_output_alias=\{(.*?)\}, entry", text).group(1)
    outputs = [int(o) for o in re.findall(r"\{(\d+)\}: \(", aliases)]
    n_weights, n_states = len(args[3]), len(jax.tree.leaves(args[4]))
    assert len(outputs) == n_weights + n_states == 8  # 4 weights, 4 momentum buffers, all donated
    assert sorted(outputs) == list(range(n_weights + n_states))  # ...into the new weights and states


def test_small_gradients_of_a_fused_step_come_packed_and_are_sliced_when_read(monkeypatch):
    monkeypatch.setattr(_tape.pending, "_PACK_LIMIT", 30)  # the 8x5 weight (40) alone; 8, 3x8 and 3 packed
    _tape.clear_caches()
    net = _net()
    params = list(net.collect_params().values())
    _, _, want = _oracle(_params(net))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    loss.backward()
    early_view = params[1].grad().as_nd_ndarray()  # shares the lazy gradient
    run = weakref.ref(params[0].grad()._var.run)
    trainer.step(1)
    assert params[0].grad()._var is None  # output on its own
    lazies = [p.grad()._var for p in params[1:]]
    assert all(type(v) is _tape.pending._PackedGrad for v in lazies)  # still lazy: sliced out of one output
    assert all(v.packed is lazies[0].packed for v in lazies) and lazies[0].packed.shape == (8 + 24 + 3,)
    for p, g in zip(params, want):
        _close(p.grad(), g)
        assert p.grad().dtype == onp.float32
    assert run() is not None  # the early view's lazy gradient still reads through the run...
    _close(early_view, want[1])
    assert run() is None  # ...and once it has, nothing holds the run and its other outputs


def test_two_trainers_after_one_backward_read_the_packed_gradients():
    net = _net()
    params = list(net.collect_params().values())
    start, (_, _, grads) = _params(net), _oracle(_params(net))
    first = gluon.Trainer({p.name: p for p in params[:2]}, "sgd", {"learning_rate": 0.1})
    second = gluon.Trainer({p.name: p for p in params[2:]}, "sgd", {"learning_rate": 0.1})
    with autograd.record():
        loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    loss.backward()
    first.step(1)  # runs backward and update together; the second trainer reads its results
    second.step(1)
    for p, w, g in zip(params, start, grads):
        _close(p.data(), onp.asarray(w) - 0.1 * g)
        _close(p.grad(), g)


def test_float16_training_with_master_weights_matches_imperative_training():
    nets = [_net(hybridize=h) for h in (True, False)]
    x = mx.np.array(X.astype(onp.float16))
    for net in nets:
        net.cast("float16")
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "multi_precision": True})
        for _ in range(2):
            with autograd.record():
                loss, _ = _mx_loss(net, x, mx.np.array(Y))
            loss.backward()
            trainer.step(1)
    assert all(type(p.grad()._var) is _tape.pending._PackedGrad for p in nets[0].collect_params().values())  # fused
    for a, b in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        assert a.data().dtype == a.grad().dtype == onp.float16
        _close(a.data(), b.data().asnumpy(), rtol=2e-3, atol=2e-3)
        _close(a.grad(), b.grad().asnumpy(), rtol=2e-2, atol=2e-3)


def test_packing_groups_small_gradients_by_dtype():
    layout = _tape.pending._Packing([((4, 5), jnp.float32), ((3,), jnp.float16), ((7,), jnp.float32),
                             ((2, 2), jnp.float16), ((9,), jnp.bfloat16), ((1 << 20,), jnp.float32)])
    assert layout.alone == [4, 5]  # a lone bfloat16 gains nothing; too big to pack
    assert layout.groups == [[0, 2], [1, 3]]
    assert layout.places[2] == (0, 20, (7,)) and layout.places[3] == (1, 3, (2, 2))
    grads = [jnp.arange(20.0).reshape(4, 5), jnp.ones(3, jnp.float16), jnp.full(7, 2.0),
             jnp.zeros((2, 2), jnp.float16), jnp.ones(9, jnp.bfloat16), jnp.ones(1 << 20)]
    outputs = layout.pack(grads)
    assert [a is None for a in layout.split(outputs)] == [True, True, True, True, False, False]
    packed = outputs[len(layout.alone):]
    assert [p.shape for p in packed] == [(27,), (7,)]
    onp.testing.assert_array_equal(_tape.pending._unpack(packed[0], 20, (7,)), grads[2])
    onp.testing.assert_array_equal(_tape.pending._unpack(packed[1], 3, (2, 2)), grads[3])


def test_grad_req_add_accumulates_across_fused_steps():
    net = _net()
    _, _, want = _oracle(_params(net))
    for p in net.collect_params().values():
        p.grad_req = "add"
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.0})  # weights stay put
    for _ in range(3):
        with autograd.record():
            loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
        loss.backward()
        trainer.step(1)  # the packed gradients of one step are read as the next one's old values
    for p, g in zip(net.collect_params().values(), want):
        _close(p.grad(), 3 * g)


def test_hybridized_training_equals_imperative_training():
    nets = [_net(hybridize=h) for h in (True, False)]
    for net in nets:
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
        for _ in range(4):
            with autograd.record():
                loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
            loss.backward()
            trainer.step(6)
    for a, b in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        _close(a.data(), b.data().asnumpy(), rtol=1e-4, atol=1e-6)


def test_grad_req_add_accumulates_through_lazy_backwards():
    net = _net()
    _, _, want = _oracle(_params(net))
    for p in net.collect_params().values():
        p.grad_req = "add"
    for _ in range(2):
        with autograd.record():
            loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
        loss.backward()
    for p, g in zip(net.collect_params().values(), want):
        _close(p.grad(), 2 * g)


def test_zero_grad_after_a_lazy_backward_does_not_run_it(monkeypatch):
    net = _net()
    want_loss, _, _ = _oracle(_params(net))
    runs = []
    real = _tape.pending.PendingBackward.run
    monkeypatch.setattr(_tape.pending.PendingBackward, "run", lambda self, *a, **k: runs.append(1) or real(self, *a, **k))
    with autograd.record():
        loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    loss.backward()
    net.zero_grad()
    assert not runs
    for p in net.collect_params().values():
        _close(p.grad(), onp.zeros(p.shape, onp.float32))
    _close(loss, want_loss)  # reading the loss runs the program, which leaves the zeroed buffers alone
    assert runs
    for p in net.collect_params().values():
        _close(p.grad(), onp.zeros(p.shape, onp.float32))


def test_retain_graph_and_a_second_backward():
    net = _net()
    _, _, want = _oracle(_params(net))
    with autograd.record():
        loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    loss.backward(retain_graph=True)
    loss.backward()
    for p, g in zip(net.collect_params().values(), want):
        _close(p.grad(), g)
    with pytest.raises(mx.MXNetError, match="already freed"):
        loss.backward()


def test_second_backward_after_a_lazy_one_says_freed():
    net = _net()
    with autograd.record():
        loss, _ = _mx_loss(net, mx.np.array(X), mx.np.array(Y))
    loss.backward()
    with pytest.raises(mx.MXNetError, match="already freed"):
        loss.backward()


def test_input_gradient_chained_blocks_and_a_block_used_twice():
    first, second = _net(), nn.Dense(3, in_units=3)
    second.initialize(mx.init.Uniform(0.5))
    second.hybridize()
    x = mx.np.array(X)
    x.attach_grad()
    with autograd.record():
        y = (second(first(x)) ** 2).sum() + (first(x) * 0.5).sum()  # the first block used twice
    y.backward()
    p0, p2 = _params(first), [jnp.asarray(p.data().asnumpy()) for p in second.collect_params().values()]

    def f(xx, p0, p2):
        out = _jax_loss(p0, xx, jnp.asarray(Y))[1]
        return ((out @ p2[0].T + p2[1]) ** 2).sum() + (out * 0.5).sum()
    gx, g0, g2 = jax.grad(f, argnums=(0, 1, 2))(jnp.asarray(X), p0, p2)
    _close(x.grad, onp.asarray(gx), rtol=1e-4, atol=1e-5)
    for p, g in zip(first.collect_params().values(), g0):
        _close(p.grad(), onp.asarray(g), rtol=1e-4, atol=1e-5)
    for p, g in zip(second.collect_params().values(), g2):
        _close(p.grad(), onp.asarray(g), rtol=1e-4, atol=1e-5)


def test_higher_order_gradient_through_a_hybridized_block():
    net = _net()
    x = mx.np.array(X)
    x.attach_grad()
    with autograd.record():
        out = net(x).sum()
        (gx,) = [autograd.grad(out, [x], create_graph=True)[0]]
        z = (gx ** 2).sum()
    z.backward()
    p = _params(net)

    def g(xx):
        return jax.grad(lambda v: _jax_loss(p, v, jnp.asarray(Y))[1].sum())(xx)
    want = jax.grad(lambda v: (g(v) ** 2).sum())(jnp.asarray(X))
    _close(x.grad, onp.asarray(want), rtol=1e-4, atol=1e-6)


def test_batchnorm_running_stats_written_by_the_fused_program():
    def make(h):
        net = nn.HybridSequential()
        net.add(nn.Dense(4), nn.BatchNorm())
        net.initialize(mx.init.One())
        if h:
            net.hybridize()
        return net
    nets = [make(True), make(False)]
    for net in nets:
        with autograd.record():
            loss = (net(mx.np.array(X)) ** 2).sum()
        loss.backward()
    for a, b in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        _close(a.data(), b.data().asnumpy(), rtol=1e-5, atol=1e-6)
    mean = nets[0][1].running_mean.data().asnumpy()
    assert not onp.allclose(mean, 0)  # momentum 0.9: 0.1 * the batch mean


@pytest.mark.parametrize("hybridize", [True, False])
@pytest.mark.parametrize("read", ["directly", "by_a_later_op"])
def test_running_stats_written_by_a_call_whose_output_nobody_keeps(hybridize, read):
    """A BatchNorm call under ``record`` whose output is dropped at once: nothing holds its node
    any more, only the running mean it wrote holds that value; the region still computes it, read
    directly, or by a later op of the same region (and that op's backward, the block called again
    before it)."""
    import gc
    bn = nn.BatchNorm(in_channels=5)
    bn.initialize()
    if hybridize:
        bn.hybridize()
    w = mx.np.ones((5,))
    w.attach_grad()
    want = onp.zeros(5, onp.float32)
    for _ in range(3):
        want = 0.9 * want + 0.1 * X.mean(axis=0)  # momentum 0.9
        with autograd.record():
            bn(mx.np.array(X))
            gc.collect()
            if read == "by_a_later_op":
                loss = (w * bn.running_mean.data()).sum() * 2  # (w: recorded, as a later op of the region)
                bn(mx.np.array(X))
                gc.collect()
        if read == "by_a_later_op":
            loss.backward()
            _close(w.grad, 2 * want, rtol=1e-5)
            want = 0.9 * want + 0.1 * X.mean(axis=0)
        _close(bn.running_mean.data(), want, rtol=1e-5)


def test_a_call_read_and_dropped_lets_go_of_its_residuals_before_its_running_stats_are_read():
    """A read inside ``record`` runs the call with its VJP; once its output is dropped, nothing can
    differentiate through it, so its residuals go -- though the running mean it wrote (a value of
    the same node) is still held, not read yet, and computed right."""
    import gc
    net = nn.HybridSequential()
    net.add(nn.Dense(37, in_units=29), nn.BatchNorm(in_channels=37))
    net.initialize()
    net.hybridize()
    x_host = RNG.normal(size=(13, 29)).astype(onp.float32)  # (13, 37): the shape of the residuals
    with autograd.record():
        out = net(mx.np.array(x_host))
    out.asnumpy()
    del out
    gc.collect()
    alive = sum(a.shape == (13, 37) for a in jax.live_arrays("cpu"))
    assert alive == 0, f"{alive} buffers of the call's activations alive"
    w, b = (p.data().asnumpy() for p in net[0].collect_params().values())
    _close(net[1].running_mean.data(), 0.1 * (x_host @ w.T + b).mean(axis=0), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("hybridize", [True, False])
def test_a_value_detached_inside_record_stays_lazy_and_stops_the_gradient(hybridize):
    """A GAN's pattern: a call's output detached inside ``record`` and used beside the output
    itself.  The detached array shares the value, not computed yet, so the region is not run
    early; the backward, one program once the structure repeats, differentiates only through
    the attached use, as the node-by-node backward does: d/dparams of sum(stop(out) * out)."""
    net = _net(hybridize)
    params = _params(net)
    out_jax, vjp = jax.vjp(lambda p: _jax_loss(p, jnp.asarray(X), jnp.asarray(Y))[1], params)
    want = [onp.asarray(g) for g in vjp(out_jax)[0]]
    for step in range(4):  # the first sightings run node by node, later ones as one program
        with autograd.record():
            out = net(mx.np.array(X))
            fixed = out.detach()
            assert _not_run(fixed) and fixed._ag is None
            loss = (fixed * out).sum()
        loss.backward()
        for p, g in zip(net.collect_params().values(), want):
            _close(p.grad(), g, rtol=1e-4, atol=1e-5)
        _close(fixed, out_jax, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hybridize", [True, False])
def test_ops_on_a_detached_value_inside_record_join_its_region_untracked(hybridize):
    """A target computed from the output detached (``out.detach() * 0.5 + 0.1``): ops nothing
    differentiates, on a value not computed yet, join its region (no early run) and give arrays
    autograd does not track; the loss's gradient goes through ``out`` only."""
    net = _net(hybridize)
    params = _params(net)
    out_jax, vjp = jax.vjp(lambda p: _jax_loss(p, jnp.asarray(X), jnp.asarray(Y))[1], params)
    want = [onp.asarray(g) for g in vjp(out_jax - 0.2)[0]]  # d/dout of sum((out - target)^2)
    for step in range(4):  # the first sightings run node by node, later ones as one program
        with autograd.record():
            out = net(mx.np.array(X))
            target = out.detach() * 0.5 + 0.1
            assert _not_run(target) and _not_run(out) and target._ag is None
            loss = ((out - target) ** 2).sum()
        loss.backward()
        for p, g in zip(net.collect_params().values(), want):
            _close(p.grad(), g, rtol=1e-4, atol=1e-5)
        _close(target, onp.asarray(out_jax) * 0.5 + 0.1, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hybridize", [True, False])
def test_a_call_read_only_detached_keeps_its_backward_for_a_later_record(hybridize):
    """A GAN's step: the discriminator's backward reads the generator's output only detached, so
    it does not reach the generator, whose call (in the same region) keeps its VJP; the
    generator's backward, recorded later through the same output, uses it."""
    net = _net(hybridize)
    critic = nn.Dense(1, in_units=3)
    critic.initialize()
    if hybridize:
        critic.hybridize()
    params = _params(net)
    w = critic.weight.data().asnumpy()
    out_jax, vjp = jax.vjp(lambda p: _jax_loss(p, jnp.asarray(X), jnp.asarray(Y))[1], params)
    want = [onp.asarray(g) for g in vjp(jnp.broadcast_to(jnp.asarray(w), out_jax.shape))[0]]
    for step in range(4):  # the first sightings run node by node, later ones as one program
        with autograd.record():
            fake = net(mx.np.array(X))
            critic_loss = critic(fake.detach()).sum()
        critic_loss.backward()
        _close(critic.weight.grad(), onp.asarray(out_jax).sum(axis=0, keepdims=True), rtol=1e-5, atol=1e-5)
        with autograd.record():
            loss = critic(fake).sum()
        loss.backward()
        for p, g in zip(net.collect_params().values(), want):
            _close(p.grad(), g, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("hybridize", [True, False])
@pytest.mark.parametrize("read", [False, True])
def test_plain_ops_inside_record_before_the_network_join_its_region(hybridize, read):
    """``net(x * scale + offset)`` inside ``record``: the plain ops on concrete arrays (a Python scalar
    that changes at every step, a NumPy array) are held back in the thread's bulk segment, and
    the network reading their value takes the segment into its region (not run as a program of its
    own); one program computes both once the structure repeats, and the changing scalar does
    not make a new structure.  Read before ``backward`` (``read``), the region runs there.  The
    gradients and the input's value as JAX's at every step."""
    net = _net(hybridize)
    params = _params(net)
    offset = RNG.normal(size=X.shape).astype(onp.float32)
    before = None
    for step in range(6):  # the first sightings run node by node, later ones as one program
        scale = 1.0 + 0.25 * step
        x_jax = jnp.asarray(X) * scale + offset
        (loss_jax, _), grads = jax.value_and_grad(_jax_loss, has_aux=True)(params, x_jax, jnp.asarray(Y))
        with autograd.record():
            x = mx.np.array(X) * scale + offset
            loss, out = _mx_loss(net, x, mx.np.array(Y))
            assert _not_run(out) and x._ag is None
            assert _not_run(x) or (hybridize and step == 0)  # (a block's first call, its trace, reads it)
            if read:
                _close(x, x_jax, rtol=1e-6)
        loss.backward()
        for p, g in zip(net.collect_params().values(), grads):
            _close(p.grad(), g, rtol=1e-4, atol=1e-5)
        _close(loss, loss_jax, rtol=1e-5)
        _close(x, x_jax, rtol=1e-6)
        if step == 3:
            before = autograd_programs()
    assert autograd_programs() == before  # nothing compiled for the last two steps: one structure


def test_a_segment_taken_into_a_region_computes_its_other_values_there():
    """The bulk segment a region takes in holds what was recorded before too (a running sum of the
    last step's loss, not read yet): those values are computed with the region, and a value
    nobody holds is not returned."""
    w = mx.np.array(onp.linspace(-1, 1, 15).reshape(5, 3).astype(onp.float32))
    w.attach_grad()
    total = mx.np.zeros(())
    want_total = 0.0
    for step in range(4):
        pending = total + 0.0  # recorded in the segment, before record
        with autograd.record():
            x = mx.np.array(X) / 2  # the same segment
            loss = mx.np.dot(x, w).sum()
            assert _not_run(pending) and _not_run(x)
        loss.backward()
        total = pending + loss
        want_total += float((X / 2 @ onp.asarray(w)).sum())
        _close(w.grad, onp.broadcast_to((X / 2).sum(axis=0)[:, None], (5, 3)), rtol=1e-5)
    _close(total, want_total, rtol=1e-5)


def test_a_segment_value_read_by_another_thread_while_a_region_takes_it_in(threads_switch_often):
    """Another thread reads a value of this thread's segment while the tape takes the segment into
    its region: the read runs whichever holds it then (the segment, or the region it went to)."""
    import threading
    w = mx.np.ones((5, 2))
    w.attach_grad()
    for step in range(60):
        with autograd.record():
            x = mx.np.array(X) * float(step)
            got = []
            reader = threading.Thread(target=lambda: got.append(x.asnumpy()))
            reader.start()
            loss = mx.np.dot(x, w).sum()
            reader.join()
        loss.backward()
        _close(got[0], X * float(step), rtol=1e-6)
        _close(w.grad, onp.broadcast_to((X * float(step)).sum(axis=0)[:, None], (5, 2)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("hybridize", [True, False])
def test_values_not_run_yet_are_computed_before_an_update_donates_the_weights_they_read(hybridize):
    """Values recorded and not run yet when ``trainer.step`` donates the weights they read -- a
    region with no backward (an extra forward under ``record``), holding a segment it took in (a
    weight's sum, recorded before) -- are computed first, from the old weights; before, reading
    them afterwards failed on the deleted buffers."""
    net = _net(hybridize)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    x = mx.np.array(X)
    for step in range(3):
        params = _params(net)
        with autograd.record():
            loss, _ = _mx_loss(net, x, mx.np.array(Y))
        loss.backward()
        weight_sum = net[0].weight.data() * 1.0  # a plain op, recorded in the bulk segment
        with autograd.record():
            extra = net(x + weight_sum.sum() * 0.0)  # reads it: its region takes the segment in
        trainer.step(1)
        assert not onp.allclose(net[0].weight.data().asnumpy(), onp.asarray(params[0]))
        _close(extra, _jax_loss(params, jnp.asarray(X), jnp.asarray(Y))[1], rtol=1e-5, atol=1e-6)
        _close(weight_sum, onp.asarray(params[0]))


@pytest.mark.parametrize("hybridize", [True, False])
@pytest.mark.parametrize("shared", [False, True])
def test_a_backward_into_a_call_that_ran_earlier_is_one_program_with_the_update(hybridize, shared, monkeypatch):
    """A GAN's generator step: the region's backward reaches the generator's call, which ran with its
    VJP in the discriminator's step.  The call's VJP is applied inside the region's program (one
    pending backward, which ``trainer.step`` runs with its update); with ``shared`` the region also
    calls the generator itself, whose weights then get both gradients, added.  Gradients of both
    nets and the updated weights as JAX's."""
    net = _net(hybridize)
    critic = nn.Dense(1, in_units=3)
    critic.initialize(mx.init.Xavier())
    if hybridize:
        critic.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    x, x2 = mx.np.array(X), mx.np.array(X[::-1] * 0.5)

    def jax_loss(params, w, b):
        fake = _jax_loss(params, jnp.asarray(X), jnp.asarray(Y))[1]
        extra = _jax_loss(params, jnp.asarray(X[::-1] * 0.5), jnp.asarray(Y))[1].sum() if shared else 0.0
        return ((fake @ w.T + b) ** 2).sum() + extra

    fused, with_update = [], []
    run = _tape.pending.PendingBackward.run

    def watched(self, update=None):
        result = run(self, update)
        with_update.append(update is not None and result is not None)
        return result
    monkeypatch.setattr(_tape.pending.PendingBackward, "run", watched)
    for step in range(5):  # the first sightings apply the VJP as a program of its own
        with autograd.record():
            fake = net(x)
            critic_loss = critic(fake.detach()).sum()
        critic_loss.backward()
        params = _params(net)
        w, b = jnp.asarray(critic.weight.data().asnumpy()), jnp.asarray(critic.bias.data().asnumpy())
        grads, grad_w, _ = jax.grad(jax_loss, argnums=(0, 1, 2))(params, w, b)
        with autograd.record():
            loss = (critic(fake) ** 2).sum()
            if shared:
                loss = loss + net(x2).sum()
        loss.backward()
        fused.append(autograd.pending_backward([p.grad() for p in net.collect_params().values()]) is not None)
        with_update.clear()
        trainer.step(1)
        fused[-1] = fused[-1] and with_update == [True]  # the backward ran in the update's program
        for p, g, old in zip(net.collect_params().values(), grads, params):
            _close(p.grad(), g, rtol=1e-4, atol=1e-5)
            _close(p.data(), old - 0.01 * g, rtol=1e-4, atol=1e-5)
        _close(critic.weight.grad(), grad_w, rtol=1e-4, atol=1e-5)
    assert fused[-2:] == [True, True]


def test_shape_error_in_a_deferred_op_names_the_op():
    net = _net()
    with autograd.record():
        out = net(mx.np.array(X))
        with pytest.raises(mx.MXNetError, match="dot"):
            mx.np.dot(out, mx.np.ones((4, 2)))


def test_a_loop_recording_values_it_drops_does_not_hold_them_all():
    """Each value is dropped only after the next op joined its region: without a bound the region
    (and every input it read) would live as long as the loop."""
    import gc
    w = mx.np.ones((4,))
    w.attach_grad()
    first = None
    with autograd.record():
        for i in range(2 * _tape.plan.Plan.CAP + 2):
            x = mx.np.array(onp.full((4,), i, onp.float32))
            if first is None:
                first = weakref.ref(x._data)
            y = x * w
    gc.collect()
    assert first() is None
    assert len(y._ag[0].region.refs) <= _tape.plan.Plan.CAP
    _close(y, onp.full(4, 2 * _tape.plan.Plan.CAP + 1, onp.float32))


def test_values_kept_from_a_region_that_ran_hold_none_of_the_inputs_it_read():
    """A region's values point to it (as a bulk segment's do): once it ran, the values it read from
    outside must not live on in it -- a loop keeping each step's loss would keep every old weight."""
    import gc
    shape = (29, 31)  # a shape no other array of this test has
    gc.collect()
    w = mx.np.array(onp.linspace(-1, 1, 29 * 31).reshape(shape).astype("float32"))
    w.attach_grad()
    v = mx.np.ones((31,))
    losses = []
    for _ in range(4):
        with autograd.record():
            loss = mx.np.dot(w, v).sum()
        loss.backward()
        losses.append(loss)
        w[:] = w - 0.01 * w.grad  # a new buffer for w: the old one is the regions' only
    gc.collect()
    alive = sum(a.shape == shape for a in jax.live_arrays("cpu"))
    assert alive == 2, f"{alive} buffers of shape {shape} alive: w, its gradient"
    _close(losses[-1], (onp.linspace(-1, 1, 29 * 31) - 0.03).sum(), rtol=1e-4)


def test_a_value_read_by_another_thread_while_its_region_grows(threads_switch_often):
    """Another thread reads the newest value of a region this thread is still recording into (a
    monitor printing activations): the read runs the region, and each op recorded meanwhile either
    joined it before the run or starts the next region -- none joins a region that already ran
    (whose values would never be computed), and no input is taken as the shape stand-in it was a
    moment before.  Gradients as jax.grad's at every step."""
    import threading

    def chain(w):
        x = w * 1.0
        for _ in range(20):
            x = jnp.tanh(x) * 1.01 + w
        return x.sum()

    want = onp.asarray(jax.grad(chain)(jnp.ones(8)))
    w = mx.np.ones((8,))
    w.attach_grad()
    latest, stop, errors = [None], threading.Event(), []

    def monitor():
        while not stop.is_set():
            value = latest[0]
            if value is not None:
                try:
                    value.asnumpy()
                except Exception as err:  # (reported by the test's thread)
                    errors.append(err)
                    return
    thread = threading.Thread(target=monitor, daemon=True)
    thread.start()
    try:
        for _ in range(150):
            with autograd.record():
                x = w * 1.0
                for _ in range(20):
                    x = mx.np.tanh(x) * 1.01 + w
                    latest[0] = x
                loss = x.sum()
            loss.backward()
            _close(w.grad, want, rtol=1e-5)
    finally:
        stop.set()
        thread.join(60)
    assert not errors, repr(errors[0])
