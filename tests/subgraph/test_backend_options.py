"""Backend options of ``HybridBlock.optimize_for``: a backend that declares its options rejects
a misspelled one (MXNetError naming block, backend, option and the accepted ones); declared
options reach the backend with their defaults; undeclared backends take anything."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import library, subgraph
from mxjax.gluon import nn
from mxjax.subgraph.property import PARTITION_OPTIONS, backend_options, check_backend_options

RNG = onp.random.default_rng(11)
SEEN = []  # the options each property instance saw, in order of partitioning


class _FusesOps(subgraph.SubgraphProperty):
    """Groups connected nodes whose op is in ``ops``; declares ``ops`` and ``tag``."""

    accepted_options = {"ops": ("FullyConnected", "Activation"), "tag": "fused"}

    def create_selector(self):
        SEEN.append(dict(self.options))
        ops = set(self.options["ops"])

        class Selector(subgraph.SubgraphSelector):
            def select(self, node):
                return node.op in ops

            def select_input(self, node, input_node):
                return input_node.op in ops

            def select_output(self, node, output_node):
                return output_node.op in ops
        return Selector()

    def subgraph_attrs(self, members, subgraph_id):
        return {"tag": str(self.options["tag"])}


class _Sizes(_FusesOps):
    """A second pass of the same backend, declaring an option of its own."""

    accepted_options = {"min_members": 1}

    def create_selector(self):
        SEEN.append(dict(self.options))
        return subgraph.SubgraphSelector()


class _Undeclared(_FusesOps):
    """A user property written without ``accepted_options``: every option goes."""

    accepted_options = None

    def create_selector(self):
        SEEN.append(dict(self.options))
        return subgraph.SubgraphSelector()


subgraph.register_backend("opts_declared", _FusesOps)
subgraph.register_backend("opts_two_passes", _FusesOps, _Sizes)
subgraph.register_backend("opts_undeclared", _Undeclared)
subgraph.register_backend("opts_mixed", _FusesOps, _Undeclared)


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(5, activation="relu", in_units=4), nn.Dense(3, in_units=5))
    net.initialize(mx.init.Xavier())
    return net


def _numpy_forward(net, x):
    (w1, b1, w2, b2) = [p.data().asnumpy() for p in net.collect_params().values()]
    h = onp.maximum(x @ w1.T + b1, 0)
    return h @ w2.T + b2


def _x():
    return RNG.normal(size=(2, 4)).astype(onp.float32)


def test_unknown_option_names_block_backend_option_and_accepted():
    net = _net()
    with pytest.raises(mx.MXNetError) as err:
        net.optimize_for(mx.np.array(_x()), backend="opts_declared", opz=("relu",))
    message = str(err.value)
    for part in ("HybridSequential.optimize_for", "'opts_declared'", "'opz'", "ops=", "tag='fused'",
                 "skip_infer"):
        assert part in message, (part, message)


def test_unknown_option_in_backend_opts_dict_is_rejected_too():
    block = nn.Dense(3, in_units=4)
    block.initialize()
    with pytest.raises(mx.MXNetError, match=r"Dense\.optimize_for: backend 'opts_declared' has no "
                                            r"options 'colour', 'size'"):
        block.optimize_for(mx.np.array(_x()), backend="opts_declared", backend_opts={"colour": 1}, size=2)


def test_hybridize_with_a_backend_checks_its_options_too():
    block = nn.Dense(3, in_units=4)
    block.initialize()
    with pytest.raises(mx.MXNetError, match=r"Dense\.hybridize: backend 'opts_declared' has no option 'tga'"):
        block.hybridize(backend="opts_declared", backend_opts={"tga": "x"})
    block.hybridize(backend="opts_declared", backend_opts={"tag": "x"})  # a declared one passes


def test_known_options_reach_the_backend_with_defaults_filled():
    net = _net()
    x = _x()
    SEEN.clear()
    net.optimize_for(mx.np.array(x), backend="opts_declared", backend_opts={"tag": "mine"})
    assert SEEN[-1] == {"ops": ("FullyConnected", "Activation"), "tag": "mine"}
    onp.testing.assert_allclose(net(mx.np.array(x)).asnumpy(), _numpy_forward(net, x), rtol=1e-5, atol=1e-6)

    SEEN.clear()
    net.optimize_for(mx.np.array(x), backend="opts_declared", ops=("FullyConnected",), skip_infer=True)
    assert SEEN[-1]["ops"] == ("FullyConnected",) and SEEN[-1]["tag"] == "fused"
    assert "skip_infer" not in SEEN[-1]  # Symbol.optimize_for's own option: accepted, not the backend's
    onp.testing.assert_allclose(net(mx.np.array(x)).asnumpy(), _numpy_forward(net, x), rtol=1e-5, atol=1e-6)


def test_backend_options_reach_the_partitioned_graph():
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    sym = mx.sym.Activation(sym, act_type="relu", name="act")
    part = sym.optimize_for("opts_declared", tag="seen")
    nodes = [n for n in part._nodes() if n.op == "_CachedOp"]
    assert len(nodes) == 1 and nodes[0].attrs["tag"] == "seen"


def test_each_pass_of_a_backend_takes_the_union_of_declared_options():
    assert backend_options("opts_two_passes") == {"ops": ("FullyConnected", "Activation"), "tag": "fused",
                                                  "min_members": 1}
    SEEN.clear()
    net = _net()
    net.optimize_for(mx.np.array(_x()), backend="opts_two_passes", tag="t", min_members=2)
    assert [s["tag"] for s in SEEN] == ["t", "t"] and [s["min_members"] for s in SEEN] == [2, 2]
    with pytest.raises(mx.MXNetError, match="'min_member'"):
        net.optimize_for(mx.np.array(_x()), backend="opts_two_passes", min_member=2)


@pytest.mark.parametrize("backend", ["opts_undeclared", "opts_mixed"])
def test_backend_without_declaration_accepts_anything(backend):
    assert backend_options(backend) is None
    net = _net()
    x = _x()
    SEEN.clear()
    net.optimize_for(mx.np.array(x), backend=backend, anything_goes=3, backend_opts={"other": "x"})
    assert SEEN and all(s["anything_goes"] == 3 and s["other"] == "x" for s in SEEN)
    onp.testing.assert_allclose(net(mx.np.array(x)).asnumpy(), _numpy_forward(net, x), rtol=1e-5, atol=1e-6)


def test_library_backends_declare_nothing():
    # what mx.library.load registers for a library partitioner: options are the library's business
    prop = library._unsupported_backend("opts_lib_part", "partitioner", "libdemo.so")
    subgraph.register_backend("opts_lib_part", prop)
    check_backend_options("Net.optimize_for", "opts_lib_part", {"lib_option": "1"})
    with pytest.raises(mx.MXNetError, match="library partitioners are not supported"):
        _net().optimize_for(mx.np.array(_x()), backend="opts_lib_part", lib_option="1")


def test_options_without_a_backend_are_refused():
    net = _net()
    with pytest.raises(mx.MXNetError, match=r"HybridSequential\.optimize_for: backend options \['bakend'\]"):
        net.optimize_for(mx.np.array(_x()), bakend="opts_declared")
    net.optimize_for(mx.np.array(_x()), skip_infer=True)  # Symbol.optimize_for's own: fine


def test_unregistered_backend_still_named():
    with pytest.raises(mx.MXNetError, match="'opts_missing' is not registered"):
        _net().optimize_for(mx.np.array(_x()), backend="opts_missing", ops=())
    assert set(PARTITION_OPTIONS) == {"shape_dict", "type_dict", "stype_dict", "skip_infer"}


def test_symbol_optimize_for_checks_options_and_partitions():
    data = mx.sym.var("data")
    out = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=3, name="fc"), act_type="relu")
    with pytest.raises(mx.MXNetError, match=r"Symbol.optimize_for: backend 'opts_declared' has no option 'tagg'"):
        out.optimize_for("opts_declared", tagg="x")
    SEEN.clear()
    parted = out.optimize_for("opts_declared", tag="mine", shape_dict={"data": (2, 4)})
    assert SEEN == [{"ops": ("FullyConnected", "Activation"), "tag": "mine"}]  # no partition options
    tags = [n.attrs.get("tag") for n in parted._nodes() if not n.is_variable]
    assert tags == ["mine"]  # one group of both ops
    x = _x()
    w, b = RNG.normal(size=(3, 4)).astype(onp.float32), RNG.normal(size=3).astype(onp.float32)
    args = {"data": mx.nd.array(x), "fc_weight": mx.nd.array(w), "fc_bias": mx.nd.array(b)}
    got = parted.bind(mx.cpu(), args).forward()[0].asnumpy()
    onp.testing.assert_allclose(got, onp.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)


def test_symbol_optimize_for_checks_the_given_shapes():
    out = mx.sym.FullyConnected(mx.sym.var("data"), mx.sym.var("w", shape=(3, 5)), num_hidden=3, no_bias=True)
    with pytest.raises(mx.MXNetError):
        out.optimize_for("opts_declared", shape_dict={"data": (2, 4)})  # 4 inputs, weight says 5
    out.optimize_for("opts_declared", shape_dict={"data": (2, 4)}, skip_infer=True)  # not checked


def test_backend_options_is_exported_by_mx_subgraph():
    assert subgraph.backend_options("opts_declared") == {"ops": ("FullyConnected", "Activation"), "tag": "fused"}
    assert subgraph.backend_options("opts_undeclared") is None
