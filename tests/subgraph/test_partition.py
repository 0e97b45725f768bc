"""Subgraph properties and the partitioner: groups, cycle splitting, the contracted graph computes the same
values (NumPy), JSON round trips, Symbol.optimize_for and HybridBlock.optimize_for."""
import json

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, subgraph
from mxjax.gluon import nn

RNG = onp.random.default_rng(5)


class _OpsProperty(subgraph.SubgraphProperty):
    """Groups connected nodes whose op is in ``ops`` (option)."""

    name = "ops"

    def create_selector(self):
        ops = set(self.options.get("ops", ("FullyConnected", "Activation")))

        class Selector(subgraph.SubgraphSelector):
            def select(self, node):
                return node.op in ops

            def select_input(self, node, input_node):
                return input_node.op in ops

            def select_output(self, node, output_node):
                return output_node.op in ops
        return Selector()


class _AllButProperty(_OpsProperty):
    """Every node except the ``barrier`` ops, one group per level (the dynamic-shape split)."""

    merge_unconnected = True

    def create_selector(self):
        barrier = set(self.options.get("barrier", ("exp",)))

        class Selector(subgraph.SubgraphSelector):
            def select(self, node):
                return node.op not in barrier
        return Selector()


subgraph.register_backend("test_ops", _OpsProperty)
subgraph.register_backend("test_levels", _AllButProperty)


def _mlp_symbol():
    x = mx.sym.var("data")
    h = mx.sym.FullyConnected(x, num_hidden=4, name="fc1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    e = mx.sym.exp(h, name="e")
    out = mx.sym.FullyConnected(h + e, num_hidden=3, name="fc2")
    return mx.sym.Group([out, e])


def _values():
    return {"data": RNG.normal(size=(2, 5)), "fc1_weight": RNG.normal(size=(4, 5)), "fc1_bias": RNG.normal(size=4),
            "fc2_weight": RNG.normal(size=(3, 4)), "fc2_bias": RNG.normal(size=3)}


def _numpy(v):
    h = onp.maximum(v["data"] @ v["fc1_weight"].T + v["fc1_bias"], 0)
    e = onp.exp(h)
    return (h + e) @ v["fc2_weight"].T + v["fc2_bias"], e


def _run(sym, values):
    return [o.asnumpy() for o in sym.eval(**{k: mx.nd.array(v, dtype="float64") for k, v in values.items()})]


def _cached_ops(sym):
    return [n for n in json.loads(sym.tojson())["nodes"] if n["op"] == "_CachedOp"]


def test_connected_groups_compute_the_same_values():
    sym = _mlp_symbol()
    part = sym.optimize_for("test_ops")
    groups = _cached_ops(part)
    assert len(groups) == 2  # fc1+relu1, then fc2 (the add and exp are not selected)
    assert part.list_inputs() == sym.list_inputs() and part.list_outputs()[1] == sym.list_outputs()[1]
    values = _values()
    want = _numpy(values)
    for got, w in zip(_run(part, values), want):
        onp.testing.assert_allclose(got, w, rtol=1e-10)
    inner = [n["op"] for n in groups[0]["subgraphs"][0]["nodes"]]
    assert inner.count("FullyConnected") == 1 and "Activation" in inner


def test_a_group_that_would_make_a_cycle_is_split():
    x = mx.sym.var("x")
    a = mx.sym.relu(x, name="a")
    b = mx.sym.exp(a, name="b")          # outside the group
    c = mx.sym.broadcast_add(a, b, name="c")  # would re-enter a group {a, c}
    sym = c.optimize_for("test_ops", ops=("relu", "broadcast_add"))
    groups = subgraph.find_groups(c._outputs, _OpsProperty(ops=("relu", "broadcast_add")))
    assert [[n.name for n in g] for g in groups] == [["a"], ["c"]]
    v = RNG.normal(size=(3,))
    want = onp.maximum(v, 0) + onp.exp(onp.maximum(v, 0))
    onp.testing.assert_allclose(_run(sym, {"x": v})[0], want, rtol=1e-12)


def test_merge_unconnected_splits_at_barriers_by_level():
    sym = _mlp_symbol()
    groups = subgraph.find_groups(sym._outputs, _AllButProperty())
    names = [[n.name for n in g] for g in groups]
    assert names[0] == ["fc1", "relu1"] and "fc2" in names[1] and len(names) == 2
    part = sym.optimize_for("test_levels")
    values = _values()
    for got, w in zip(_run(part, values), _numpy(values)):
        onp.testing.assert_allclose(got, w, rtol=1e-10)


def test_json_round_trip_and_shape_inference_of_a_partitioned_symbol():
    part = _mlp_symbol().optimize_for("test_ops")
    again = mx.sym.fromjson(part.tojson())
    assert len(_cached_ops(again)) == 2
    arg_shapes, out_shapes, _ = again.infer_shape(data=(2, 5))
    assert dict(zip(again.list_arguments(), arg_shapes))["fc1_weight"] == (4, 5)
    assert out_shapes == [(2, 3), (2, 4)]
    values = _values()
    for got, w in zip(_run(again, values), _numpy(values)):
        onp.testing.assert_allclose(got, w, rtol=1e-10)


def test_unknown_backend_and_bad_property():
    with pytest.raises(mx.MXNetError, match="not registered.*test_ops"):
        _mlp_symbol().optimize_for("no_such_backend")
    with pytest.raises(mx.MXNetError, match="not a SubgraphProperty"):
        subgraph.register_backend("bad", dict)


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(6, activation="relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def test_hybrid_block_optimize_for_matches_and_exports(tmp_path):
    x = mx.np.array(RNG.normal(size=(4, 5)).astype(onp.float32))
    net = _net()
    want = net(x).asnumpy()
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    want_grads = [p.grad().asnumpy().copy() for p in net.collect_params().values()]
    net.optimize_for(x, backend="test_ops", ops=("FullyConnected", "relu", "Activation"))
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    for p, g in zip(net.collect_params().values(), want_grads):
        onp.testing.assert_allclose(p.grad().asnumpy(), g, rtol=1e-5, atol=1e-6)
    symbol_file, _ = net.export(str(tmp_path / "part"))
    assert _cached_ops(mx.sym.load(symbol_file))
    with pytest.raises(mx.MXNetError, match="not registered"):
        net.optimize_for(x, backend="nope")
    net.hybridize(backend="test_levels")
    onp.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)


def test_infer_shape_of_a_container_fills_children():
    net = _net()
    net.infer_shape(mx.np.zeros((2, 7)))
    assert net[0].weight.shape == (6, 7) and net[1].weight.shape == (3, 6)

    class Own(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.w = mx.gluon.Parameter("w", shape=(0, 3))

        def forward(self, x):
            return x * self.w.data()
    with pytest.raises(mx.MXNetError, match=r"\['w'\] of unknown shape"):
        Own().infer_shape(mx.np.zeros((2, 3)))
