"""Trainer (every optimizer against MXNet 2's update rule, optax on the same gradients, stale gradients,
states) and SymbolBlock (MXNet 1.9.1 models)."""
import glob
import pathlib

import jax
import jax.numpy as jnp
import numpy as onp
import optax
import pytest

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn
from optimizer_rules import CASES, ref_lars

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "formats"
RNG = onp.random.default_rng(0)
X = RNG.normal(size=(6, 5)).astype(onp.float32)


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(4, activation="tanh", in_units=5), nn.Dense(2, in_units=4))
    net.initialize()
    return net


def _jax_loss(params, x):
    w0, b0, w1, b1 = params
    return (((jnp.tanh(x @ w0.T + b0)) @ w1.T + b1) ** 2).sum()


def _sgd_reference():
    tx = optax.sgd(0.1)  # optax's SGD is MXNet's rule: w -= lr * rescale_grad * g
    return tx


def _mxnet_adam(lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """MXNet's Adam (bias correction folded into the step size, eps outside the corrected sqrt(v)):
    w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps).  optax.adam adds eps to the
    corrected sqrt(v), so the two differ where gradients are tiny; this is the oracle."""
    def init(params):
        return ([jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], 0)

    def update(grads, state, params):
        m, v, t = state
        t += 1
        m = [beta1 * a + (1 - beta1) * g for a, g in zip(m, grads)]
        v = [beta2 * a + (1 - beta2) * g * g for a, g in zip(v, grads)]
        lr_t = lr * jnp.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        return [-lr_t * a / (jnp.sqrt(b) + eps) for a, b in zip(m, v)], (m, v, t)
    return optax.GradientTransformation(init, update)


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("name, kwargs, reference", [
    ("sgd", {"learning_rate": 0.1}, _sgd_reference),
    ("adam", {"learning_rate": 0.01, "epsilon": 1e-8}, lambda: _mxnet_adam(0.01)),
])
def test_trainer_steps_match_the_update_rule(hybridize, name, kwargs, reference):
    net = _net()
    if hybridize:
        net.hybridize()
    params = [p.data().asnumpy() for p in net.collect_params().values()]
    trainer = gluon.Trainer(net.collect_params(), name, kwargs)
    x = mx.np.array(X)
    jparams = [jnp.asarray(p) for p in params]
    tx = reference()
    state = tx.init(jparams)
    for _ in range(3):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(6)   # rescale_grad = 1 / batch_size
        grads = [g / 6 for g in jax.grad(_jax_loss)(jparams, jnp.asarray(X))]
        updates, state = tx.update(grads, state, jparams)
        jparams = optax.apply_updates(jparams, updates)
    for p, want in zip(net.collect_params().values(), jparams):
        onp.testing.assert_allclose(p.data().asnumpy(), onp.asarray(want), rtol=1e-4, atol=2e-6)


_jax_grad = jax.jit(jax.grad(_jax_loss))
LR_MULT, WD_MULT = [1.0, 1.0, 0.5, 1.0], [1.0, 1.0, 2.0, 1.0]  # set on net[1].weight (index 2) below


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybrid"])
@pytest.mark.parametrize("name, kwargs, ref", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_trainer_applies_every_optimizer_rule(hybridize, name, kwargs, ref):
    """Trainer.step against the NumPy transcription of MXNet 2's rule, on jax.grad of the same loss.

    The Trainer hands the optimizer ``rescale_grad = kwargs['rescale_grad'] / batch_size`` and the
    Parameters as ``param_dict`` (multipliers come from the Parameter objects).  It passes no
    ``param_idx2name`` (neither does MXNet 2's), so LARS sees the name ``str(index)`` and scales
    every parameter, the '0.bias'/'1.bias' ones included."""
    _check_rule(hybridize, name, kwargs, ref)


@pytest.mark.parametrize("hybridize", [False, True], ids=["imperative", "hybrid"])
def test_rules_sharing_hyper_parameters_do_not_share_programs(hybridize):
    """SGD and NAG with the same momentum (as Adam and Adamax, AdamW and AdaBelief) have the same
    hyper-parameters: NAG trained after SGD in one process got SGD's compiled update."""
    kwargs = dict(CASES[1][1])
    assert CASES[1][0] == "sgd" and kwargs["momentum"] == 0.9
    _check_rule(hybridize, "sgd", kwargs, CASES[1][2])
    _check_rule(hybridize, "nag", kwargs, next(ref for name, _, ref in CASES if name == "nag"))


def _check_rule(hybridize, name, kwargs, ref):
    net = _net()
    net[1].weight.lr_mult = 0.5
    net[1].weight.wd_mult = 2.0
    if hybridize:
        net.hybridize()
    params = list(net.collect_params().values())
    rng = onp.random.default_rng(1)
    for p in params:  # weights of order 1 and non-zero biases: weight decay and LARS norms matter
        p.set_data(mx.np.array((0.5 * rng.standard_normal(p.shape)).astype(onp.float32)))
    trainer = gluon.Trainer(net.collect_params(), name, dict(kwargs))
    batch = X.shape[0]
    k = dict(kwargs, rescale_grad=kwargs.get("rescale_grad", 1.0) / batch)
    lr, wd, t0 = kwargs["learning_rate"], kwargs.get("wd", 0.0), kwargs.get("begin_num_update", 0)
    ref_w = [p.data().asnumpy().astype(onp.float64) for p in params]
    ref_s = [{} for _ in params]
    x = mx.np.array(X)
    for step in range(1, 4):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(batch)
        with jax.enable_x64(True):  # the oracle runs in float64 (mxjax leaves JAX's process default alone)
            grads = _jax_grad([jnp.asarray(w) for w in ref_w], jnp.asarray(X, jnp.float64))
        for i, (p, g) in enumerate(zip(params, grads)):
            extra = {"name": str(i)} if ref is ref_lars else {}
            ref_w[i] = ref(k, ref_w[i], onp.asarray(g), ref_s[i], lr * LR_MULT[i], wd * WD_MULT[i], t0 + step,
                           **extra)
            got = p.data().asnumpy()
            assert got.dtype == onp.float32
            onp.testing.assert_allclose(got, ref_w[i], rtol=1e-4, atol=1e-5,
                                        err_msg=f"{name} step {step} parameter {p.name}")
    assert trainer.optimizer.num_update == t0 + 3


def test_stale_gradients_and_learning_rate(tmp_path):
    net = _net()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    assert trainer.learning_rate == 0.5
    trainer.set_learning_rate(0.25)
    assert trainer.learning_rate == 0.25
    x = mx.np.array(X)
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)
    with pytest.raises(mx.MXNetError, match=r"\['0.weight', '0.bias', '1.weight', '1.bias'\] has not been updated"):
        trainer.step(1)
    before = net[0].weight.data().asnumpy().copy()
    trainer.step(1, ignore_stale_grad=True)   # nothing fresh: nothing changes
    onp.testing.assert_array_equal(net[0].weight.data().asnumpy(), before)
    trainer.save_states(str(tmp_path / "t.states"))
    trainer.load_states(str(tmp_path / "t.states"))
    with pytest.raises(ValueError, match="params must be"):
        gluon.Trainer(42, "sgd")


def test_only_a_backward_makes_a_gradient_fresh():
    net = _net()
    x = mx.np.array(X)
    net(x)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    with pytest.raises(mx.MXNetError, match="has not been updated by backward"):
        trainer.step(1)  # no backward yet (MXNet: _fresh_grad starts False)
    for p in net.collect_params().values():
        p.grad()[:] = 1.0  # a gradient written by hand is not fresh either
    with pytest.raises(mx.MXNetError, match="has not been updated by backward"):
        trainer.step(1)
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    net.collect_params()["0.weight"].zero_grad()  # zeroing does not make it stale
    trainer.step(1)


@pytest.mark.parametrize("name", ["tiny", "tiny_np"])
def test_symbol_block_imports_mxnet_models(name):
    params_file = glob.glob(str(FIXTURES / "gluon" / f"{name}-0*.params"))[0]
    block = gluon.SymbolBlock.imports(str(FIXTURES / "gluon" / f"{name}-symbol.json"), ["data"], params_file)
    io = onp.load(FIXTURES / "gluon" / f"{name}.io.npz")
    out = block(mx.np.array(io["data"]))
    onp.testing.assert_allclose(out.asnumpy(), io["output"], rtol=1e-5, atol=1e-5)
    assert all(p.data() is not None for p in block.collect_params().values())


def test_symbol_block_round_trips_an_export(tmp_path):
    net = _net()
    net.hybridize()
    x = mx.np.array(X)
    out = net(x).asnumpy()
    sym_file, params_file = net.export(str(tmp_path / "m"))
    block = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    onp.testing.assert_allclose(block(x).asnumpy(), out, rtol=1e-6)
    with autograd.record():   # the imported graph trains: gradients reach its parameters
        loss = (block(x) ** 2).sum()
    loss.backward()
    assert onp.abs(block.collect_params()["0.weight"].grad().asnumpy()).sum() > 0
    with pytest.raises(ValueError, match="expected 1 inputs"):
        block(x, x)


def test_set_data_copies_so_training_leaves_the_callers_array_alone():
    """Parameter.set_data copies, as MXNet does: the fused update reuses the parameter's buffer,
    which must not be the array the caller still holds."""
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize()
    w0 = mx.np.ones((2, 3))
    net.weight.set_data(w0)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = mx.np.array([[1.0, 2.0, 3.0]])
    for _ in range(3):
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        trainer.step(1)
    onp.testing.assert_array_equal(w0.asnumpy(), onp.ones((2, 3), onp.float32))
    # each step lowers every weight by lr * x (d loss / d w = x for both rows)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), 1 - 0.3 * onp.array([[1.0, 2.0, 3.0]] * 2), rtol=1e-6)
