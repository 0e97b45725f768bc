"""Adamax, Nadam, AdaBelief, FTML, LANS, DCASGD, SGLD and Test against NumPy transcriptions of
MXNet 2's formulas (4 steps, wd, clip_gradient, rescale_grad, lr_mult/wd_mult, a FactorScheduler),
MXNet 2's constructor defaults, the step/fused_step/update API, a custom MXNet-2-style optimizer,
and the optimizers through gluon.Trainer (float32 and float16 multi_precision)."""
import jax
import jax.numpy as jnp
import numpy as onp
import optax
import pytest

import mxjax as mx
from mxjax import autograd, gluon, lr_scheduler
from mxjax import optimizer as opt
from mxjax.gluon import nn

PRE = dict(rescale_grad=0.8, clip_gradient=0.3, wd=0.05)


def _clip(k, g):
    g = g * k.get("rescale_grad", 1.0)
    c = k.get("clip_gradient")
    return onp.clip(g, -c, c) if c else g


def _z(s, name, w):
    return s.setdefault(name, onp.zeros_like(w))


def _norm(x):
    return onp.sqrt((x * x).sum())


def _ratio(a, b):
    r = a / b if b else onp.inf
    return r if onp.isfinite(r) and r != 0 else 1.0


def ref_adamax(k, w, g, s, lr, wd, t, glob):
    b1, b2, eps = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-8)
    g = _clip(k, g) + wd * w
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["u"] = onp.maximum(b2 * _z(s, "u", w), onp.abs(g))
    return w - lr / (1 - b1 ** t) * s["m"] / (s["u"] + eps)


def ref_nadam(k, w, g, s, lr, wd, t, glob):
    b1, b2, eps, sd = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-8), k.get("schedule_decay", 0.004)
    g = _clip(k, g) + wd * w
    mu = lambda n: b1 * (1 - 0.5 * 0.96 ** (n * sd))  # noqa: E731
    glob["m_schedule"] = glob.get("m_schedule", 1.0) * mu(t)  # shared by all indices, as in MXNet
    m_next = glob["m_schedule"] * mu(t + 1)
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["v"] = b2 * _z(s, "v", w) + (1 - b2) * g * g
    m_bar = mu(t + 1) * s["m"] / (1 - m_next) + (1 - mu(t)) * g / (1 - glob["m_schedule"])
    return w - lr * m_bar / (onp.sqrt(s["v"] / (1 - b2 ** t)) + eps)


def ref_adabelief(k, w, g, s, lr, wd, t, glob):
    b1, b2, eps = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-6)
    g = _clip({"clip_gradient": k.get("clip_gradient")}, g * k.get("rescale_grad", 1.0) + wd * w)
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["s"] = b2 * _z(s, "s", w) + (1 - b2) * (g - s["m"]) ** 2 + eps
    eta = lr * onp.sqrt(1 - b2 ** t) / (1 - b1 ** t) if k.get("correct_bias", True) else lr
    return w - eta * s["m"] / (onp.sqrt(s["s"]) + eps)


def ref_ftml(k, w, g, s, lr, wd, t, glob):
    b1, b2, eps = k.get("beta1", 0.6), k.get("beta2", 0.999), k.get("epsilon", 1e-8)
    g = _clip(k, g) + wd * w
    s["v"] = b2 * _z(s, "v", w) + (1 - b2) * g * g
    d = (1 - b1 ** t) / lr * (onp.sqrt(s["v"] / (1 - b2 ** t)) + eps)
    s["z"] = b1 * _z(s, "z", w) + (1 - b1) * g - (d - b1 * _z(s, "d", w)) * w
    s["d"] = d
    return -s["z"] / d


def ref_lans(k, w, g, s, lr, wd, t, glob):
    b1, b2, eps = k.get("beta1", 0.9), k.get("beta2", 0.999), k.get("epsilon", 1e-6)
    g = g * k.get("rescale_grad", 1.0)
    g = _clip({"clip_gradient": k.get("clip_gradient")}, g / _norm(g))
    s["m"] = b1 * _z(s, "m", w) + (1 - b1) * g
    s["v"] = b2 * _z(s, "v", w) + (1 - b2) * g * g
    r1 = _norm(w)
    if k.get("lower_bound"):
        r1 = max(r1, k["lower_bound"])
    if k.get("upper_bound"):
        r1 = min(r1, k["upper_bound"])
    den = onp.sqrt(s["v"] / (1 - b2 ** t)) + eps
    u_m = s["m"] / (1 - b1 ** t) / den + wd * w
    u_g = g / den + wd * w
    return w - lr * (b1 * _ratio(r1, _norm(u_m)) * u_m + (1 - b1) * _ratio(r1, _norm(u_g)) * u_g)


def ref_dcasgd(k, w, g, s, lr, wd, t, glob):
    mu, lamda = k.get("momentum", 0.0), k.get("lamda", 0.04)
    g = _clip(k, g) + wd * w
    d = g + lamda * g * g * (w - s.get("prev", w))
    s["prev"] = w
    if mu == 0:
        return w - lr * d
    s["mom"] = mu * _z(s, "mom", w) - lr * d
    return w + s["mom"]


def ref_test(k, w, g, s, lr, wd, t, glob):
    return w - lr * (k.get("rescale_grad", 1.0) * g + wd * w)


CASES = [
    ("adamax", {}, ref_adamax), ("adamax", dict(beta1=0.7, beta2=0.9, epsilon=1e-3), ref_adamax),
    ("nadam", {}, ref_nadam), ("nadam", dict(schedule_decay=0.05, beta2=0.9), ref_nadam),
    ("adabelief", {}, ref_adabelief), ("adabelief", dict(correct_bias=False, epsilon=1e-3), ref_adabelief),
    ("ftml", {}, ref_ftml), ("ftml", dict(beta1=0.8, epsilon=1e-4), ref_ftml),
    ("lans", {}, ref_lans), ("lans", dict(lower_bound=2.5, upper_bound=3.0), ref_lans),
    ("dcasgd", {}, ref_dcasgd), ("dcasgd", dict(momentum=0.9, lamda=0.5), ref_dcasgd),
    ("test", {}, ref_test),
]
SHAPES = [(3, 4), (5,)]


def _data(seed=0, steps=4):
    rng = onp.random.default_rng(seed)
    weights = [rng.standard_normal(s).astype(onp.float32) for s in SHAPES]
    grads = [[(2 * rng.standard_normal(s)).astype(onp.float32) for s in SHAPES] for _ in range(steps)]
    return weights, grads


def _lr_at(base, n):  # FactorScheduler(step=2, factor=0.5): halves after every 2 updates
    return base * 0.5 ** ((n - 1) // 2)


@pytest.mark.parametrize("scheduled", [False, True])
@pytest.mark.parametrize("name,kwargs,ref", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_update_matches_numpy_rule(name, kwargs, ref, scheduled):
    base = 0.02
    kw = dict(PRE, learning_rate=base, **kwargs)
    if scheduled:
        kw["lr_scheduler"] = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=base)
    o = opt.create(name, **kw)
    o.set_lr_mult({1: 0.5})
    o.set_wd_mult({1: 2.0})
    weights, grads = _data()
    ws = [mx.np.array(w) for w in weights]
    states = [o.create_state(i, w) for i, w in enumerate(ws)]
    ref_w, ref_s, glob = [w.astype(onp.float64) for w in weights], [{}, {}], {}
    for step, gs in enumerate(grads, start=1):
        o.update([0, 1], ws, [mx.np.array(g) for g in gs], states)
        lr = _lr_at(base, step) if scheduled else base
        assert o.learning_rate == pytest.approx(lr)
        for i in range(2):
            ref_w[i] = ref(kw, ref_w[i], gs[i].astype(onp.float64), ref_s[i], lr * (0.5 if i else 1.0),
                           PRE["wd"] * (2.0 if i else 1.0), step, glob)
            assert ws[i].dtype == onp.float32
            onp.testing.assert_allclose(ws[i].asnumpy(), ref_w[i], rtol=5e-5, atol=5e-6,
                                        err_msg=f"{name} step {step} param {i}")
    assert o.num_update == 4 and o._index_update_count == {0: 4, 1: 4}


# --- SGLD ------------------------------------------------------------------------------------------
def test_sgld_mean_and_variance_and_seeding():
    lr = 0.04
    o = opt.SGLD(learning_rate=lr, wd=0.1, rescale_grad=0.5, clip_gradient=0.3)
    assert o.create_state(0, mx.np.ones(3)) is None
    g = onp.full(40000, 1.0, onp.float32)
    w0 = onp.full(40000, 2.0, onp.float32)

    def run(seed):
        mx.random.seed(seed)
        w = mx.np.array(w0)
        o.update([0], [w], [mx.np.array(g)], [None])
        return w.asnumpy()

    a, b, c = run(3), run(3), run(4)
    onp.testing.assert_array_equal(a, b)  # mx.random.seed makes the noise reproducible
    assert not onp.allclose(a, c)
    drift = -lr / 2 * (onp.clip(0.5 * 1.0, -0.3, 0.3) + 0.1 * 2.0)
    noise = a - w0 - drift
    assert abs(noise.mean()) < 4 * onp.sqrt(lr / 40000)
    assert noise.std() == pytest.approx(onp.sqrt(lr), rel=0.03)


# --- MXNet 2's constructor defaults ----------------------------------------------------------------
DEFAULTS = {  # name -> (learning rate, use_fused_step, aggregate_num, other attributes) from mxnet 2.0.0b1
    "adamax": (0.002, False, 1, dict(beta1=0.9, beta2=0.999, epsilon=1e-8)),
    "nadam": (0.001, False, 1, dict(beta1=0.9, beta2=0.999, epsilon=1e-8, schedule_decay=0.004, m_schedule=1.0)),
    "adabelief": (0.001, True, 4, dict(beta1=0.9, beta2=0.999, epsilon=1e-6, correct_bias=True)),
    "ftml": (0.0025, True, 1, dict(beta1=0.6, beta2=0.999, epsilon=1e-8)),
    "lans": (0.001, True, 4, dict(beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None, upper_bound=None)),
    "sgld": (0.1, False, 1, {}), "dcasgd": (0.1, False, 1, dict(momentum=0.0, lamda=0.04)),
    "test": (0.01, False, 1, {}), "adamw": (0.001, True, 4, dict(epsilon=1e-6, correct_bias=True)),
    "lamb": (0.001, True, 4, dict(epsilon=1e-6, bias_correction=True)), "adadelta": (1.0, False, 1, dict(rho=0.9)),
    "sgd": (0.1, True, 1, dict(momentum=0.0, lazy_update=False)), "signum": (0.01, True, 1, dict(momentum=0.9)),
}


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_constructor_defaults(name):
    lr, fused, aggregate, attrs = DEFAULTS[name]
    o = opt.create(name)
    assert (o.lr, o.learning_rate, o.use_fused_step, o.aggregate_num) == (lr, lr, fused, aggregate)
    assert (o.wd, o.rescale_grad, o.clip_gradient, o.lr_scheduler, o.multi_precision) == (0.0, 1.0, None, None, False)
    assert (o.num_update, o.begin_num_update) == (0, 0)
    for key, value in attrs.items():
        assert getattr(o, key) == value, key
    assert name in opt.Optimizer.opt_registry and isinstance(o, opt.Optimizer)


def test_every_mxnet_optimizer_name_exists():
    names = ["AdaBelief", "AdaDelta", "AdaGrad", "Adam", "AdamW", "Adamax", "DCASGD", "FTML", "Ftrl", "LAMB",
             "LANS", "LARS", "NAG", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "Test", "Updater",
             "create", "get_updater", "register", "contrib", "optimizer", "updater", "sgd"]
    assert all(hasattr(mx.optimizer, n) for n in names)
    assert mx.optimizer.contrib.GroupAdaGrad is opt.Optimizer.opt_registry["groupadagrad"]


def test_group_adagrad_rule_and_errors():
    o = opt.create("groupadagrad", learning_rate=0.1, rescale_grad=0.5, clip_gradient=0.4)
    assert (o.epsilon, o.use_fused_step, opt.contrib.GroupAdaGrad().lr) == (1e-6, True, 0.01)
    rng = onp.random.default_rng(3)
    w0 = rng.standard_normal((4, 3)).astype(onp.float32)
    w = mx.np.array(w0)
    state = o.create_state(0, w)
    assert state.shape == (4, 1)
    ref_w, hist = w0.astype(onp.float64), onp.zeros((4, 1))
    for _ in range(3):
        g = rng.standard_normal((4, 3)).astype(onp.float32)
        o.update([0], [w], [mx.np.array(g)], [state])
        gg = onp.clip(0.5 * g.astype(onp.float64), -0.4, 0.4)
        hist += (gg ** 2).mean(axis=1, keepdims=True)
        ref_w = ref_w - 0.1 * gg / (onp.sqrt(hist) + 1e-6)
    onp.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(state.asnumpy(), hist, rtol=1e-5)
    with pytest.raises(ValueError, match=r"GroupAdaGrad.create_state: the weight must be 2-D, got shape \(3,\)"):
        o.create_state(0, mx.np.ones(3))
    with pytest.raises(ValueError, match="GroupAdaGrad.update: weight decay is not supported"):
        opt.create("groupadagrad", wd=0.1).update([0], [w], [w.copy()], [state])
    with pytest.raises(ValueError, match="LANS: aggregate_num must be at most 45, got 46"):
        opt.LANS(aggregate_num=46)


# --- the 2.0 API: step / fused_step / update, custom optimizers, standalone transformations ---------
def test_step_and_fused_step_match_update_and_dispatch():
    weights, grads = _data(5, steps=1)
    results = []
    for method in ("step", "fused_step", "update"):
        o = opt.FTML(learning_rate=0.01, **PRE)
        ws = [mx.np.array(w) for w in weights]
        states = [o.create_state(i, w) for i, w in enumerate(ws)]
        getattr(o, method)([0, 1], ws, [mx.np.array(g) for g in grads[0]], states)
        assert o.num_update == 1
        results.append([w.asnumpy() for w in ws])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            onp.testing.assert_array_equal(a, b)

    calls = []

    class Spy(opt.Adamax):
        def step(self, *args):
            calls.append("step")
            super().step(*args)

        def fused_step(self, *args):
            calls.append("fused_step")
            super().fused_step(*args)

    w = mx.np.ones(3)
    Spy().update([0], [w], [mx.np.ones(3)], [Spy().create_state(0, w)])
    Spy(use_fused_step=True).update([0], [w], [mx.np.ones(3)], [Spy().create_state(0, w)])
    assert calls == ["step", "fused_step"]


def test_custom_mxnet2_style_optimizer_with_its_own_step():
    """A user optimizer written for MXNet 2: create_state + step with in-place NDArray ops."""
    @opt.register
    class HalfMomentum(opt.Optimizer):
        def __init__(self, learning_rate=0.1, **kwargs):
            super().__init__(learning_rate=learning_rate, **kwargs)

        def create_state(self, index, weight):
            return mx.nd.zeros(weight.shape, dtype=weight.dtype)

        def step(self, indices, weights, grads, states):
            for index, weight, grad, mom in zip(indices, weights, grads, states):
                self._update_count(index)
                mom[:] = 0.5 * mom - self._get_lr(index) * grad * self.rescale_grad
                weight[:] = weight + mom

    try:
        o = opt.create("halfmomentum", learning_rate=0.2, multi_precision=True)
        assert o.use_fused_step is False
        w = mx.nd.ones((2,), dtype="float16")
        up = opt.get_updater(o)
        for _ in range(2):
            up(0, mx.nd.ones((2,), dtype="float16"), w)
        master, mom = up.states[0]  # (float32 master copy, the optimizer's state)
        assert master.dtype == onp.float32 and w.dtype == onp.float16
        onp.testing.assert_allclose(mom.asnumpy(), [-0.3, -0.3], rtol=1e-6)
        onp.testing.assert_allclose(w.asnumpy(), [0.5, 0.5], rtol=1e-3)
        assert o.num_update == 2
        with pytest.raises(NotImplementedError):
            o.fused_step([0], [w], [w], [None])
    finally:
        del opt.Optimizer.opt_registry["halfmomentum"]


@pytest.mark.parametrize("name,kwargs,ref", [c for c in CASES if c[0] in ("nadam", "ftml", "adabelief")][::2],
                         ids=["nadam", "adabelief", "ftml"])
def test_transformation_is_a_standalone_optax_optimizer(name, kwargs, ref):
    o = opt.create(name, learning_rate=0.02, **PRE, **kwargs)
    weights, grads = _data(6)
    tx = o.transformation()
    params = jnp.asarray(weights[0])
    state = tx.init(params)
    ref_w, ref_s, glob = weights[0].astype(onp.float64), {}, {}
    update = jax.jit(tx.update)
    for t, gs in enumerate(grads, start=1):
        updates, state = update(jnp.asarray(gs[0]), state, params)
        params = optax.apply_updates(params, updates)
        ref_w = ref(dict(PRE, **kwargs), ref_w, gs[0].astype(onp.float64), ref_s, 0.02, PRE["wd"], t, glob)
    onp.testing.assert_allclose(onp.asarray(params), ref_w, rtol=5e-5, atol=5e-6)


# --- through gluon.Trainer --------------------------------------------------------------------------
X = onp.random.default_rng(1).normal(size=(4, 5)).astype(onp.float32)


def _trainer_run(name, kwargs, dtype="float32", steps=3, hybridize=False):
    net = nn.Dense(3, in_units=5)
    net.initialize(mx.init.Normal(0.5))
    if hybridize:
        net.hybridize()
    if dtype != "float32":
        net.cast(dtype)
    params = net.collect_params()
    init = {k: p.data().asnumpy().astype(onp.float64) for k, p in params.items()}
    trainer = gluon.Trainer(params, name, kwargs)
    x = mx.np.array(X, dtype=dtype)
    for _ in range(steps):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(2)
    return net, trainer, init


def _numpy_training(ref, kwargs, init, steps=3):
    """The same 3 steps in NumPy: loss = sum((x W^T + b)^2), gradients / batch size 2."""
    w, b = init["weight"], init["bias"]
    states, glob = [{}, {}], {}
    kw = dict(kwargs, rescale_grad=0.5)
    for t in range(1, steps + 1):
        y = X @ w.T + b
        gw, gb = 2 * y.T @ X, 2 * y.sum(0)
        w = ref(kw, w, gw, states[0], kwargs["learning_rate"], kwargs.get("wd", 0.0), t, glob)
        b = ref(kw, b, gb, states[1], kwargs["learning_rate"], kwargs.get("wd", 0.0), t, glob)
    return w, b


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name,ref", [("lamb", None), ("lans", ref_lans), ("nadam", ref_nadam),
                                      ("adabelief", ref_adabelief), ("dcasgd", ref_dcasgd)])
def test_trainer_drives_the_optimizers(name, ref, hybridize):
    kwargs = dict(learning_rate=0.01, wd=0.01, clip_gradient=5.0)
    net, trainer, init = _trainer_run(name, kwargs, hybridize=hybridize)
    assert isinstance(trainer.optimizer, opt.Optimizer.opt_registry[name])
    if ref is None:  # LAMB: the NumPy rule of tests/optimizer_rules.py
        from optimizer_rules import ref_lamb
        ref = lambda k, w, g, s, lr, wd, t, glob: ref_lamb(k, w, g, s, lr, wd, t)  # noqa: E731
    w, b = _numpy_training(ref, kwargs, init)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-4, atol=1e-5)
    assert trainer.optimizer.num_update == 3


@pytest.mark.parametrize("name,ref", [("lamb", None), ("lans", ref_lans), ("adamax", ref_adamax)])
def test_trainer_multi_precision_float16(name, ref):
    kwargs = dict(learning_rate=0.01, wd=0.01, multi_precision=True)
    net, trainer, init = _trainer_run(name, kwargs, dtype="float16")
    assert net.weight.data().dtype == onp.float16
    master, inner = trainer._updater.states[0]
    assert master.dtype == onp.float32 and master.shape == (3, 5)
    assert all(s.dtype == onp.float32 for s in jax.tree.leaves(inner, is_leaf=lambda s: isinstance(s, mx.nd.NDArray)))
    if ref is None:
        from optimizer_rules import ref_lamb
        ref = lambda k, w, g, s, lr, wd, t, glob: ref_lamb(k, w, g, s, lr, wd, t)  # noqa: E731
    w, _ = _numpy_training(ref, {k: v for k, v in kwargs.items() if k != "multi_precision"}, init)
    # the master copy follows the float32 rule (float16 inputs and gradients: a loose tolerance)
    onp.testing.assert_allclose(master.asnumpy(), w, rtol=2e-2, atol=2e-3)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), master.asnumpy().astype(onp.float16))


def test_updater_states_pickle_with_none_entries_and_optimizer_state():
    """DCASGD's (None, previous weight) state and Nadam's running m_schedule survive get/set_states."""
    for name in ("dcasgd", "nadam"):
        o = opt.create(name, learning_rate=0.05)
        up = opt.get_updater(o)
        w = mx.np.array(onp.linspace(-1, 1, 4, dtype=onp.float32))
        up([0], [mx.np.ones(4)], [w])
        blob = up.get_states(dump_optimizer=True)
        up2 = opt.Updater(opt.SGD())
        up2.set_states(blob)
        w2 = w.copy()
        up([0], [mx.np.ones(4) * 0.5], [w])
        up2([0], [mx.np.ones(4) * 0.5], [w2])
        onp.testing.assert_allclose(w2.asnumpy(), w.asnumpy(), rtol=1e-6)
        if name == "dcasgd":
            assert up2.states[0][0] is None
            onp.testing.assert_allclose(up2.states[0][1].asnumpy(), up.states[0][1].asnumpy())
        else:
            assert up2.optimizer.m_schedule == pytest.approx(o.m_schedule) and o.m_schedule < 0.9
