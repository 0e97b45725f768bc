"""mx.optimizer: every optimizer against an independent NumPy transcription of MXNet 2's update
rule (3 steps, rescale_grad, clip_gradient, wd, lr_mult/wd_mult), against optax where the
rules coincide, state layouts, the fused update, create/register, and bad input."""
import pickle
import types
import warnings

import jax
import jax.numpy as jnp
import numpy as onp
import optax
import pytest

import mxjax as mx
from mxjax import lr_scheduler
from mxjax import optimizer as opt
from mxjax.base import MXNetError
from optimizer_rules import CASES, PRE, ref_adam, ref_lars, ref_sgd

SHAPES = [(3, 4), (5,)]


def _is_nd(x):
    return isinstance(x, mx.NDArray)


def _data(seed=0, dtype=onp.float32):
    rng = onp.random.default_rng(seed)
    weights = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[(2 * rng.standard_normal(s)).astype(dtype) for s in SHAPES] for _ in range(3)]
    return weights, grads


@pytest.mark.parametrize("name,kwargs,ref", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_update_matches_mxnet_rule(name, kwargs, ref):
    o = opt.create(name, **kwargs)
    o.set_lr_mult({1: 0.5})
    o.set_wd_mult({1: 2.0})
    weights, grads = _data()
    ws = [mx.np.array(w) for w in weights]
    states = [o.create_state(i, w) for i, w in enumerate(ws)]
    ref_w = [w.astype(onp.float64) for w in weights]
    ref_s = [{}, {}]
    lr, wd, t0 = kwargs["learning_rate"], kwargs["wd"], kwargs.get("begin_num_update", 0)
    for step, gs in enumerate(grads, start=1):
        o.update([0, 1], ws, [mx.np.array(g) for g in gs], states)
        for i in range(2):
            ref_w[i] = ref(kwargs, ref_w[i], gs[i].astype(onp.float64), ref_s[i], lr * (0.5 if i else 1.0),
                           wd * (2.0 if i else 1.0), t0 + step)
            assert ws[i].dtype == onp.float32 and ws[i].shape == SHAPES[i]
            onp.testing.assert_allclose(ws[i].asnumpy(), ref_w[i], rtol=2e-5, atol=2e-6,
                                        err_msg=f"{name} step {step} param {i}")
    assert o.num_update == t0 + 3 and o._index_update_count == {0: t0 + 3, 1: t0 + 3}


def test_lars_skips_bias_gamma_beta_by_name():
    kwargs = dict(learning_rate=0.1, momentum=0.9, eta=0.01, **PRE)
    o = opt.LARS(param_idx2name={0: "dense0_weight", 1: "dense0_bias"}, **kwargs)
    weights, grads = _data(1)
    ws = [mx.np.array(w) for w in weights]
    states = [o.create_state(i, w) for i, w in enumerate(ws)]
    ref_w, ref_s = [w.astype(onp.float64) for w in weights], [{}, {}]
    for gs in grads:
        o.update([0, 1], ws, [mx.np.array(g) for g in gs], states)
        for i, nm in enumerate(["dense0_weight", "dense0_bias"]):
            ref_w[i] = ref_lars(kwargs, ref_w[i], gs[i].astype(onp.float64), ref_s[i], 0.1, 0.05, 0, name=nm)
    for i in range(2):
        onp.testing.assert_allclose(ws[i].asnumpy(), ref_w[i], rtol=2e-5, atol=2e-6)


# --- optax itself where MXNet's rule coincides with it (rescale 1, no clipping, constant lr) ---
OPTAX_CASES = [
    ("sgd", dict(learning_rate=0.1), optax.sgd(0.1)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9), optax.sgd(0.1, momentum=0.9)),
    ("nag", dict(learning_rate=0.1, momentum=0.9), optax.sgd(0.1, momentum=0.9, nesterov=True)),
    ("adam", dict(learning_rate=0.01, epsilon=0.0), optax.adam(0.01, eps=0.0)),
    ("adamw", dict(learning_rate=0.01, epsilon=0.0), optax.adamw(0.01, eps=0.0, weight_decay=0.0)),
    ("rmsprop", dict(learning_rate=0.01, wd=0.1),
     optax.chain(optax.add_decayed_weights(0.1), optax.rmsprop(0.01, decay=0.9, eps=1e-8, eps_in_sqrt=False))),
    ("rmsprop", dict(learning_rate=0.01, centered=True, momentum=0.5),
     optax.rmsprop(0.01, decay=0.9, eps=1e-8, centered=True, momentum=0.5)),
    ("adadelta", dict(learning_rate=0.5, wd=0.1), optax.adadelta(0.5, rho=0.9, eps=1e-6, weight_decay=0.1)),
    ("lamb", dict(learning_rate=0.01, wd=0.1), optax.lamb(0.01, eps=1e-6, weight_decay=0.1)),
    ("signum", dict(learning_rate=0.01, momentum=0.8), optax.signum(0.01, beta=0.8)),
]


@pytest.mark.parametrize("name,kwargs,tx", OPTAX_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(OPTAX_CASES)])
def test_update_matches_optax(name, kwargs, tx):
    o = opt.create(name, **kwargs)
    weights, grads = _data(2)
    ws = [mx.np.array(w) for w in weights]
    states = [o.create_state(i, w) for i, w in enumerate(ws)]
    params = [jnp.asarray(w) for w in weights]
    tx_state = tx.init(params)
    for gs in grads:
        o.update([0, 1], ws, [mx.np.array(g) for g in gs], states)
        updates, tx_state = tx.update([jnp.asarray(g) for g in gs], tx_state, params)
        params = optax.apply_updates(params, updates)
    for w, p in zip(ws, params):
        onp.testing.assert_allclose(w.asnumpy(), onp.asarray(p), rtol=1e-5, atol=1e-6)


def test_transformation_is_a_standalone_optax_optimizer():
    o = opt.Adam(learning_rate=0.01, wd=0.1, clip_gradient=0.6, rescale_grad=0.5)
    weights, grads = _data(3)
    tx = o.transformation(lr_mult=0.5, wd_mult=2.0)
    params = jnp.asarray(weights[1])
    state = tx.init(params)
    assert float(state.hyperparams["learning_rate"]) == pytest.approx(0.005)
    ref_w, ref_s = weights[1].astype(onp.float64), {}
    for t, gs in enumerate(grads, start=1):
        updates, state = jax.jit(tx.update)(jnp.asarray(gs[1]), state, params)
        params = optax.apply_updates(params, updates)
        ref_w = ref_adam(dict(PRE), ref_w, gs[1].astype(onp.float64), ref_s, 0.005, 0.2, t)
    onp.testing.assert_allclose(onp.asarray(params), ref_w, rtol=2e-5, atol=2e-6)
    state.hyperparams["learning_rate"] = jnp.asarray(0.0, jnp.float32)  # injected: a loop may change it
    updates, _ = tx.update(jnp.asarray(grads[0][1]), state, params)
    assert not onp.any(onp.asarray(updates))


def test_momentum_keeps_mxnet_buffer_under_a_schedule():
    """MXNet's momentum buffer holds lr-scaled steps: a new lr changes new steps only."""
    sched = lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.1)
    o = opt.SGD(learning_rate=0.1, momentum=0.9, lr_scheduler=sched)
    weights, grads = _data(4)
    w = mx.np.array(weights[0])
    state = o.create_state(0, w)
    ref_w, ref_s = weights[0].astype(onp.float64), {}
    for t, gs in enumerate(grads, start=1):
        o.update(0, w, mx.np.array(gs[0]), state)
        ref_w = ref_sgd({"momentum": 0.9}, ref_w, gs[0].astype(onp.float64), ref_s, 0.1 * 0.5 ** (t - 1), 0.0, t)
        assert o.learning_rate == pytest.approx(0.1 * 0.5 ** (t - 1))
    onp.testing.assert_allclose(w.asnumpy(), ref_w, rtol=2e-5, atol=2e-6)
    onp.testing.assert_allclose(state.asnumpy(), ref_s["mom"], rtol=2e-5, atol=2e-6)


# --- states ---------------------------------------------------------------------------------------
# MXNet 2.0.0b1's create_state structure of a float64 weight: None, "A" (one array) or a tuple of
# these; dtype "w" is the weight's, "f32" float32 (LAMB, LANS, Test keep float32 states)
STATE_LAYOUT = [
    ("sgd", {}, None), ("sgd", {"momentum": 0.9}, "w"), ("nag", {}, "w"), ("nag", {"momentum": 0.0}, None),
    ("adam", {}, ("w", "w")), ("adamw", {}, ("w", "w")), ("adagrad", {}, "w"), ("rmsprop", {}, "w"),
    ("rmsprop", {"centered": True}, ("w", "w", "w")), ("adadelta", {}, ("w", "w")), ("ftrl", {}, ("w", "w")),
    ("lamb", {}, ("f32", "f32")), ("lars", {}, None), ("lars", {"momentum": 0.9}, "w"), ("signum", {}, "w"),
    ("signum", {"momentum": 0.0}, None), ("adamax", {}, ("w", "w")), ("nadam", {}, ("w", "w")),
    ("adabelief", {}, ("w", "w")), ("ftml", {}, ("w", "w", "w")), ("lans", {}, ("f32", "f32")),
    ("sgld", {}, None), ("dcasgd", {}, (None, "copy")), ("dcasgd", {"momentum": 0.9}, ("w", "copy")),
    ("test", {}, "f32"),
]


def _check_layout(state, layout, w):
    if layout is None:
        assert state is None
    elif isinstance(layout, tuple):
        assert isinstance(state, tuple) and len(state) == len(layout)
        for s, lay in zip(state, layout):
            _check_layout(s, lay, w)
    else:
        assert isinstance(state, mx.np.ndarray) and state.shape == w.shape
        assert state.dtype == (onp.float32 if layout == "f32" else onp.float64)
        onp.testing.assert_array_equal(state.asnumpy(), w.asnumpy() if layout == "copy" else 0)


@pytest.mark.parametrize("name,kwargs,layout", STATE_LAYOUT, ids=[f"{c[0]}-{i}" for i, c in enumerate(STATE_LAYOUT)])
def test_state_layout(name, kwargs, layout):
    o = opt.create(name, **kwargs)
    w = mx.np.array(onp.arange(6.0).reshape(2, 3), dtype="float64")
    _check_layout(o.create_state(0, w), layout, w)


def test_multi_precision_float16():
    o = opt.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    w = mx.np.array(onp.array([1.0, -2.0, 0.5], onp.float16))
    state = o.create_state_multi_precision(0, w)
    master, mom = state
    assert master.dtype == onp.float32 and mom.dtype == onp.float32
    g = mx.np.array(onp.array([1e-3, 2e-3, -3e-3], onp.float16))
    for _ in range(3):
        o.update_multi_precision([0], [w], [g], [state])
    assert w.dtype == onp.float16
    onp.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(onp.float16))
    ref, ref_s = onp.array([1.0, -2.0, 0.5]), {}
    for _ in range(3):
        ref = ref_sgd({"momentum": 0.9}, ref, onp.array([1e-3, 2e-3, -3e-3], onp.float16).astype(float),
                      ref_s, 0.1, 0.0, 0)
    onp.testing.assert_allclose(master.asnumpy(), ref, rtol=1e-6)
    with pytest.warns(UserWarning, match="float16"):
        opt.SGD().create_state_multi_precision(0, w)


# --- the fused update ---------------------------------------------------------------------------
def test_update_all_is_one_compiled_call_and_donates():
    o = opt.SGD(learning_rate=0.1, momentum=0.9)
    weights, grads = _data(5)
    def as_mx(a):  # made as the states are (on cpu(0), also where JAX's own default is a GPU)
        return mx.np.array(a, dtype=a.dtype).to_jax()

    ws = [as_mx(w) for w in weights]
    states = [jax.tree.map(lambda x: x.to_jax(), o.create_state(i, mx.np.array(w, dtype=w.dtype)), is_leaf=_is_nd)
              for i, w in enumerate(weights)]
    for step, gs in enumerate(grads, start=1):
        lrs, wds = o.prepare_update([0, 1])
        old = ws + states
        ws, states = o.update_all(ws, [as_mx(g) for g in gs], states, lrs, wds)
        assert all(x.is_deleted() for x in old)
        o.lr = 0.1 / (step + 1)  # a new learning rate is an input, not a recompilation
    (fn,) = o._compiled.values()
    assert fn._cache_size() == 1
    assert o.num_update == 3
    # a buffer given as weight and gradient is not donated (it would be read after deletion)
    same = jnp.ones(3)
    (w_new,), _ = opt.SGD().update_all([same], [same], [None], [0.5], [0.0])
    assert not same.is_deleted() and onp.allclose(onp.asarray(w_new), 0.5)
    # donate=False keeps the inputs alive
    keep = list(ws)
    o.update_all(ws, [jnp.asarray(g) for g in grads[0]], states, [0.1, 0.1], [0.0, 0.0], donate=False)
    assert not any(x.is_deleted() for x in keep)


def test_rescale_grad_is_a_runtime_input():
    o = opt.SGD(learning_rate=1.0)
    w = mx.np.zeros(3)
    for r in (1.0, 0.5, 0.25):
        o.rescale_grad = r  # the Trainer sets 1/batch_size before each step
        o.update(0, w, mx.np.ones(3), None)
    onp.testing.assert_allclose(w.asnumpy(), -1.75 * onp.ones(3))
    assert len(o._compiled) == 1


def test_changing_a_static_hyperparameter_recompiles():
    o = opt.SGD(learning_rate=1.0, momentum=0.5)
    w, g = mx.np.zeros(2), mx.np.ones(2)
    s = o.create_state(0, w)
    o.update(0, w, g, s)
    o.momentum = 0.9
    o.update(0, w, g, s)
    onp.testing.assert_allclose(w.asnumpy(), [-2.9, -2.9])  # mom: -1, then 0.9 * -1 - 1
    assert len(o._compiled) == 2


# --- learning rate, multipliers, schedulers ---------------------------------------------------
def test_learning_rate_defaults_and_scheduler():
    assert opt.SGD().learning_rate == 0.1 and opt.Adam().learning_rate == 0.001
    assert opt.Optimizer().learning_rate == 0.01 and opt.AdaDelta().learning_rate == 1.0
    sched = lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    o = opt.SGD(learning_rate=None, lr_scheduler=sched)
    assert o.learning_rate == 1.0
    w = mx.np.zeros(1)
    seen = []
    for _ in range(5):
        o.update([0], [w], [mx.np.ones(1)], [None])
        seen.append(o.learning_rate)
    assert seen == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01])
    onp.testing.assert_allclose(w.asnumpy(), [-2.21], rtol=1e-6)
    with pytest.raises(UserWarning, match="LRScheduler"):
        o.set_learning_rate(0.5)
    with pytest.warns(UserWarning, match="overwritten"):
        o2 = opt.SGD(learning_rate=0.3, lr_scheduler=lr_scheduler.FactorScheduler(step=10, base_lr=1.0))
    assert o2.learning_rate == 0.3
    o3 = opt.SGD()
    o3.set_learning_rate(0.7)
    assert o3.learning_rate == 0.7


def test_multipliers_from_param_dict_names_and_symbol():
    p = types.SimpleNamespace(lr_mult=0.1, wd_mult=0.0)
    o = opt.SGD(learning_rate=1.0, wd=0.5, param_dict={0: p}, param_idx2name={1: "fc_bias", 2: "fc_weight"})
    o.set_lr_mult({0: 7.0, "fc_bias": 3.0})  # param_dict wins over the index entry
    o.set_wd_mult({2: 4.0})
    assert o._get_lrs([0, 1, 2, 3]) == pytest.approx([0.1, 3.0, 1.0, 1.0])
    assert o._get_wds([0, 1, 2, 3]) == pytest.approx([0.0, 0.5, 2.0, 0.5])  # MXNet 2: no zero for *_bias
    sym = mx.sym.var("a", lr_mult=2.0) * mx.sym.var("b", wd_mult=0.0)
    o = opt.SGD(learning_rate=1.0, wd=0.5, sym=sym, param_idx2name={0: "a", 1: "b"})
    assert o._get_lrs([0, 1]) == pytest.approx([2.0, 1.0]) and o._get_wds([0, 1]) == pytest.approx([0.5, 0.0])


def test_negative_learning_rate_is_allowed():
    o = opt.SGD(learning_rate=-0.5)
    w = mx.np.zeros(2)
    o.update(0, w, mx.np.ones(2), None)
    onp.testing.assert_allclose(w.asnumpy(), [0.5, 0.5])


# --- registry, updater, pickling, errors ---------------------------------------------------------
def test_create_and_register():
    assert isinstance(opt.create("SGD", learning_rate=0.2), opt.SGD)
    assert isinstance(mx.optimizer.create("adamW"), opt.AdamW)
    assert opt.create("sgd", learning_rate=0.2).lr == 0.2
    for name in ("sgd", "nag", "adam", "adamw", "adagrad", "rmsprop", "adadelta", "ftrl", "lamb", "lars", "signum"):
        assert name in opt.Optimizer.opt_registry

    @opt.register
    class PlainDescent(opt.Optimizer):
        def _build(self, learning_rate, weight_decay, rescale_grad, config):
            return optax.chain(optax.scale(rescale_grad), optax.scale(-learning_rate))

    o = opt.create("plaindescent", learning_rate=0.5, rescale_grad=2.0)
    w = mx.np.ones(2)
    o.update([0], [w], [mx.np.ones(2)], [o.create_state(0, w)])
    onp.testing.assert_allclose(w.asnumpy(), [0.0, 0.0])
    with pytest.warns(UserWarning, match="overriding"):
        opt.register(type("PlainDescent", (opt.Optimizer,), {}))
    del opt.Optimizer.opt_registry["plaindescent"]


def test_updater_and_pickled_states():
    o = opt.Adam(learning_rate=0.1)
    up = opt.get_updater(o)
    w1, w2 = mx.np.ones(3), mx.np.ones(3)
    up([0, 1], [mx.np.ones(3), mx.np.ones(3)], [w1, w2])
    up(0, mx.np.ones(3), w1)
    assert o._index_update_count == {0: 2, 1: 1}
    blob = up.get_states(dump_optimizer=True)
    up2 = opt.Updater(opt.SGD())
    up2.set_states(blob)
    assert isinstance(up2.optimizer, opt.Adam) and up2.optimizer._compiled == {}
    onp.testing.assert_allclose(up2.states[0][0].asnumpy(), up.states[0][0].asnumpy())
    w3 = mx.np.ones(3)
    w1_next = w1.copy()
    up(0, mx.np.ones(3), w1_next)
    up2(0, mx.np.ones(3), w3)
    assert up2.optimizer._index_update_count[0] == 3
    restored = pickle.loads(pickle.dumps(o))
    assert restored.param_dict == {} and restored.num_update == o.num_update


def test_bad_input():
    with pytest.raises(ValueError, match="Cannot find optimizer 'nosuch'.*registered optimizers: .*sgd"):
        opt.create("nosuch")
    with pytest.raises(TypeError, match="SGD: unexpected keyword argument.*momentun"):
        opt.SGD(momentun=0.9)
    o = opt.SGD(momentum=0.9)
    w = mx.np.ones(3)
    s = o.create_state(0, w)
    with pytest.raises(ValueError, match=r"same length, got 2, 1, 1, 1"):
        o.update([0, 1], [w], [mx.np.ones(3)], [s])
    with pytest.raises(MXNetError, match=r"weight 0 has shape \(3,\) but its gradient has shape \(4,\)"):
        o.update([0], [w], [mx.np.ones(4)], [s])
    with pytest.raises(TypeError, match="must be NDArrays"):
        o.update([0], [onp.ones(3)], [mx.np.ones(3)], [s])
    with pytest.raises(ValueError, match="differ in length: weights=1, grads=2"):
        o.update_all([jnp.ones(3)], [jnp.ones(3)] * 2, [None], [0.1], [0.0])
    o.momentum = 0.0  # the momentum state no longer fits: say so instead of a pytree error
    with pytest.raises(ValueError, match="state of parameter 0 does not fit this optimizer"):
        o.update([0], [w], [mx.np.ones(3)], [s])
    with pytest.raises(DeprecationWarning):
        opt.AdaGrad(eps=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert opt.NAG().momentum == 0.9  # no warning on plain construction
