"""npx.foreach / while_loop / cond: imperative against NumPy loops, hybridized == imperative, jax.jit, errors."""
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon, np, npx
from mxjax.gluon import nn
from mxjax.operator.control_flow import Subgraph
from oracle import check_hybrid, close, marked, run_op

RNG = onp.random.default_rng(7)


def _wrap(x):
    return np.ndarray._wrap(x)


# ----------------------------------------------------------------------------- foreach, imperative

def test_foreach_matches_a_numpy_loop():
    xs = RNG.normal(size=(5, 3)).astype(onp.float32)
    h0 = RNG.normal(size=(3,)).astype(onp.float32)
    outs, state = npx.foreach(lambda x, h: (x * h, h + x), np.array(xs), np.array(h0))
    want_outs, h = [], h0.copy()
    for x in xs:
        want_outs.append(x * h)
        h = h + x
    close(outs, onp.stack(want_outs), rtol=1e-6)
    close(state, h, rtol=1e-6)
    assert isinstance(outs, np.ndarray) and isinstance(state, np.ndarray)


def test_foreach_nested_structures_keep_their_shape():
    a, b = RNG.normal(size=(4, 2)), RNG.normal(size=(4, 3))

    def body(data, states):
        x, y = data
        s, (t, u) = states
        return [x + s, [y * t]], [s + 1, [t * 2, u + y.sum()]]

    init = [np.zeros(2, dtype="float64"), [np.ones(3, dtype="float64"), np.zeros((), dtype="float64")]]
    outs, states = npx.foreach(body, [np.array(a), np.array(b)], init)
    assert len(outs) == 2 and len(outs[1]) == 1 and len(states) == 2 and len(states[1]) == 2
    steps = onp.arange(4)[:, None]
    close(outs[0], a + steps)
    close(outs[1][0], b * 2.0 ** steps)
    close(states[0], onp.full(2, 4.0))
    close(states[1][0], onp.full(3, 16.0))
    close(states[1][1], b.sum())


def test_foreach_gradients_match_the_analytic_ones():
    xs_v, h_v = RNG.normal(size=(4, 3)), RNG.normal(size=(3,))
    xs, h0 = marked(xs_v), marked(h_v)
    with autograd.record():
        outs, h = npx.foreach(lambda x, h: (x * h[0], [h[0] * x + 1]), xs, [h0])
        loss = outs.sum() + h[0].sum()
    loss.backward()
    # h_t = h_{t-1} * x_t + 1, out_t = x_t * h_{t-1}: gradients by reverse accumulation in NumPy
    hs = [h_v]
    for x in xs_v:
        hs.append(hs[-1] * x + 1)
    g_h, g_x = onp.ones(3), onp.zeros_like(xs_v)
    for t in reversed(range(4)):
        g_x[t] = hs[t] + g_h * hs[t]        # from out_t and from h_t
        g_h = xs_v[t] + g_h * xs_v[t]       # into h_{t-1}
    close(xs.grad, g_x)
    close(h0.grad, g_h)


def test_foreach_with_no_steps_returns_empty_outputs_and_the_initial_states():
    outs, state = npx.foreach(lambda x, h: ([x * 2, x.sum()], h + 1), np.zeros((0, 3)), np.ones(2))
    assert outs[0].shape == (0, 3) and outs[1].shape == (0,)
    close(state, onp.ones(2))


def test_foreach_on_legacy_arrays():
    xs = onp.arange(6, dtype=onp.float32).reshape(3, 2)
    outs, state = npx.foreach(lambda x, h: (x + h, h * 2), mx.nd.array(xs), mx.nd.ones((2,)))
    assert type(outs) is mx.nd.NDArray
    close(outs, xs + onp.array([[1], [2], [4]]))
    close(state, onp.full(2, 8.0))


# ----------------------------------------------------------------------------- while_loop and cond, imperative

def _mxnet_example():
    """MXNet's while_loop docstring example: outputs padded with zeros to max_iterations."""
    cond = lambda i, s: i <= 5  # noqa: E731
    func = lambda i, s: ([i + s], [i + 1, s + i])  # noqa: E731
    return cond, func, (np.array([0], dtype="int64"), np.array([1], dtype="int64"))


def test_while_loop_matches_mxnet_example():
    cond, func, loop_vars = _mxnet_example()
    outputs, states = npx.while_loop(cond, func, loop_vars, max_iterations=10)
    assert isinstance(outputs, list) and len(outputs) == 1
    close(outputs[0], onp.array([1, 2, 4, 7, 11, 16, 0, 0, 0, 0]).reshape(10, 1))
    assert outputs[0].dtype == onp.int64
    close(states[0], [6])
    close(states[1], [16])


def test_while_loop_single_output_and_zero_steps():
    out, (v,) = npx.while_loop(lambda v: v.sum() > 100, lambda v: (v * 3, v + 1), np.ones(2), max_iterations=4)
    assert out.shape == (4, 2)           # shapes come from a trace of func
    close(out, onp.zeros((4, 2)))
    close(v, onp.ones(2))


def test_while_loop_gradients_match_a_python_loop():
    w_v = onp.array([0.9, 1.3])
    w = marked(w_v)
    with autograd.record():
        outs, (v,) = npx.while_loop(lambda v: v.sum() < 10, lambda v: (v * v, [v * w]), [np.ones(2, dtype="float64")],
                                    max_iterations=20)
        loss = outs.sum() + v.sum()
    loss.backward()
    # forward by hand: v_k = w^k while sum(v) < 10; d/dw of sum_k v_k^2 + v_n
    n, v_np = 0, onp.ones(2)
    while v_np.sum() < 10:
        v_np, n = v_np * w_v, n + 1
    close(outs[:n], w_v ** (2 * onp.arange(n)[:, None]))
    close(outs[n:], onp.zeros((20 - n, 2)))
    want = sum(2 * k * w_v ** (2 * k - 1) for k in range(n)) + n * w_v ** (n - 1)
    close(w.grad, want, rtol=1e-10)


def test_while_loop_past_max_iterations_is_an_error():
    with pytest.raises(mx.MXNetError, match="while_loop.*max_iterations=3"):
        npx.while_loop(lambda v: v.sum() < 100, lambda v: (v, [v * 2]), [np.ones(2)], max_iterations=3)
    # exactly max_iterations steps with the condition false afterwards is fine
    out, (v,) = npx.while_loop(lambda v: v.sum() < 16, lambda v: (v, [v * 2]), [np.ones(2)], max_iterations=3)
    close(v, [8, 8])


def test_cond_mxnet2_and_mxnet1_signatures():
    a, b = np.array([1.0]), np.array([2.0])
    out = npx.cond(lambda a, b: a * b < 5, lambda a, b: (a + 5) * (b + 5), lambda a, b: (a - 5) * (b - 5), [a, b])
    close(out, [42.0])
    out = npx.cond(a * b > 5, lambda: [(a + 5) * (b + 5)], lambda: [(a - 5) * (b - 5), ])
    assert isinstance(out, list)
    close(out[0], [12.0])


def test_cond_gradient_flows_through_the_chosen_branch():
    x_v = RNG.normal(size=(3,))
    for sign in (1.0, -1.0):
        x = marked(sign * onp.abs(x_v))
        with autograd.record():
            y = npx.cond(lambda x: x.sum() > 0, lambda x: x * x, lambda x: x * 3, x)
            y.sum().backward()
        close(x.grad, 2 * x.asnumpy() if sign > 0 else onp.full(3, 3.0))


# ----------------------------------------------------------------------------- hybridized == imperative

class RNN(gluon.HybridBlock):
    """A tanh RNN over time steps: the Dense layer is used inside the foreach body (free variables)."""

    def __init__(self, hidden=4):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.Dense(hidden, in_units=3 + hidden)
        self.scale = gluon.Parameter("scale", shape=(hidden,), init=mx.init.Constant(0.5))

    def forward(self, x):  # (T, B, 3)
        scale = self.scale.data() * 2      # computed outside the body, used inside it

        def body(xt, states):
            h = np.tanh(self.cell(np.concatenate([xt, states[0]], axis=-1)))
            return h * scale, [h]

        outs, (h,) = npx.foreach(body, x, [np.zeros((x.shape[1], self.hidden))])
        return outs + h


def _exported_graph(net, tmp_path):
    """(op names, input names) of the graph a hybridized block exports."""
    symbol_file, _ = net.export(str(tmp_path / "net"))
    nodes = json.loads(pathlib.Path(symbol_file).read_text())["nodes"]
    return [n["op"] for n in nodes], [n["name"] for n in nodes if n["op"] == "null"]


def _rnn_numpy(net, x):
    params = {name: p.data().asnumpy().astype(onp.float64) for name, p in net.collect_params().items()}
    w, b, scale = params["cell.weight"], params["cell.bias"], params["scale"]
    h, outs = onp.zeros((x.shape[1], net.hidden)), []
    for xt in x:
        h = onp.tanh(onp.concatenate([xt, h], axis=-1) @ w.T + b)
        outs.append(h * scale * 2)
    return onp.stack(outs) + h


def test_hybridized_foreach_rnn_equals_imperative_and_numpy(tmp_path):
    net = RNN()
    net.initialize()
    x = RNG.normal(size=(5, 2, 3)).astype(onp.float32)
    out = check_hybrid(net, x)
    onp.testing.assert_allclose(out, _rnn_numpy(net, x), rtol=1e-5, atol=1e-5)
    net.hybridize()
    onp.testing.assert_allclose(net(np.array(x)).asnumpy(), out, rtol=1e-5, atol=1e-5)
    ops, inputs = _exported_graph(net, tmp_path)
    assert ops.count("_foreach") == 1 and "FullyConnected" not in ops   # one node; the Dense is inside it
    assert sorted(inputs) == ["cell.bias", "cell.weight", "data", "scale"]


class Newton(gluon.HybridBlock):
    """Data-dependent trip count: scale a vector until it is large, emitting a Dense feature each step."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, in_units=3)

    def forward(self, x):  # (3,)
        def func(i, v):
            return [np.tanh(self.dense(v.reshape(1, 3))).reshape(2), i], [i + 1, v * 1.5]
        outs, (i, v) = npx.while_loop(lambda i, v: np.abs(v).sum() < 6, func, [np.zeros((), dtype="int64"), x],
                                      max_iterations=8)
        return outs[0] * 2 + v.sum() + outs[1].reshape(8, 1)


def test_hybridized_while_loop_equals_imperative():
    net = Newton()
    net.initialize()
    w, b = (p.data().asnumpy().astype(onp.float64) for p in net.collect_params().values())
    for x in (onp.array([0.5, -0.2, 0.3]), onp.array([1.0, 2.0, -1.0]), onp.array([3.0, 4.0, 5.0])):
        v, rows = x, []
        while onp.abs(v).sum() < 6:     # the same loop in NumPy; rows past the last step are zeros
            rows.append(onp.tanh(w @ v + b) * 2 + len(rows))
            v = v * 1.5
        want = onp.zeros((8, 2))
        want[:len(rows)] = onp.reshape(rows, (-1, 2))
        if rows:
            out = check_hybrid(net, x.astype(onp.float32))
        else:  # no step: the weights get no gradient, which the imperative tape leaves stale
            out = net(np.array(x, dtype="float32")).asnumpy()
            net.hybridize()
            onp.testing.assert_allclose(net(np.array(x, dtype="float32")).asnumpy(), out)
        onp.testing.assert_allclose(out, want + v.sum(), rtol=1e-5, atol=1e-5)


class Branchy(gluon.HybridBlock):
    def __init__(self, closures=False):
        super().__init__()
        self.dense = nn.Dense(3, in_units=3)
        self.closures = closures

    def forward(self, x):
        if self.closures:  # MXNet 1.x: a condition array and branches without arguments
            return npx.cond(x.sum() > 0, lambda: self.dense(x) * 2, lambda: np.tanh(self.dense(-x)))
        return npx.cond(lambda x: x.sum() > 0, lambda x: self.dense(x) * 2, lambda x: np.tanh(self.dense(-x)), [x])


@pytest.mark.parametrize("closures", [False, True])
def test_hybridized_cond_equals_imperative_on_both_branches(tmp_path, closures):
    net = Branchy(closures)
    net.initialize()
    x = onp.abs(RNG.normal(size=(2, 3))).astype(onp.float32)
    w, b = (p.data().asnumpy() for p in net.collect_params().values())
    onp.testing.assert_allclose(check_hybrid(net, x), (x @ w.T + b) * 2, rtol=1e-5)
    onp.testing.assert_allclose(check_hybrid(net, -x), onp.tanh(x @ w.T + b), rtol=1e-5)
    net.hybridize()
    net(np.array(x))
    ops = _exported_graph(net, tmp_path)[0]
    assert ops.count("_cond") == 1 and "FullyConnected" not in ops


def test_hybridize_switches_back_and_forth():
    net = RNN()
    net.initialize()
    x = np.array(RNG.normal(size=(3, 2, 3)).astype(onp.float32))
    imperative = net(x).asnumpy()
    for active in (True, False, True):
        net.hybridize(active=active)
        onp.testing.assert_allclose(net(x).asnumpy(), imperative, rtol=1e-5, atol=1e-6)


class Nested(gluon.HybridBlock):
    """foreach inside foreach; the inner body reads the outer body's state and a plain constant array."""

    CONST = np.array([0.5, -1.0])

    def forward(self, x):  # (T, U, 2)
        def outer(xt, s):
            outs, s2 = npx.foreach(lambda xu, c: (xu * s + c * self.CONST, c + xu), xt, s)
            return outs.sum(axis=0), s2
        outs, s = npx.foreach(outer, x, np.ones(x.shape[2:]))
        return outs * s


def test_nested_foreach_with_closures():
    x = RNG.normal(size=(3, 2, 2)).astype(onp.float32)
    s, rows = onp.ones(2), []
    for xt in x:
        c, acc = s, 0
        for xu in xt:
            acc, c = acc + xu * s + c * onp.array([0.5, -1.0]), c + xu
        rows.append(acc)
        s = c
    out = check_hybrid(Nested(), x)
    onp.testing.assert_allclose(out, onp.stack(rows) * s, rtol=1e-5, atol=1e-5)


def test_overflow_in_a_hybridized_block_is_an_error():
    class Doubling(gluon.HybridBlock):
        def forward(self, x):
            return npx.while_loop(lambda v: v.sum() < 100, lambda v: (v, [v * 2]), [x], max_iterations=3)[1][0]

    net = Doubling()
    net.hybridize()
    close(net(np.array([10.0, 10.0])), [80.0, 80.0])
    with pytest.raises(Exception, match="while_loop: the loop condition is still true after max_iterations=3"):
        net(np.ones(2)).asnumpy()


# ----------------------------------------------------------------------------- jax.jit over tracers

def test_jax_jit_over_tracers_compiles_the_loops():
    def program(xs, h, w):
        outs, h = npx.foreach(lambda x, h: (x * h, h * _wrap(w) + x), _wrap(xs), _wrap(h))
        steps, (v,) = npx.while_loop(lambda v: v.sum() < 50, lambda v: (v.sum(), [v * 2]), [h], max_iterations=30)
        picked = npx.cond(lambda v: v.sum() > 0, lambda v: v * 2, lambda v: -v, v)
        return outs.to_jax().sum() + steps.to_jax().sum() + picked.to_jax().sum()

    xs, h, w = jnp.linspace(0.1, 1.0, 6).reshape(3, 2), jnp.ones(2), jnp.asarray(0.8)
    eager = program(xs, h, w)
    jitted = jax.jit(program)(xs, h, w)
    onp.testing.assert_allclose(jitted, eager, rtol=1e-6)
    grad = jax.grad(program, argnums=2)(xs, h, w)
    eps = 1e-3  # the value is ~300 in float32: a step of 1e-4 moves it by a few of its rounding steps only
    numeric = (program(xs, h, w + eps) - program(xs, h, w - eps)) / (2 * eps)
    onp.testing.assert_allclose(grad, numeric, rtol=1e-4)


# ----------------------------------------------------------------------------- the ops themselves

def test_ops_run_subgraphs_directly_with_mxnet_locations():
    # foreach: node inputs (data, state, weight) feed body inputs 2, 0, 1 (MXNet's in_*_locs)
    body = Subgraph(lambda s, w, x: (x * w + s, s + x), 2, "body")
    outs, final = run_op("_foreach", [onp.arange(6.0).reshape(3, 2), onp.ones(2), onp.full(2, 2.0)],
                         num_args=4, num_outputs=2, num_out_data=1, in_data_locs=(2,), in_state_locs=(0,),
                         remain_locs=(1,), __subgraphs__=(body,))
    close(outs, [[1, 3], [5, 8], [11, 15]])
    close(final, [7, 10])
    # while_loop: node inputs (limit, v); the loop variable v is func's input 0 = node input 1
    cond = Subgraph(lambda limit, v: (v.sum() < limit,), 1, "cond")
    func = Subgraph(lambda v: (v[0], v + 1), 2, "func")
    outs, v = run_op("_while_loop", [onp.array(10.0), onp.zeros(2)], num_args=4, num_outputs=2, num_out_data=1,
                     max_iterations=8, cond_input_locs=(0, 1), func_input_locs=(1,), func_var_locs=(0,),
                     __subgraphs__=(cond, func))
    close(outs, [0, 1, 2, 3, 4, 0, 0, 0])
    close(v, [5, 5])
    # cond: pred reads node input 1, the branches input 0
    pred = Subgraph(lambda a: (a.sum() > 0,), 1, "pred")
    then, other = Subgraph(lambda a: (a + 1,), 1, "then"), Subgraph(lambda a: (a - 1,), 1, "else")
    for flag, want in ((-1.0, [0, 0]), (1.0, [2, 2])):
        (picked,) = run_op("_cond", [onp.ones(2), onp.array([flag])], num_args=5, cond_input_locs=(1,),
                           then_input_locs=(0,), else_input_locs=(0,), __subgraphs__=(pred, then, other))
        close(picked, want)
    with pytest.raises(mx.MXNetError, match="_cond: parameter __subgraphs__ must be a tuple of 3 traced sub-graphs"):
        run_op("_cond", [onp.array(1), onp.ones(2)], __subgraphs__=("x + 1",))
    with pytest.raises(mx.MXNetError, match="_foreach: num_args=3 counts the 1 sub-graph"):
        run_op("_foreach", [onp.ones((3, 2)), onp.ones(2), onp.ones(2)], num_args=3, num_outputs=2, num_out_data=1,
               in_data_locs=(2,), in_state_locs=(0,), remain_locs=(1,), __subgraphs__=(body,))
    with pytest.raises(mx.MXNetError, match=r"_foreach: the input locations \(2, 2, 1\) do not give every input"):
        run_op("_foreach", [onp.ones((3, 2)), onp.ones(2), onp.ones(2)], num_args=4, num_outputs=2, num_out_data=1,
               in_data_locs=(2,), in_state_locs=(2,), remain_locs=(1,), __subgraphs__=(body,))


# ----------------------------------------------------------------------------- bad input

def test_bad_arguments_name_the_function():
    x = np.ones((3, 2))
    with pytest.raises(mx.MXNetError, match="foreach: body must be a function"):
        npx.foreach("body", x, x[0])
    with pytest.raises(mx.MXNetError, match="foreach: the data arrays must share their length along axis 0"):
        npx.foreach(lambda d, s: (d, s), [x, np.ones((4, 2))], x[0])
    with pytest.raises(mx.MXNetError, match="foreach: body must return a pair"):
        npx.foreach(lambda d, s: d, x, x[0])
    with pytest.raises(mx.MXNetError, match=r"foreach: the body's new states .* got \(2,\) float32, expected"):
        npx.foreach(lambda d, s: (d, s[0]), x, [x[0]])        # [h] in, h out
    with pytest.raises(mx.MXNetError, match=r"foreach: the body's new states .* got \[\(3,\) float32\]"):
        npx.foreach(lambda d, s: (d, [np.ones(3)]), x, [x[0]])
    for bad in (None, 0, -2, 2.5):
        with pytest.raises(mx.MXNetError, match="while_loop: max_iterations"):
            npx.while_loop(lambda v: v.sum() < 3, lambda v: (v, v + 1), x, max_iterations=bad)
    with pytest.raises(mx.MXNetError, match="while_loop: cond must be a function"):
        npx.while_loop(True, lambda v: (v, v + 1), x, max_iterations=2)
    with pytest.raises(mx.MXNetError, match="while_loop: func's new loop_vars"):
        npx.while_loop(lambda v: v.sum() < 30, lambda v: (v, v.astype("float64")), x, max_iterations=2)
    with pytest.raises(mx.MXNetError, match=r"while_loop: cond must give a single value .* shape \(3, 2\)"):
        npx.while_loop(lambda v: v < 3, lambda v: (v, v + 1), x, max_iterations=2)
    with pytest.raises(mx.MXNetError, match="cond: else_func must be a function"):
        npx.cond(x.sum() > 0, lambda: x, None)


def test_compiled_cond_branches_must_agree():
    class Mismatch(gluon.HybridBlock):
        def forward(self, x):
            return npx.cond(lambda x: x.sum() > 0, lambda x: x, lambda x: x.sum(axis=0), [x])

    net = Mismatch()
    net(np.ones((2, 3)))                 # imperative: only the chosen branch runs, as in MXNet
    net.hybridize()
    with pytest.raises(mx.MXNetError, match=r"cond: then_func and else_func .* then gives \(2, 3\) float32, "
                                            r"else gives \(3,\) float32"):
        net(np.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match="cond: then_func and else_func"):
        jax.jit(lambda v: npx.cond(_wrap(v).sum() > 0, lambda: [_wrap(v)], lambda: [_wrap(v), _wrap(v)]))(jnp.ones(2))


def test_compiled_body_errors():
    class ReadsValues(gluon.HybridBlock):
        def forward(self, x):
            return npx.foreach(lambda d, s: (d * float(s.sum()), s), x, x[0])[0]

    class Masks(gluon.HybridBlock):
        def forward(self, x):
            return npx.foreach(lambda d, s: (d[d > 0].sum(), s), x, x[0])[0]

    class Mismatch(gluon.HybridBlock):
        def forward(self, x):
            return npx.foreach(lambda d, s: (d, s.astype("float64")), x, x[0])[0]

    for block, message in ((ReadsValues(), "foreach: the values of the loop's arrays cannot be read"),
                           (Masks(), "foreach: .* has an output shape that depends on values"),
                           (Mismatch(), r"foreach: the body's new states .* got \(2,\) float64")):
        block.hybridize()
        with pytest.raises(mx.MXNetError, match=message):
            block(np.ones((3, 2)))


def test_legacy_contrib_names_run_the_same_functions():
    data = onp.arange(6.0, dtype=onp.float32).reshape(3, 2)
    out, states = mx.nd.contrib.foreach(lambda d, s: (d * 2, [s[0] + d]), mx.nd.array(data), [mx.nd.zeros((2,))])
    onp.testing.assert_allclose(out.asnumpy(), data * 2)
    onp.testing.assert_allclose(states[0].asnumpy(), data.sum(axis=0))
    assert mx.nd.contrib.while_loop is mx.npx.while_loop and mx.nd.contrib.cond is mx.npx.cond
