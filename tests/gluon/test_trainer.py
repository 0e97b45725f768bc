"""Trainer (vs optax on the same gradients, stale gradients, states) and SymbolBlock (MXNet 1.9.1 models)."""
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

FIXTURES = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "formats" / "fixtures"
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


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="shared fixtures not found")
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
