"""Training loops written the ways MXNet users write them, against a loop written in JAX.

A Gluon step can run as one fused program (forward, loss, backward and the optimizer's update), as
a forward read before ``backward`` and a backward fused with the update, or op by op; which one
depends on what the loop reads and when.  Whatever the path, the losses, the gradients read and the
weights must be the ones plain JAX computes for the same steps (``jax.grad`` and SGD with momentum
written out), hybridized or not, with bulk execution on or off, with ``grad_req`` write or add.  A
step may also scale its input inside ``record`` by a scalar that changes at every step (an op the
step's program takes in), and run an extra forward under ``record`` that no backward follows, read
only after the update has replaced the weights it read.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as onp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mxjax as mx
from mxjax import autograd, gluon
from mxjax.gluon import nn

_RS = onp.random.RandomState(0)
_X = _RS.rand(16, 8).astype(onp.float32)
_Y = _RS.randint(0, 3, 16).astype(onp.int32)
_LR, _MOMENTUM = 0.1, 0.9


def _logits(params, x):
    w1, b1, w2, b2 = params
    return jax.nn.relu(x @ w1.T + b1) @ w2.T + b2


def _loss(params, x, y):
    return -jnp.take_along_axis(jax.nn.log_softmax(_logits(params, x)), y[:, None], axis=1).mean()


def _scale(step, scale):
    """The scalar a step divides its input by (a new one at every step), or None."""
    return 1.5 + step if scale else None


_value_and_grad = jax.jit(jax.value_and_grad(_loss))


def _oracle(start, flow, grad_req):
    """The losses, the first weight's gradient at each step, the extra forwards' sums, and the final
    weights, in JAX."""
    params, moms = [jnp.asarray(p) for p in start], [jnp.zeros_like(jnp.asarray(p)) for p in start]
    acc = [jnp.zeros_like(p) for p in params]
    losses, grads, extras = [], [], []
    for step, (_, _, zero, scale, extra) in enumerate(flow):
        x = jnp.asarray(_X) if not scale else jnp.asarray(_X) / _scale(step, scale)
        loss, g = _value_and_grad(params, x, jnp.asarray(_Y))
        if extra:
            extras.append(float(_logits(params, jnp.asarray(_X)).sum()))
        acc = [a + d for a, d in zip(acc, g)] if grad_req == "add" else list(g)
        losses.append(float(loss))
        grads.append(onp.asarray(acc[0]))
        moms = [_MOMENTUM * m - _LR * a for m, a in zip(moms, acc)]
        params = [p + m for p, m in zip(params, moms)]
        if grad_req == "add" and zero:
            acc = [jnp.zeros_like(a) for a in acc]
    return losses, grads, extras, [onp.asarray(p) for p in params]


# per step: read the loss inside record() (before backward), read a gradient before trainer.step,
# zero the gradients after the step (grad_req='add' only), scale the input inside record(), run an
# extra forward without backward
_steps = st.lists(st.tuples(*[st.booleans()] * 5), min_size=3, max_size=5)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_steps, st.booleans(), st.booleans(), st.sampled_from(["write", "add"]))
def test_a_training_loop_gives_jax_s_losses_gradients_and_weights_whatever_it_reads(flow, hybridize, bulk,
                                                                                       grad_req):
    previous = mx.engine.set_imperative_bulk(bulk)
    try:
        mx.random.seed(1)
        net = nn.HybridSequential()
        net.add(nn.Dense(16, activation="relu", in_units=8), nn.Dense(3, in_units=16))
        net.initialize(mx.init.Xavier())
        params = list(net.collect_params().values())
        for p in params:
            p.grad_req = grad_req
        start = [p.data().asnumpy() for p in params]
        if hybridize:
            net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": _LR, "momentum": _MOMENTUM})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        x, y = mx.np.array(_X), mx.np.array(_Y)
        losses, grads, extras = [], [], []
        for step, (read_loss, read_grad, zero, scale, extra) in enumerate(flow):
            with autograd.record():
                loss = loss_fn(net(x / _scale(step, scale) if scale else x), y).mean()
                if read_loss:
                    read = float(loss)
            loss.backward()
            if extra:
                with autograd.record():
                    unread = net(x).sum()
            if read_grad:
                grads.append(params[0].grad().asnumpy())
            trainer.step(1)
            if extra:
                extras.append(float(unread))
            if not read_grad:
                grads.append(params[0].grad().asnumpy())
            losses.append(float(loss))
            if read_loss:
                assert read == losses[-1]
            if grad_req == "add" and zero:
                net.collect_params().zero_grad()
        weights = [p.data().asnumpy() for p in params]
    finally:
        mx.engine.set_imperative_bulk(**previous)
    want_losses, want_grads, want_extras, want_weights = _oracle(start, flow, grad_req)
    onp.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(extras, want_extras, rtol=1e-5, atol=1e-5)
    for got, want in zip(grads, want_grads):
        onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for got, want in zip(weights, want_weights):
        onp.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
