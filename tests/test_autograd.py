"""mx.autograd, first order: record/backward/attach_grad against independent oracles.

Oracles: ``jax.grad`` of the same math written with jnp, NumPy, and central finite
differences in float64.  Higher derivatives and custom Functions live in
test_autograd_higher.py.
"""
from __future__ import annotations

import gc
import threading
import time

import jax
import jax.numpy as jnp
import numpy as onp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_counts import autograd_programs
from oracle import close, marked

import mxjax as mx
from mxjax import autograd as ag

pytestmark = pytest.mark.usefixtures("tape_recorders")  # the C and the Python recorder

np, npx, nd = mx.np, mx.npx, mx.nd


_var, _close = marked, close  # an array marked for gradients; float64 comparison


# ----------------------------------------------------------------------------- random compositions vs jax.grad

_W = onp.random.RandomState(7).randn(4, 4) * 0.5
_C = onp.random.RandomState(8).randn(3, 4)
_W_MX, _C_MX = np.array(_W, dtype="float64"), np.array(_C, dtype="float64")
_W_J, _C_J = _W, _C  # float64 where the test's jnp oracle reads them (jnp.asarray here would make float32)

# each op twice: the mx front-end call and the same math in jnp
_MX_OPS = {
    "sin": np.sin, "tanh": np.tanh, "exp": lambda v: np.exp(v * 0.3), "square": np.square,
    "sqrt": lambda v: np.sqrt(v * v + 1), "sigmoid": npx.sigmoid, "relu": npx.relu,
    "add": np.add, "multiply": np.multiply, "subtract": np.subtract,
    "true_divide": lambda v, w: np.true_divide(v, w * w + 1), "maximum": np.maximum,
    "sum": lambda v: np.sum(v, axis=0), "mean": lambda v: np.mean(v, axis=0),
    "matmul": lambda v: np.matmul(v, _W_MX),
}
_JNP_OPS = {
    "sin": jnp.sin, "tanh": jnp.tanh, "exp": lambda v: jnp.exp(v * 0.3), "square": jnp.square,
    "sqrt": lambda v: jnp.sqrt(v * v + 1), "sigmoid": jax.nn.sigmoid, "relu": jax.nn.relu,
    "add": jnp.add, "multiply": jnp.multiply, "subtract": jnp.subtract,
    "true_divide": lambda v, w: jnp.true_divide(v, w * w + 1), "maximum": jnp.maximum,
    "sum": lambda v: jnp.sum(v, axis=0), "mean": lambda v: jnp.mean(v, axis=0),
    "matmul": lambda v: jnp.matmul(v, _W_J),
}
_BINARY = ("add", "multiply", "subtract", "true_divide", "maximum")
_NEEDS_AXIS = ("sum", "mean", "matmul")


@st.composite
def _programs(draw):
    """A straight-line program over a pool that starts as [a (3,4), b (4,)]: (op, operand, operand)."""
    steps = []
    for k in range(draw(st.integers(1, 5))):
        name = draw(st.sampled_from(sorted(_MX_OPS)))
        i = draw(st.integers(0, k + 1))
        j = draw(st.integers(0, k + 1)) if name in _BINARY else None
        steps.append((name, i, j))
    return steps, draw(st.integers(0, 2 ** 16))


def _evaluate(steps, a, b, ops, weights):
    pool = [a, b]
    for name, i, j in steps:
        v = pool[i]
        if name in _BINARY:
            w = pool[j]
            if i == j and name in ("subtract", "maximum"):  # keep away from x - x = 0 and exact ties
                w = ops["sin"](w)
            out = ops[name](v, w)
        elif name in _NEEDS_AXIS and v.ndim == 0:
            out = ops["tanh"](v)
        else:
            out = ops[name](v)
        pool.append(out)
    return (pool[-1] * weights).sum()


def _case(program):
    """A drawn program's steps, its inputs (float64) and their gradients by ``jax.grad`` of the jnp twin."""
    steps, seed = program
    rng = onp.random.RandomState(seed)
    a0, b0 = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))
    want = jax.grad(lambda p, q: _evaluate(steps, p, q, _JNP_OPS, _C_J), argnums=(0, 1))(
        jnp.asarray(a0), jnp.asarray(b0))
    return steps, a0, b0, want


@pytest.mark.usefixtures("jax_x64")  # its jnp oracle computes in float64
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_programs())
def test_random_compositions_match_jax_grad(program):
    steps, a0, b0, (want_a, want_b) = _case(program)
    a, b = _var(a0), _var(b0)
    with ag.record():
        head = _evaluate(steps, a, b, _MX_OPS, _C_MX)
    head.backward()
    assert a.grad.dtype == onp.float64 and a.grad.shape == (3, 4) and b.grad.shape == (4,)
    _close(a.grad, want_a)
    _close(b.grad, want_b)


def _lookups():
    stats = mx.npx.compile_stats()
    return stats["hits"] + stats["misses"]


@pytest.mark.usefixtures("jax_x64")
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_programs(), st.sampled_from(["backward", "read first", "add"]))
def test_random_compositions_repeated_run_as_one_program_and_still_match_jax_grad(program, how):
    """The same program three times: op by op at its first sighting, then as one compiled program
    (forward, loss and VJP; or, with the loss read before ``backward``, the forward with its VJPs
    and then the backward) -- every time the gradients ``jax.grad`` gives."""
    steps, a0, b0, want = _case(program)
    value = float(_evaluate(steps, jnp.asarray(a0), jnp.asarray(b0), _JNP_OPS, _C_J))
    a, b = _var(a0, grad_req="add" if how == "add" else "write"), _var(b0)
    for run in range(3):
        before = _lookups()
        with ag.record():
            head = _evaluate(steps, a, b, _MX_OPS, _C_MX)
            if how == "read first":
                assert float(head) == pytest.approx(value, rel=1e-9, abs=1e-12)
        head.backward()
        _close(a.grad, onp.asarray(want[0]) * (run + 1 if how == "add" else 1))
        _close(b.grad, want[1])
        assert float(head) == pytest.approx(value, rel=1e-9, abs=1e-12)
        if run:  # from the second sighting the compile cache serves the step
            assert _lookups() > before, (run, steps)


def test_float32_gradient_dtype_and_values_match_jax():
    x0 = onp.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], onp.float32)
    x = _var(x0, "float32")
    with ag.record():
        y = (np.tanh(x) * x).sum()
    y.backward()
    assert x.grad.dtype == onp.float32
    _close(x.grad, jax.grad(lambda v: (jnp.tanh(v) * v).sum())(jnp.asarray(x0)), rtol=1e-6, atol=1e-7)


# ----------------------------------------------------------------------------- finite differences (float64)

def _fd_grads(loss, arrays, eps=1e-6):
    """Central differences of ``loss(*mx arrays) -> scalar`` w.r.t. every element of every array."""
    def value(values):
        return float(loss(*(np.array(v, dtype="float64") for v in values)))
    grads = []
    for k, base in enumerate(arrays):
        g = onp.zeros_like(base)
        for idx in onp.ndindex(base.shape):
            plus, minus = [a.copy() for a in arrays], [a.copy() for a in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            g[idx] = (value(plus) - value(minus)) / (2 * eps)
        grads.append(g)
    return grads


_R = onp.random.RandomState(3)
_LABELS = onp.array([0, 3, 1, 4])
_LN_W = _R.randn(3, 5)
_CONV_W = _R.randn(1, 3, 3, 3)


def _softmax_ce(logits):
    return -npx.pick(npx.log_softmax(logits, axis=-1), np.array(_LABELS, dtype="int64"), axis=-1).mean()


def _layer_norm(x, gamma, beta):
    return (npx.layer_norm(x, gamma, beta, axis=-1, eps=1e-5) * np.array(_LN_W, dtype="float64")).sum()


def _conv(data, weight, bias):
    out = npx.convolution(data, weight, bias, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=3)
    return (out * np.array(_CONV_W, dtype="float64")).sum()


def _batch_dot(a, b):
    return np.sin(npx.batch_dot(a, b)).sum()


def _mlp(x, w1, b1, w2, b2):
    h = np.tanh(npx.fully_connected(x, w1, b1, num_hidden=5, no_bias=False))
    out = npx.fully_connected(h, w2, b2, num_hidden=2, no_bias=False)
    return (out * out).sum()


_FD_CASES = {
    "softmax_cross_entropy": (_softmax_ce, [(4, 5)]),
    "layer_norm": (_layer_norm, [(3, 5), (5,), (5,)]),
    "convolution": (_conv, [(1, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "batch_dot": (_batch_dot, [(2, 3, 4), (2, 4, 2)]),
    "tanh_mlp": (_mlp, [(4, 3), (5, 3), (5,), (2, 5), (2,)]),
}


@pytest.mark.parametrize("name", sorted(_FD_CASES))
def test_gradients_match_central_finite_differences(name):
    loss, shapes = _FD_CASES[name]
    rng = onp.random.RandomState(sum(map(ord, name)))
    values = [rng.randn(*s) for s in shapes]
    arrays = [_var(v) for v in values]
    with ag.record():
        out = loss(*arrays)
    out.backward()
    for arr, want in zip(arrays, _fd_grads(loss, values)):
        assert arr.grad.dtype == onp.float64
        _close(arr.grad, want, rtol=1e-5, atol=1e-7)


# ----------------------------------------------------------------------------- grad_req and mark_variables

def test_grad_req_write_overwrites_each_backward():
    x = _var([1.0, 2.0, 3.0])
    for scale in (1.0, 3.0):
        with ag.record():
            y = (x * x * scale).sum()
        y.backward()
        _close(x.grad, 2 * scale * onp.array([1.0, 2.0, 3.0]))


def test_grad_req_add_accumulates_over_backward_passes():
    x = _var([1.0, 2.0, 3.0], grad_req="add")
    for _ in range(3):
        with ag.record():
            y = (x * x).sum()
        y.backward()
    _close(x.grad, 3 * 2 * onp.array([1.0, 2.0, 3.0]))
    x.grad[:] = 0  # the usual way to reset an 'add' buffer (outside record)
    with ag.record():
        y = np.sin(x).sum()
    y.backward()
    _close(x.grad, onp.cos([1.0, 2.0, 3.0]))


def test_grad_req_null_gets_no_gradient_but_others_do():
    x, w = _var([1.0, 2.0], grad_req="null"), _var([3.0, 4.0])
    assert x.grad is None
    with ag.record():
        y = (x * w).sum()
    y.backward()
    assert x.grad is None
    _close(w.grad, [1.0, 2.0])


def test_mark_variables_writes_into_user_buffers():
    x, z = np.array([1.0, 2.0], dtype="float64"), np.array([0.5, -1.0], dtype="float64")
    gx, gz = np.zeros(2, dtype="float64"), np.full((2,), 10.0, dtype="float64")
    ag.mark_variables([x, z], [gx, gz], grad_reqs=["write", "add"])
    with ag.record():
        y = (x * x * z).sum()
    y.backward()
    _close(gx, 2 * onp.array([1.0, 2.0]) * onp.array([0.5, -1.0]))  # the same buffer objects
    _close(gz, 10.0 + onp.array([1.0, 4.0]))
    assert x.grad is gx and z.grad is gz


def test_mark_variables_single_array():
    x, buf = np.array([2.0, 3.0], dtype="float64"), np.zeros(2, dtype="float64")
    ag.mark_variables(x, buf)
    with ag.record():
        y = (x ** 3).sum()
    y.backward()
    _close(buf, 3 * onp.array([4.0, 9.0]))


# ----------------------------------------------------------------------------- graph shapes

def test_array_used_twice_sums_its_gradients():
    x = _var([1.0, -2.0, 3.0])
    with ag.record():
        y = (x * x + x).sum()
    y.backward()
    _close(x.grad, 2 * onp.array([1.0, -2.0, 3.0]) + 1)


def test_split_outputs_each_get_their_gradient():
    x0 = onp.arange(12.0).reshape(2, 6)
    x = _var(x0)
    with ag.record():
        p, q, r = np.split(x, 3, axis=1)
        y = (p * 2).sum() + (r * r).sum()  # q is unused
    y.backward()
    want = jax.grad(lambda v: (jnp.split(v, 3, axis=1)[0] * 2).sum() + (jnp.split(v, 3, axis=1)[2] ** 2).sum())(
        jnp.asarray(x0))
    _close(x.grad, want)


def test_topk_both_value_output_only_used():
    x0 = onp.array([[3.0, 1.0, 2.0, 7.0], [0.0, 5.0, 4.0, -1.0]])
    x = _var(x0)
    with ag.record():
        values, indices = npx.topk(x, k=2, ret_typ="both")
        y = (values * onp.array([1.0, 10.0])).sum()
    y.backward()
    assert indices.dtype == onp.float32  # MXNet's default index dtype for topk
    _close(x.grad, [[10.0, 0.0, 0.0, 1.0], [0.0, 1.0, 10.0, 0.0]])


def test_integer_variable_gets_zero_gradient():
    i = _var([1, 2, 3], dtype="int32")
    x = _var([0.5, 1.5, 2.5])
    with ag.record():
        y = (i * x).sum()
    y.backward()
    assert i.grad.dtype == onp.int32
    onp.testing.assert_array_equal(i.grad.asnumpy(), [0, 0, 0])
    _close(x.grad, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("which", ["take", "pick"])
def test_integer_indices_route_gradient_to_the_float_operand(which):
    x0 = onp.arange(6.0).reshape(2, 3)
    x = _var(x0)
    weights = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with ag.record():
        if which == "take":
            y = (np.take(x, np.array([0, 2, 2], dtype="int64"), axis=1) * np.array(weights, dtype="float64")).sum()
        else:
            y = (npx.pick(x, np.array([2, 0], dtype="int64"), axis=1) * np.array([3.0, 5.0], dtype="float64")).sum()
    y.backward()
    want = [[1.0, 0.0, 5.0], [4.0, 0.0, 11.0]] if which == "take" else [[0.0, 0.0, 3.0], [5.0, 0.0, 0.0]]
    _close(x.grad, want)


def test_stop_gradient_and_blockgrad_block_the_path():
    x0 = onp.array([1.0, -2.0, 3.0])
    x = _var(x0)
    with ag.record():
        y = (npx.stop_gradient(x * x) * x).sum()
    y.backward()
    _close(x.grad, x0 * x0)  # d/dx [c * x] with c = x*x held constant
    with ag.record():
        y = npx.stop_gradient(x).sum()
    y.backward()
    _close(x.grad, [0.0, 0.0, 0.0])
    legacy = nd.array([1.0, 2.0])
    legacy.attach_grad()
    with ag.record():
        z = (nd.BlockGrad(legacy) * legacy + legacy).sum()
    z.backward()
    _close(legacy.grad, [2.0, 3.0])


def test_detach_blocks_gradients():
    x = _var([1.0, 2.0, 3.0])
    with ag.record():
        y = x * x
        z = (y.detach() * x).sum()
    z.backward()
    _close(x.grad, [1.0, 4.0, 9.0])
    assert y.detach()._ag is None and y._ag is not None


def test_backward_on_several_heads_with_mixed_head_grads():
    x = _var([0.5, 1.0, 2.0])
    with ag.record():
        y1, y2 = x * 2, x * x
    ag.backward([y1, y2], [None, np.array([1.0, 10.0, 100.0], dtype="float64")])
    _close(x.grad, 2 + 2 * onp.array([0.5, 1.0, 2.0]) * [1.0, 10.0, 100.0])


def test_backward_of_a_variable_itself_gives_ones():
    x = _var([0.5, 1.0])
    x.backward()
    _close(x.grad, [1.0, 1.0])


def test_retain_graph_allows_a_second_identical_backward():
    x = _var([1.0, 2.0])
    with ag.record():
        y = (x * x * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.asnumpy().copy()
    y.backward()
    _close(first, [3.0, 12.0])
    _close(x.grad, first)


# ----------------------------------------------------------------------------- modes: recording and training

def test_scopes_set_recording_and_training_flags():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
            with ag.train_mode():
                assert ag.is_training() and not ag.is_recording()
        with ag.predict_mode():
            assert ag.is_recording() and not ag.is_training()
        assert ag.is_recording() and ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording() and not ag.is_training()
    with ag.pause(train_mode=True):
        assert ag.is_training() and not ag.is_recording()
    assert not ag.is_recording() and not ag.is_training()


def test_set_recording_and_set_training_return_the_previous_state():
    x = _var([1.0, 2.0])
    try:
        assert ag.set_recording(True) is False
        assert ag.set_training(True) is False
        y = (x * 3).sum()
        assert ag.set_recording(False) is True
        assert ag.set_training(False) is True
    finally:
        ag.set_recording(False)
        ag.set_training(False)
    assert y._ag is not None and (x * 3)._ag is None
    y.backward()
    _close(x.grad, [3.0, 3.0])


def test_ops_outside_record_are_not_recorded():
    x = _var([1.0, 2.0])
    y = x * 2
    with ag.pause():
        z = x * 2
    assert y._ag is None and z._ag is None
    with pytest.raises(mx.MXNetError, match="not computed under autograd.record"):
        y.backward()


def test_dropout_follows_the_training_flag():
    x = np.ones((1000,), dtype="float32")
    onp.testing.assert_array_equal(npx.dropout(x, p=0.5).asnumpy(), onp.ones(1000))
    xv = _var(onp.ones(1000), dtype="float32")
    with ag.record():
        y = npx.dropout(xv, p=0.5)
        with ag.predict_mode():
            ident = npx.dropout(xv, p=0.5)
    with ag.record(train_mode=False):
        ident2 = npx.dropout(xv, p=0.5)
    values = y.asnumpy()
    assert set(onp.unique(values)) <= {0.0, 2.0}
    assert 0.35 < (values == 0).mean() < 0.65
    onp.testing.assert_array_equal(ident.asnumpy(), onp.ones(1000))
    onp.testing.assert_array_equal(ident2.asnumpy(), onp.ones(1000))
    y.backward()
    onp.testing.assert_array_equal(xv.grad.asnumpy(), values)  # mask * 1/(1-p), as x is all ones


def _jnp_batch_norm(x, gamma, beta, eps):
    mean = x.mean(axis=0)
    var = ((x - mean) ** 2).mean(axis=0)
    return (x - mean) / jnp.sqrt(var + eps) * gamma + beta


@pytest.mark.usefixtures("jax_x64")  # its jnp oracle computes in float64
def test_batch_norm_training_uses_batch_statistics_and_differentiates_through_them():
    rng = onp.random.RandomState(11)
    x0, g0, b0, weights = rng.randn(4, 3), rng.rand(3) + 0.5, rng.randn(3), rng.randn(4, 3)
    rm0, rv0 = rng.randn(3), rng.rand(3) + 0.5
    x, gamma, beta = _var(x0), _var(g0), _var(b0)
    rm, rv = np.array(rm0, dtype="float64"), np.array(rv0, dtype="float64")
    with ag.record():
        out = npx.batch_norm(x, gamma, beta, rm, rv, eps=1e-3, momentum=0.9, fix_gamma=False)
        loss = (out * np.array(weights, dtype="float64")).sum()
    loss.backward()
    _close(out, _jnp_batch_norm(jnp.asarray(x0), g0, b0, 1e-3))
    want = jax.grad(lambda *a: (_jnp_batch_norm(*a, 1e-3) * weights).sum(), argnums=(0, 1, 2))(
        jnp.asarray(x0), jnp.asarray(g0), jnp.asarray(b0))
    for arr, w in zip((x, gamma, beta), want):
        _close(arr.grad, w, rtol=1e-6)
    _close(rm, 0.9 * rm0 + 0.1 * x0.mean(axis=0))
    _close(rv, 0.9 * rv0 + 0.1 * x0.var(axis=0))


def test_batch_norm_predict_mode_uses_moving_statistics():
    rng = onp.random.RandomState(12)
    x0, g0, b0, weights = rng.randn(4, 3), rng.rand(3) + 0.5, rng.randn(3), rng.randn(4, 3)
    rm0, rv0 = rng.randn(3), rng.rand(3) + 0.5
    x, gamma, beta = _var(x0), _var(g0), _var(b0)
    rm, rv = np.array(rm0, dtype="float64"), np.array(rv0, dtype="float64")
    with ag.record(train_mode=False):
        out = npx.batch_norm(x, gamma, beta, rm, rv, eps=1e-3, fix_gamma=False)
        loss = (out * np.array(weights, dtype="float64")).sum()
    loss.backward()
    scale = g0 / onp.sqrt(rv0 + 1e-3)
    _close(out, (x0 - rm0) * scale + b0)
    _close(x.grad, weights * scale)
    _close(beta.grad, weights.sum(axis=0))
    _close(rm, rm0)  # untouched outside training
    _close(rv, rv0)


# ----------------------------------------------------------------------------- bad input

def _recorded():
    x = _var([1.0, 2.0, 3.0])
    with ag.record():
        y = x * 2
    return x, y


def test_backward_of_unrecorded_array_raises():
    with pytest.raises(mx.MXNetError, match="head 0 was not computed under autograd.record"):
        np.ones(3).backward()


def test_second_backward_through_freed_graph_raises():
    x, y = _recorded()
    y.backward()
    with pytest.raises(mx.MXNetError, match="already freed.*retain_graph=True"):
        y.backward()


def test_grad_wrt_array_off_the_path_raises():
    x, y = _recorded()
    other = _var([1.0, 1.0, 1.0])
    with pytest.raises(mx.MXNetError, match=r"variable 0 \(shape \(3,\)\) is not on the path"):
        ag.grad(y, [other])
    with pytest.raises(mx.MXNetError, match="variable 0 is not marked for gradients"):
        ag.grad(y, [np.ones(3)])


def test_head_gradient_of_wrong_shape_raises():
    x, y = _recorded()
    with pytest.raises(mx.MXNetError, match=r"head gradient 0 has shape \(4,\), expected the head's shape \(3,\)"):
        y.backward(np.ones(4))
    with pytest.raises(mx.MXNetError, match="got 1 heads but 2 head gradients"):
        ag.backward([y], [np.ones(3), np.ones(3)])


@pytest.mark.parametrize("write", ["iadd", "setitem", "intermediate"])
def test_in_place_write_to_recorded_array_while_recording_raises(write):
    x = _var([1.0, 2.0, 3.0])
    with ag.record():
        y = x * 2
        with pytest.raises(mx.MXNetError, match="in-place writes .* not supported while recording"):
            if write == "iadd":
                x += 1
            elif write == "setitem":
                x[0] = 1
            else:
                y += 1
    x += 1  # allowed again outside record
    _close(x, [2.0, 3.0, 4.0])


def test_attach_grad_bad_arguments_raise():
    x = np.ones(2)
    with pytest.raises(mx.MXNetError, match="grad_req must be one of .*'foo'"):
        x.attach_grad("foo")
    with pytest.raises(mx.MXNetError, match="only dense gradients.*row_sparse"):
        x.attach_grad(stype="row_sparse")


def test_mark_variables_bad_arguments_raise():
    x = np.ones(2)
    with pytest.raises(mx.MXNetError, match=r"buffer shape \(3,\) does not match the variable's shape \(2,\)"):
        ag.mark_variables([x], [np.zeros(3)])
    with pytest.raises(mx.MXNetError, match="got 1 variables, 2 gradients and 1 grad_reqs"):
        ag.mark_variables([x], [np.zeros(2), np.zeros(2)])
    with pytest.raises(mx.MXNetError, match="grad_req must be one of"):
        ag.mark_variables([x], [np.zeros(2)], grad_reqs="sum")


# ----------------------------------------------------------------------------- threads and the engine

def test_recording_is_thread_local():
    inside, started, done = {}, threading.Event(), threading.Event()

    def other():
        started.wait(5)
        inside["recording"] = ag.is_recording()
        inside["training"] = ag.is_training()
        x = _var([1.0, 2.0])
        inside["ag"] = (x * 2)._ag
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with ag.record():
        started.set()
        done.wait(5)
        assert ag.is_recording()
    thread.join(5)
    assert inside == {"recording": False, "training": False, "ag": None}


def test_concurrent_recording_threads_get_their_own_gradients():
    barrier, results = threading.Barrier(2), {}

    def worker(scale):
        x = _var([1.0, 2.0, 3.0])
        barrier.wait(5)
        for _ in range(5):
            with ag.record():
                y = (x * x * scale).sum()
            y.backward()
        results[scale] = x.grad.asnumpy()

    threads = [threading.Thread(target=worker, args=(s,)) for s in (1.0, 5.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    for scale in (1.0, 5.0):
        _close(results[scale], 2 * scale * onp.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("attach_first", [False, True])
def test_pending_engine_write_is_seen_by_recorded_ops(attach_first):
    x = np.zeros(3, dtype="float64")
    if attach_first:
        x.attach_grad()

    def slow_write():
        time.sleep(0.05)
        x._set_data(jnp.asarray([1.0, 2.0, 3.0]))

    mx.engine.push_sync(slow_write, mutate_vars=[x.engine_var])
    if not attach_first:
        x.attach_grad()
    with ag.record():
        y = (x * x * x).sum()
    y.backward()
    _close(x, [1.0, 2.0, 3.0])
    _close(x.grad, 3 * onp.array([1.0, 4.0, 9.0]))


# ----------------------------------------------------------------------------- regressions (bugs found by these tests)

def test_set_recording_false_inside_record_stops_recording():
    x = _var([1.0, 2.0])
    with ag.record():
        previous = ag.set_recording(False)
        try:
            assert previous is True and not ag.is_recording()
            y = x * 2
            assert y._ag is None
            x += 1
        finally:
            ag.set_recording(previous)
    _close(x, [2.0, 3.0])


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_head_gradient_of_another_dtype(dtype):
    x = _var([0.5, 1.0, 2.0], dtype="float32")
    with ag.record():
        y = x * 2
    try:
        y.backward(np.array([1, 2, 3], dtype=dtype))
    except mx.MXNetError as err:
        assert "dtype" in str(err)
    else:
        _close(x.grad, [2.0, 4.0, 6.0])


def test_out_of_range_take_raises_while_recording():
    x = _var(onp.arange(6.0).reshape(2, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        np.take(x, np.array([0, 5], dtype="int64"), axis=1)  # outside record: raises (passes)
    with ag.record():
        with pytest.raises(IndexError, match="out of bounds"):
            np.take(x, np.array([0, 5], dtype="int64"), axis=1)


def test_recorded_op_follows_default_dtype_change():
    i = _var(onp.arange(1, 8), dtype="int64")  # a shape no other test records, so the stale entry is harmless
    with ag.record():
        assert np.sqrt(i).dtype == onp.float32
    npx.set_np(dtype=True)  # restored by the conftest fixture
    assert np.sqrt(i).dtype == onp.float64
    with ag.record():
        assert np.sqrt(i).dtype == onp.float64


def test_get_symbol_replays_the_recorded_computation():
    x = _var([1.0, 2.0])
    w = np.array([3.0, 4.0])
    with ag.record():
        y = np.sin(x) * w + 2.0
    sym = ag.get_symbol(y)
    assert sym.list_arguments() == ["var0", "var1"]
    (out,) = sym.eval(var0=x, var1=w)
    _close(out, onp.sin([1.0, 2.0]) * onp.array([3.0, 4.0]) + 2.0)
    with pytest.raises(mx.MXNetError, match="get_symbol"):
        ag.get_symbol(np.ones(2))


# ----------------------------------------------------------------------------- one program per step

def test_imperative_step_fuses_once_its_structure_repeats():
    """An imperative forward + backward runs op by op the first time its graph is seen (code whose
    graph changes every step compiles nothing new), and as one program from the second time on."""
    w = mx.np.array(onp.linspace(-1, 1, 12).reshape(3, 4).astype("float32"))
    w.attach_grad()
    x = mx.np.array(onp.arange(8, dtype="float32").reshape(2, 4) / 8)

    def step():
        with ag.record():
            loss = (mx.np.tanh(x @ w.T) * 1.7).sum()
        loss.backward()
        return w.grad.asnumpy()

    want = ((1 - onp.tanh(x.asnumpy() @ w.asnumpy().T) ** 2) * 1.7).T @ x.asnumpy()
    before = autograd_programs()
    onp.testing.assert_allclose(step(), want, rtol=1e-5)
    assert autograd_programs() == before  # first sighting: no program of its own
    for _ in range(3):
        onp.testing.assert_allclose(step(), want, rtol=1e-5)
    assert autograd_programs() - before == 1  # then one, reused


@pytest.mark.parametrize("hold", [False, True])
def test_fused_step_keeps_only_the_intermediates_someone_holds(hold):
    """A fused forward + backward returns an intermediate value only if an array (or a view of
    one) still holds it: while the loss (and so its graph) lives, dropped ones leave no buffer
    alive, and held ones read back right."""
    shape = (37, 41)  # a shape no other array of this test has
    gc.collect()  # (arrays of that shape left by an earlier run of this test)
    w = mx.np.array(onp.linspace(-1, 1, 37 * 41).reshape(shape).astype("float32"))
    w.attach_grad()
    kept = []

    def forward():
        h = mx.np.tanh(w * 3)
        if hold:
            kept[:] = [h.as_nd_ndarray()]  # only a view outlives forward()
        return (mx.np.exp(h) * 2).sum()

    def step():
        with ag.record():
            loss = forward()
        loss.backward()
        return loss

    for _ in range(3):  # the structure repeats: the step runs as one program
        step()
    loss = step()
    h_want = onp.tanh(w.asnumpy() * 3)
    onp.testing.assert_allclose(w.grad.asnumpy(), onp.exp(h_want) * 2 * (1 - h_want ** 2) * 3, rtol=1e-4)
    onp.testing.assert_allclose(loss.item(), (onp.exp(h_want) * 2).sum(), rtol=1e-5)
    # (a count: a list would keep them alive; mxjax's arrays are on the CPU, also where JAX's default is a GPU)
    alive = sum(a.shape == shape for a in jax.live_arrays("cpu"))
    assert alive == 2 + hold, f"{alive} buffers of shape {shape} alive: w, its gradient" + (", h" if hold else "")
    if hold:
        onp.testing.assert_allclose(kept[0].asnumpy(), h_want, rtol=1e-5)


def test_pending_backward_runs_with_an_update_in_one_program():
    """``autograd.pending_backward``: the lazy gradients of a backward not run yet, and running it
    with an update function; the update sees the gradients plain backward gives."""
    net = mx.gluon.nn.Dense(3, in_units=4)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.np.array(onp.linspace(-1, 1, 8).reshape(2, 4).astype("float32"))
    params = list(net.collect_params().values())
    weights = [p.data() for p in params]
    w0 = [w.asnumpy() for w in weights]

    def loss_grads():
        with ag.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        return [p.grad() for p in params]

    want = [g.asnumpy() for g in loss_grads()]  # read: the backward ran, nothing is pending
    assert ag.pending_backward([p.grad() for p in params]) is None
    found = ag.pending_backward(loss_grads())
    assert found is not None
    run, positions = found

    def sgd(ws, gs, states, lr):
        return [w - lr * g for w, g in zip(ws, gs)], states

    new_weights, _ = run.run(update=(("test-sgd",), sgd, positions, [w.to_jax() for w in weights],
                                     [None] * len(weights), (jnp.float32(0.5),)))
    for new, old, g in zip(new_weights, w0, want):
        onp.testing.assert_allclose(onp.asarray(new), old - 0.5 * g, rtol=1e-5, atol=1e-6)
    for p, g in zip(params, want):  # the gradients are there too, as after a plain backward
        onp.testing.assert_allclose(p.grad().asnumpy(), g, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- computed nodes' backward as one program

_CHAINS = {  # name: (mx function of (a, b), the same in jnp): leaves and outputs used several times, split
    "leaf twice": (lambda a, b: (np.tanh(a) * a).sum(), lambda a, b: (jnp.tanh(a) * a).sum()),
    "output thrice": (lambda a, b: (lambda t: (t * t + t).sum())(np.tanh(a)),
                      lambda a, b: (lambda t: (t * t + t).sum())(jnp.tanh(a))),
    "split": (lambda a, b: (lambda p, q: (p * 2 + q ** 2).sum())(*np.split(a, 2, axis=1)),
              lambda a, b: (lambda p, q: (p * 2 + q ** 2).sum())(*jnp.split(a, 2, axis=1))),
    "split, one part unused": (lambda a, b: (np.split(a, 2, axis=1)[0] * 3).sum(),
                               lambda a, b: (jnp.split(a, 2, axis=1)[0] * 3).sum()),
    "two variables": (lambda a, b: (np.dot(a, b) + b.sum()).mean(), lambda a, b: (jnp.dot(a, b) + b.sum()).mean()),
}


@pytest.mark.parametrize("name", sorted(_CHAINS))
@pytest.mark.parametrize("how", ["read before backward", "bulk execution off"])
def test_the_backward_of_computed_nodes_is_one_program_with_jax_grads(name, how):
    """Nodes that ran with their VJPs (a value read before backward; bulk execution off) are
    differentiated by one program from the second time their structure is seen, with
    jax.grad's gradients every time."""
    mx_fn, jnp_fn = _CHAINS[name]
    a0 = onp.linspace(-1, 1, 12).reshape(3, 4)
    b0 = onp.linspace(0.5, -0.5, 8).reshape(4, 2)
    want = jax.grad(jnp_fn, argnums=(0, 1))(a0.astype(onp.float32), b0.astype(onp.float32))
    previous = mx.engine.set_imperative_bulk(how == "read before backward")
    try:
        counts = []
        for _ in range(3):
            a, b = _var(a0, "float32"), _var(b0, "float32")
            before = autograd_programs()
            with ag.record():
                head = mx_fn(a, b)
                if how == "read before backward":
                    float(head)
            head.backward()
            _close(a.grad, want[0], rtol=1e-5, atol=1e-6)  # (the backward runs here, or at the backward)
            _close(b.grad, onp.zeros_like(b0) if name != "two variables" else want[1], rtol=1e-5, atol=1e-6)
            counts.append(autograd_programs() - before)
    finally:
        mx.engine.set_imperative_bulk(previous["enabled"])
    # compiled at the second sighting (the backward's program; with a read, the read's too), then reused
    assert counts == [0, 2 if how == "read before backward" else 1, 0]


@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_after_a_read_before_backward_the_backward_waits_for_the_update_and_runs_with_it(grad_req):
    """The backward of nodes that ran with their VJPs (a value read before backward) is pending
    like a region's: ``pending_backward`` finds it, and it runs in one program with the update."""
    mx_fn, jnp_fn = _CHAINS["two variables"]
    a0 = onp.linspace(-1, 1, 12).reshape(3, 4).astype(onp.float32)
    b0 = onp.linspace(0.5, -0.5, 8).reshape(4, 2).astype(onp.float32)
    want = jax.grad(jnp_fn, argnums=(0, 1))(a0, b0)
    base = (1.0, 2.0) if grad_req == "add" else (0.0, 0.0)
    grads = [onp.asarray(g) + o for g, o in zip(want, base)]
    for step in range(3):
        a, b = _var(a0, "float32"), _var(b0, "float32")
        a.attach_grad(grad_req)
        b.attach_grad(grad_req)
        if grad_req == "add":  # what the backward adds to
            a.grad[:] = 1.0
            b.grad[:] = 2.0
        with ag.record():
            head = mx_fn(a, b)
            value = float(head)
        head.backward()
        found = ag.pending_backward([a.grad, b.grad])
        assert found is not None or step == 0  # (a first sighting in this process runs node by node)
        onp.testing.assert_allclose(value, jnp_fn(a0, b0), rtol=1e-5)
        if step < 2:  # read, the pending backward runs on its own
            for got, g in zip((a.grad, b.grad), grads):
                _close(got, g, rtol=1e-5, atol=1e-6)
    run, positions = found

    def sgd(ws, gs, states, lr):
        return [w - lr * g for w, g in zip(ws, gs)], states

    new, _ = run.run(update=(("test-sgd",), sgd, positions, [a.to_jax(), b.to_jax()], [None, None],
                             (jnp.float32(0.5),)))
    for got, w0, g in zip(new, (a0, b0), grads):
        onp.testing.assert_allclose(onp.asarray(got), w0 - 0.5 * g, rtol=1e-5, atol=1e-6)
    for got, g in zip((a.grad, b.grad), grads):  # the gradients are there too
        _close(got, g, rtol=1e-5, atol=1e-6)
    with pytest.raises(mx.MXNetError, match="already freed"):  # its VJPs are spent, as after a backward
        head.backward()
