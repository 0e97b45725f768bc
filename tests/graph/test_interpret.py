"""Graphs run as functions (``Symbol.graph_function``): the IR lowered to the straight-line form
and run by its one interpreter -- checked against NumPy, through the public Symbol API."""
import jax
import numpy as onp
import pytest

import mxjax as mx

A = onp.arange(12, dtype=onp.float32).reshape(3, 4)
B = onp.linspace(-1.0, 1.0, 6, dtype=onp.float32).reshape(3, 2)


def test_outputs_may_be_variables_later_outputs_of_multi_output_ops_and_scalar_ops():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    parts = mx.sym.split(a, num_outputs=2, axis=1)
    # the second output of a multi-output op read before the first; a scalar op (a constant input)
    graph = mx.sym.Group([parts[1], a, parts[0] * 2.0 + b, mx.sym.broadcast_add(parts[1], parts[0])])
    outs, updates = graph.graph_function()({"a": A, "b": B}, None)
    left, right = A[:, :2], A[:, 2:]
    for got, want in zip(outs, [right, A, left * 2.0 + B, right + left]):
        onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-6)
    assert updates == {}


def test_the_same_function_runs_under_jit_with_the_same_values():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    graph = mx.sym.tanh(mx.sym.dot(a, mx.sym.transpose(b))) - a.sum()
    fn = graph.graph_function()
    eager = fn({"a": A[:, :2], "b": B}, None)[0][0]
    jitted = jax.jit(lambda v: fn(v, None)[0][0])({"a": A[:, :2], "b": B})
    onp.testing.assert_allclose(onp.asarray(jitted), onp.asarray(eager), rtol=1e-6)
    onp.testing.assert_allclose(onp.asarray(eager), onp.tanh(A[:, :2] @ B.T) - A[:, :2].sum(), rtol=1e-5)


def test_random_nodes_draw_from_the_key_by_their_position():
    a = mx.sym.var("a")
    graph = mx.sym.Group([mx.sym.random.uniform(shape=(4,)) + a.sum(), mx.sym.random.uniform(shape=(4,))])
    fn = graph.graph_function()
    first, _ = fn({"a": A}, jax.random.PRNGKey(0))
    again, _ = fn({"a": A}, jax.random.PRNGKey(0))
    other, _ = fn({"a": A}, jax.random.PRNGKey(1))
    for x, y in zip(first, again):
        onp.testing.assert_array_equal(onp.asarray(x), onp.asarray(y))
    assert not onp.allclose(onp.asarray(first[1]), onp.asarray(other[1]))
    assert not onp.allclose(onp.asarray(first[0]) - A.sum(), onp.asarray(first[1]))  # two draws, not one
    with pytest.raises(mx.MXNetError, match=r"is random and needs a PRNG key"):
        fn({"a": A}, None)


def test_training_reports_the_new_auxiliary_states_by_variable_name():
    data, gamma, beta = mx.sym.var("data"), mx.sym.var("gamma"), mx.sym.var("beta")
    mean, var = mx.sym.var("mean"), mx.sym.var("var")
    graph = mx.sym.BatchNorm(data, gamma, beta, mean, var, momentum=0.9, fix_gamma=False)
    values = {"data": A, "gamma": onp.ones(4, onp.float32), "beta": onp.zeros(4, onp.float32),
              "mean": onp.zeros(4, onp.float32), "var": onp.ones(4, onp.float32)}
    _, updates = graph.graph_function(train=True)(values, None)
    assert set(updates) == {"mean", "var"}
    onp.testing.assert_allclose(onp.asarray(updates["mean"]), 0.1 * A.mean(axis=0), rtol=1e-5)
    _, updates = graph.graph_function(train=False)(values, None)
    assert updates == {}


def test_errors_name_the_input_or_the_operator():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    fn = mx.sym.dot(a, b, name="product").graph_function()
    with pytest.raises(mx.MXNetError, match="graph input 'b' has no value"):
        fn({"a": A}, None)
    with pytest.raises(mx.MXNetError, match=r"Error in operator product .*\(3, 4\) and \(3, 3\)"):
        fn({"a": A, "b": onp.ones((3, 3), onp.float32)}, None)
