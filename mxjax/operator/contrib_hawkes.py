"""``hawkesll`` (log-likelihood of a marked self-exciting Hawkes process) and MXNet's exposed
``_contrib_backward_*`` ops, each computed from its forward op's gradient rule.

hawkesll: for each sequence ``i`` and mark ``k``, intensity ``mu[i, k] + alpha[k] * beta[k] * s[i, k] *
exp(-beta[k] * d)``, where ``d`` is the time since the last event of mark ``k`` and the state ``s`` decays
and jumps by one at each event of its mark.  One ``lax.scan`` over time carries (time, last event time,
state, log-likelihood) for the whole batch; events past ``valid_length`` leave the carry unchanged.
MXNet's gradient uses only the log-likelihood's head and gives ``state`` zero gradient: so does ours.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from .nn_util import fail
from .registry import defop


def _hawkes_check(mu, alpha, beta, state, lags, marks, valid_length, max_time):
    n, t = lags.shape if lags.ndim == 2 else (None, None)
    k = mu.shape[1] if mu.ndim == 2 else None
    expected = {"lda": (n, k), "alpha": (k,), "beta": (k,), "state": (n, k), "lags": (n, t), "marks": (n, t),
                "valid_length": (n,), "max_time": (n,)}
    got = {"lda": mu, "alpha": alpha, "beta": beta, "state": state, "lags": lags, "marks": marks,
           "valid_length": valid_length, "max_time": max_time}
    bad = [name for name, x in got.items() if n is None or k is None or tuple(x.shape) != expected[name]]
    if bad:
        shapes = ", ".join(f"{name} {tuple(x.shape)}" for name, x in got.items())
        fail("hawkesll", f"inputs {bad} have the wrong shape; with N sequences, T steps and K marks expected "
                         f"lda (N, K), alpha (K,), beta (K,), state (N, K), lags (N, T), marks (N, T), "
                         f"valid_length (N,), max_time (N,); got {shapes}")


def _hawkes(mu, alpha, beta, state, lags, marks, valid_length, max_time):
    n, k = mu.shape
    marks = marks.astype(jnp.int32)
    lags = lax.stop_gradient(lags)

    def step(carry, inputs):
        t, last, s, ll = carry
        lag, mark, j = inputs
        t = t + lag
        onehot = jax.nn.one_hot(mark, k, dtype=mu.dtype)                         # (N, K)
        active = (j < valid_length)[:, None] * onehot
        d = t[:, None] - last                                                   # (N, K)
        ed = jnp.exp(-beta[None] * d)
        lda = mu + alpha * beta * s * ed
        comp = mu * d + alpha * s * (1 - ed)
        ll = ll + jnp.sum(active * (jnp.log(jnp.where(active > 0, lda, 1.0)) - comp), axis=1)
        s = jnp.where(active > 0, 1 + s * ed, s)
        last = jnp.where(active > 0, t[:, None], last)
        return (t, last, s, ll), None

    init = (jnp.zeros(n, mu.dtype), jnp.zeros((n, k), mu.dtype), state, jnp.zeros(n, mu.dtype))
    steps = jnp.arange(lags.shape[1], dtype=valid_length.dtype)
    (_, last, s, ll), _ = lax.scan(step, init, (lags.T, marks.T, steps))
    d = lax.stop_gradient(max_time)[:, None] - last
    ed = jnp.exp(-beta[None] * d)
    ll = ll - jnp.sum(mu * d + alpha * s * (1 - ed), axis=1)
    return ll, ed * s


def _hawkes_grad(mu, alpha, beta, state, lags, marks, valid_length, max_time, head):
    """MXNet's backward: gradients of ``sum(ll * head)`` for lda, alpha, beta; zeros for the rest."""
    _, vjp = jax.vjp(lambda m, a, b: _hawkes(m, a, b, state, lags, marks, valid_length, max_time)[0],
                     mu, alpha, beta)
    g_mu, g_alpha, g_beta = vjp(head.astype(mu.dtype))
    return (g_mu, g_alpha, g_beta, jnp.zeros_like(state), jnp.zeros_like(lags), jnp.zeros_like(marks),
            jnp.zeros_like(valid_length), jnp.zeros_like(max_time))


@jax.custom_vjp
def _hawkes_mxnet_grad(*inputs):
    return _hawkes(*inputs)


def _hawkes_fwd(*inputs):
    return _hawkes(*inputs), inputs


def _hawkes_bwd(inputs, heads):
    grads = _hawkes_grad(*inputs, heads[0])
    return (*grads[:4], None, None, None, None)  # no gradient for the observed sequences


_hawkes_mxnet_grad.defvjp(_hawkes_fwd, _hawkes_bwd)


@defop("_contrib_hawkesll", aliases=("hawkesll",), num_outputs=2)
def hawkesll(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """Log-likelihood ``(N,)`` of N marked Hawkes sequences (``marks`` int32 in [0, K), ``lags`` the
    inter-arrival times) and the decayed states ``(N, K)`` at ``max_time``."""
    _hawkes_check(lda, alpha, beta, state, lags, marks, valid_length, max_time)
    return _hawkes_mxnet_grad(lda, alpha, beta, state, lags, marks, valid_length, max_time)


@defop("_contrib_backward_hawkesll", aliases=("backward_hawkesll",), num_outputs=8, differentiable=False)
def backward_hawkesll(out_grad_ll, out_grad_states, lda, alpha, beta, state, lags, marks, valid_length,
                      max_time):
    """hawkesll's backward: input gradients (lda, alpha, beta, state, lags, marks, valid_length, max_time)
    from the heads of its two outputs (MXNet uses the log-likelihood's only)."""
    _hawkes_check(lda, alpha, beta, state, lags, marks, valid_length, max_time)
    if out_grad_ll.shape != valid_length.shape or out_grad_states.shape != state.shape:
        fail("backward_hawkesll", f"out_grad_ll {tuple(out_grad_ll.shape)} and out_grad_states "
                                  f"{tuple(out_grad_states.shape)} must match the outputs' shapes "
                                  f"{tuple(valid_length.shape)} and {tuple(state.shape)}")
    return _hawkes_grad(lda, alpha, beta, state, lags, marks, valid_length, max_time, out_grad_ll)


@defop("_contrib_backward_quadratic", aliases=("backward_quadratic",), differentiable=False)
def backward_quadratic(out_grad, data, *, a: float = 0.0, b: float = 0.0, c: float = 0.0):
    """quadratic's backward: ``out_grad * (2 * a * data + b)``."""
    if out_grad.shape != data.shape:
        fail("backward_quadratic", f"out_grad {tuple(out_grad.shape)} and data {tuple(data.shape)} must match")
    return (out_grad * (2 * a * data + b)).astype(data.dtype)


@defop("_contrib_backward_gradientmultiplier", aliases=("backward_gradientmultiplier",), differentiable=False)
def backward_gradientmultiplier(data, *, scalar: float = 1.0, is_int: bool = True):
    """gradientmultiplier's backward: the head ``data`` times ``scalar``."""
    return (data * scalar).astype(data.dtype)


@defop("_contrib_backward_index_copy", aliases=("backward_index_copy",), num_outputs=3, differentiable=False)
def backward_index_copy(out_grad, old_tensor, index_vector, new_tensor):
    """index_copy's backward: (gradient of old_tensor: out_grad with the copied rows zeroed, of index_vector:
    zeros, of new_tensor: the copied rows of out_grad)."""
    if out_grad.shape != old_tensor.shape or index_vector.ndim != 1 \
            or new_tensor.shape != (index_vector.shape[0], *old_tensor.shape[1:]):
        fail("backward_index_copy", f"expected out_grad = old_tensor shape, index_vector (M,) and new_tensor "
                                    f"(M, *old_tensor.shape[1:]); got out_grad {tuple(out_grad.shape)}, old_tensor "
                                    f"{tuple(old_tensor.shape)}, index_vector {tuple(index_vector.shape)}, "
                                    f"new_tensor {tuple(new_tensor.shape)}")
    index = index_vector.astype(jnp.int32)
    return (out_grad.at[index].set(0), jnp.zeros(index_vector.shape, out_grad.dtype),
            out_grad[index].astype(new_tensor.dtype))
