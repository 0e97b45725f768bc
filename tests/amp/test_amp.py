"""mx.amp: op casting after init, graph conversion, dynamic loss scaling, AMP training.

bfloat16 is the CPU target (as in MXNet); float16 runs on the CPU too, only slower.  Oracles:
the same model in float32, NumPy, and loss-scale sequences worked out by hand.
"""
import numpy as np
import pytest

import mxjax as mx
from mxjax import amp, autograd
from mxjax.amp import loss_scaler
from mxjax.base import MXNetError
from mxjax.gluon import nn, Trainer
from mxjax.gluon.parameter import Parameter
from mxjax.operator.registry import OPS
from mxjax.gluon.loss import SoftmaxCrossEntropyLoss

BF16 = np.dtype(mx.np.ones(1, dtype="bfloat16").dtype)


@pytest.fixture(autouse=True)
def fresh_amp():
    amp.amp._reset()
    yield
    amp.amp._reset()


def small_cnn(classes=3, seed=0):
    mx.np.random.seed(seed)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 3, padding=1, in_channels=1), nn.BatchNorm(in_channels=6), nn.Activation("relu"),
            nn.MaxPool2D(), nn.Flatten(), nn.Dense(16, in_units=6 * 4 * 4, activation="relu"),
            nn.Dense(classes, in_units=16))
    net.initialize(mx.init.Xavier())
    return net


class SoftmaxHead(nn.HybridBlock):
    """A CNN whose graph ends in softmax (a float32 op) after its last Dense."""

    def __init__(self):
        super().__init__()
        self.body = small_cnn()

    def forward(self, x):
        return mx.npx.softmax(self.body(x))


def images(n, seed):
    """Three classes of 8x8 images: a bright row band at the top, middle or bottom, under heavy noise
    (float32 training reaches about 94%, not 100%, so a precision loss would show)."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 3, size=n)
    x = rng.normal(0.0, 1.5, size=(n, 1, 8, 8)).astype("float32")
    for i, c in enumerate(labels):
        x[i, 0, 1 + 2 * c:3 + 2 * c, :] += 1.0
    return x, labels.astype("float32")


# ----------------------------------------------------------------------------- graph conversion

def test_converted_cnn_forward_close_to_float32():
    net = small_cnn()
    x = mx.np.array(images(8, 1)[0])
    want = net(x).asnumpy()
    converted = amp.convert_hybrid_block(net, x, target_dtype="bfloat16")
    got = converted(x)
    assert got.dtype == BF16
    # bfloat16 keeps 8 mantissa bits (relative step 2**-8): allow 3% of the output range
    np.testing.assert_allclose(got.asnumpy().astype("float32"), want, rtol=0, atol=0.03 * np.abs(want).max())
    # the original block is untouched
    assert all(p.dtype == np.float32 for p in net.collect_params().values())
    np.testing.assert_array_equal(net(x).asnumpy(), want)


def _internal_dtypes(block, x):
    """dtype of every node output of a converted SymbolBlock, computed by running its graph."""
    sym = block._symbol
    inputs = {"data": x.as_nd_ndarray()}
    inputs.update({k: p.data().as_nd_ndarray() for k, p in block.collect_params().items()})
    internals = sym.get_internals()
    aux = set(internals.list_auxiliary_states())
    executor = internals.bind(mx.cpu(), args={k: v for k, v in inputs.items() if k not in aux},
                              aux_states={k: v for k, v in inputs.items() if k in aux})
    outs = executor.forward()
    return {name: np.dtype(o.dtype) for name, o in zip(internals.list_outputs(), outs)}


def test_converted_graph_runs_products_in_bfloat16_and_softmax_in_float32():
    net = SoftmaxHead()
    net.hybridize()
    x = mx.np.array(images(4, 2)[0])
    want = net(x).asnumpy()
    converted = amp.convert_hybrid_block(net, target_dtype="bfloat16")  # 2.0.0b1 style: already run
    ops = {n.name: OPS[n.op].name for n in converted._symbol._nodes() if not n.is_variable}
    dtypes = _internal_dtypes(converted, x)
    convs = [n for n, op in ops.items() if op == "Convolution"]
    denses = [n for n, op in ops.items() if op == "FullyConnected"]
    softmaxes = [n for n, op in ops.items() if op == "softmax"]
    assert len(convs) == 1 and len(denses) == 2 and len(softmaxes) == 1
    for name in convs + denses:
        assert dtypes[name + "_output"] == BF16, name
    assert dtypes[softmaxes[0] + "_output"] == np.float32
    assert "amp_cast" in ops.values()
    out = converted(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), want, atol=0.02)


def test_cast_params_offline_stores_product_weights_in_bfloat16():
    net = small_cnn()
    x = mx.np.array(images(4, 3)[0])
    want = net(x).asnumpy()
    converted = amp.convert_hybrid_block(net, x, target_dtype="bfloat16", cast_params_offline=True)
    dtypes = {k: p.dtype for k, p in converted.collect_params().items()}
    assert dtypes["0.weight"] == BF16 and dtypes["5.weight"] == BF16 and dtypes["6.bias"] == BF16
    assert dtypes["1.gamma"] == np.float32 and dtypes["1.running_mean"] == np.float32  # BatchNorm: float32
    cast_inputs = [n.inputs[0][0].name for n in converted._symbol._nodes() if n.op == "amp_cast"]
    assert "0.weight" not in cast_inputs and "data" in cast_inputs
    got = converted(x).asnumpy().astype("float32")
    np.testing.assert_allclose(got, want, rtol=0, atol=0.03 * np.abs(want).max())


def test_convert_model_against_numpy():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    out = mx.sym.log_softmax(mx.sym.exp(fc, name="ex"), name="lsm")
    rng = np.random.RandomState(0)
    w, b = rng.normal(size=(3, 5)).astype("float32") * 0.3, rng.normal(size=3).astype("float32") * 0.1
    x = rng.normal(size=(4, 5)).astype("float32")
    args = {"fc_weight": mx.nd.array(w), "fc_bias": mx.nd.array(b)}
    sym, new_args, new_aux = amp.convert_model(out, args, {}, target_dtype="bfloat16", cast_optional_params=True)
    assert new_aux == {} and np.dtype(new_args["fc_weight"].dtype) == BF16
    assert np.dtype(args["fc_weight"].dtype) == np.float32  # the caller's dict is not changed
    nodes = {n.name: n for n in sym._nodes()}
    assert nodes["fc"].inputs[0][0].op == "amp_cast" and nodes["fc"].inputs[0][0].params["dtype"] == "bfloat16"
    assert nodes["ex"].inputs[0][0].params["dtype"] == "float32"  # exp takes float32
    assert nodes["lsm"].inputs[0][0].op != "amp_cast"  # exp's output is float32 already: no second cast
    got = sym.eval(data=mx.nd.array(x), **new_args)[0].asnumpy()
    z = np.exp(x @ w.T + b)
    want = z - z.max(1, keepdims=True) - np.log(np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True))
    np.testing.assert_allclose(got, want, rtol=0.02, atol=0.02)
    # 2.0-final spelling: input dtypes as the fourth argument
    sym2, _, _ = amp.convert_model(out, args, {}, {"data": "float32"}, "bfloat16")
    assert [n.op for n in sym2._nodes()] == [n.op for n in amp.convert_symbol(out, "bfloat16")._nodes()]


def test_widest_cast_and_excluded_names():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    fc = mx.sym.FullyConnected(a, num_hidden=2, no_bias=True, name="fc")
    total = mx.sym.elemwise_add(fc, b, name="plus")
    sym = amp.convert_symbol(total, "bfloat16", data_names=["a", "b"])
    plus = {n.name: n for n in sym._nodes()}["plus"]
    assert {e[0].op for e in plus.inputs} == {"amp_multicast"}
    x, w, y = np.ones((2, 3), "float32"), np.full((2, 3), 0.5, "float32"), np.full((2, 2), 0.25, "float32")
    out = sym.eval(a=mx.nd.array(x), b=mx.nd.array(y), fc_weight=mx.nd.array(w))[0]
    assert np.dtype(out.dtype) == np.float32  # widest of bfloat16 and float32
    np.testing.assert_allclose(out.asnumpy(), x @ w.T + y)
    kept = amp.convert_symbol(total, "bfloat16", data_names=["a", "b"], excluded_sym_names=["fc"])
    assert "amp_multicast" not in {n.op for n in kept._nodes()}
    assert all(n.params.get("dtype") != "bfloat16" for n in kept._nodes() if n.op == "amp_cast")


def test_remove_amp_casts_gives_back_the_float32_graph():
    from mxjax.amp._graph import remove_amp_casts
    net = SoftmaxHead()
    x = mx.np.array(images(2, 4)[0])
    converted = amp.convert_hybrid_block(net, x, target_dtype="bfloat16")
    original = net._cache.programs()[0][1].symbol
    stripped = remove_amp_casts(converted._symbol)
    assert {n.op for n in stripped._nodes()}.isdisjoint({"amp_cast", "amp_multicast"})
    assert stripped.tojson() == original.tojson()
    assert converted._symbol.tojson() != original.tojson()  # the conversion itself is left alone


# ----------------------------------------------------------------------------- amp.init

def test_init_casts_imperative_and_hybridized_calls():
    amp.init("bfloat16")
    x, w = mx.np.ones((2, 3)), mx.np.ones((4, 3))
    y = mx.npx.fully_connected(x, w, no_bias=True, num_hidden=4)
    assert y.dtype == BF16
    assert mx.npx.softmax(y).dtype == np.float32
    assert mx.np.exp(y).dtype == np.float32
    assert (y + mx.np.ones((2, 4))).dtype == np.float32  # add: widest of its inputs
    assert mx.nd.FullyConnected(mx.nd.ones((2, 3)), mx.nd.ones((4, 3)), no_bias=True,
                                num_hidden=4).dtype == BF16
    # a model built after init: products in bfloat16, softmax in float32, gradients in float32
    net = SoftmaxHead()
    net.hybridize()
    xs = mx.np.array(images(4, 5)[0])
    for p in net.collect_params().values():
        p.zero_grad()
    with autograd.record():
        out = net(xs)
        loss = mx.np.log(out).sum()
    loss.backward()
    assert out.dtype == np.float32
    grad = net.body[0].weight.grad()
    assert grad.dtype == np.float32 and np.isfinite(grad.asnumpy()).all() and np.abs(grad.asnumpy()).sum() > 0
    amp.init("float16")  # a second init changes nothing, as in MXNet
    assert mx.npx.fully_connected(x, w, no_bias=True, num_hidden=4).dtype == BF16


def test_init_with_own_tables_and_conditional_ops():
    amp.init("float16", target_precision_ops=["FullyConnected"], fp32_ops=["Convolution"],
             conditional_fp32_ops=[("Activation", "act_type", ["tanh"])])
    x = mx.np.ones((1, 1, 4, 4), dtype="float16")
    assert mx.npx.convolution(x, mx.np.ones((2, 1, 3, 3), dtype="float16"), kernel=(3, 3), num_filter=2,
                              no_bias=True).dtype == np.float32
    h = mx.np.ones((2, 3), dtype="float16")
    assert mx.npx.activation(h, act_type="tanh").dtype == np.float32
    assert mx.npx.activation(h, act_type="relu").dtype == np.float16
    assert mx.npx.fully_connected(mx.np.ones((2, 3)), mx.np.ones((4, 3)), no_bias=True,
                                  num_hidden=4).dtype == np.float16


def test_reset_restores_float32_ops():
    amp.init("bfloat16")
    amp.amp._reset()
    assert mx.npx.fully_connected(mx.np.ones((2, 3)), mx.np.ones((4, 3)), no_bias=True,
                                  num_hidden=4).dtype == np.float32


def test_loss_output_layer_takes_loss_scale_in_float16():
    amp.init("float16", target_precision_ops=[])
    data, label = mx.nd.array([[1.0, 2.0, 0.5]]), mx.nd.array([1.0])
    data.attach_grad()
    with autograd.record():
        out = mx.nd.SoftmaxOutput(data, label)
    out.backward()
    p = np.exp([1.0, 2.0, 0.5]) / np.exp([1.0, 2.0, 0.5]).sum()
    np.testing.assert_allclose(data.grad.asnumpy()[0], (p - [0, 1, 0]) * 2.0 ** 16, rtol=1e-5)


# ----------------------------------------------------------------------------- loss scaling

def _param_with_grad(values):
    p = Parameter("w", shape=(len(values),))
    p.initialize()
    p.grad()[:] = mx.np.array(values)
    return p


def test_loss_scaler_sequence_by_hand():
    default = loss_scaler.LossScaler()
    assert default.loss_scale == 2.0 ** 16 and default._scale_seq_len == 2000 and default._max_loss_scale == 2.0 ** 24
    scaler = loss_scaler.LossScaler(init_scale=8.0, max_scale=32.0, scale_seq_len=3)
    good, bad = [_param_with_grad([1.0, 2.0])], [_param_with_grad([1.0, np.inf]), _param_with_grad([0.0])]
    nan = [_param_with_grad([np.nan])]
    steps = [good, good, bad, good, good, good, good, good, good, good, good, good, nan, good]
    want = [(False, 8), (False, 8), (True, 4), (False, 4), (False, 4), (False, 8), (False, 8), (False, 8),
            (False, 16), (False, 16), (False, 16), (False, 32), (True, 16), (False, 16)]
    got = [(scaler.has_overflow(params), scaler.loss_scale) for params in steps]
    assert got == want
    # the growth is capped at max_scale
    for _ in range(6):
        scaler.has_overflow(good)
    assert scaler.loss_scale == 32.0


def _dense_net(seed=3):
    mx.np.random.seed(seed)
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.Normal(0.5))
    return net


def _one_sgd_step(net, x, y, trainer, use_amp, unscale_first=False):
    with autograd.record():
        loss = ((net(x) - y) ** 2).sum()
        if use_amp:
            with amp.scale_loss(loss, trainer) as scaled:
                autograd.backward(scaled)
    if not use_amp:
        loss.backward()
    if unscale_first:
        amp.unscale(trainer)
    trainer.step(4)


def test_scale_loss_and_unscale_match_float32_update():
    x = mx.np.array(np.random.RandomState(0).normal(size=(4, 3)).astype("float32"))
    y = mx.np.array(np.random.RandomState(1).normal(size=(4, 2)).astype("float32"))
    ref = _dense_net()
    _one_sgd_step(ref, x, y, Trainer(ref.collect_params(), "sgd", {"learning_rate": 0.1}), False)
    ref_grad = ref.weight.grad().asnumpy()
    amp.init("float16", target_precision_ops=[])  # math stays float32: only the scaling differs
    for unscale_first in (False, True):
        net = _dense_net()
        trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        amp.init_trainer(trainer)
        _one_sgd_step(net, x, y, trainer, True, unscale_first)
        if unscale_first:  # the gradients were unscaled in place
            np.testing.assert_allclose(net.weight.grad().asnumpy(), ref_grad, rtol=1e-6)
        else:
            np.testing.assert_allclose(net.weight.grad().asnumpy(), ref_grad * 2.0 ** 16, rtol=1e-6)
        np.testing.assert_allclose(net.weight.data().asnumpy(), ref.weight.data().asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(net.bias.data().asnumpy(), ref.bias.data().asnumpy(), rtol=1e-6)
        assert trainer.amp_loss_scale == 2.0 ** 16


def test_overflow_skips_update_and_halves_scale():
    amp.init("float16", target_precision_ops=[])
    net = _dense_net()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(trainer)
    before = net.weight.data().asnumpy().copy()
    x = mx.np.full((4, 3), 1e30)
    with autograd.record():
        loss = (net(x) ** 2).sum()  # 1e60: inf in float32, so the gradients overflow
        with amp.scale_loss(loss, trainer) as scaled:
            autograd.backward(scaled)
    trainer.step(4)
    np.testing.assert_array_equal(net.weight.data().asnumpy(), before)
    assert trainer.amp_loss_scale == 2.0 ** 15
    # a clean step afterwards updates again, with the halved scale
    _one_sgd_step(net, mx.np.ones((4, 3)), mx.np.zeros((4, 2)), trainer, True)
    assert not np.array_equal(net.weight.data().asnumpy(), before)
    # a list of losses is scaled item by item; a second trainer gets its own scaler
    other = Trainer(_dense_net().collect_params(), "sgd", {"learning_rate": 0.1})
    amp.init_trainer(other)
    assert other._amp_loss_scaler is not trainer._amp_loss_scaler
    with amp.scale_loss([mx.np.array(1.0), mx.np.array(2.0)], other) as scaled:
        assert [float(s) for s in scaled] == [2.0 ** 16, 2.0 ** 17]


def test_amp_training_reaches_float32_accuracy():
    xtr, ytr = images(240, 10)
    xte, yte = images(120, 11)

    def train(use_amp):
        net = small_cnn(seed=7)
        net.hybridize()
        trainer = Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
        if use_amp:
            amp.init_trainer(trainer)
        loss_fn = SoftmaxCrossEntropyLoss()
        for _ in range(4):
            for i in range(0, len(xtr), 24):
                x, y = mx.np.array(xtr[i:i + 24]), mx.np.array(ytr[i:i + 24])
                with autograd.record():
                    loss = loss_fn(net(x), y)
                    if use_amp:
                        with amp.scale_loss(loss, trainer) as scaled:
                            autograd.backward(scaled)
                if not use_amp:
                    loss.backward()
                trainer.step(len(x))
        pred = net(mx.np.array(xte)).asnumpy().astype("float32").argmax(1)
        return (pred == yte).mean(), net

    fp32_acc, _ = train(False)
    amp.init("bfloat16")
    amp_acc, amp_net = train(True)
    assert amp_net(mx.np.array(xte[:2])).dtype == BF16  # the last Dense ran in bfloat16
    assert fp32_acc > 0.8
    assert abs(amp_acc - fp32_acc) <= 0.03, (amp_acc, fp32_acc)


# ----------------------------------------------------------------------------- tables and bad input

def test_op_tables():
    for dtype in ("float16", "bfloat16"):
        tables = [amp.list_lp16_ops(dtype), amp.list_fp32_ops(dtype), amp.list_lp16_fp32_ops(dtype),
                  amp.list_widest_type_cast(dtype), amp.list_loss_output_functions(dtype),
                  [c[0] for c in amp.list_conditional_fp32_ops(dtype)]]
        for table in tables:
            assert all(name in OPS for name in table)
        assert {"Convolution", "FullyConnected"} <= set(amp.list_lp16_ops(dtype))
        assert {"softmax", "log_softmax", "LayerNorm", "sum", "exp"} <= set(amp.list_fp32_ops(dtype))
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params(amp.amp.bfloat16)["BatchNorm"][0] == ""
    assert amp.list_loss_output_functions("bfloat16") == []
    assert "RNN" in amp.list_lp16_ops(np.float16) and "RNN" in amp.list_fp32_ops("bfloat16")


@pytest.mark.parametrize("call, fragment", [
    (lambda: amp.init("float64"), "amp.init: target_dtype"),
    (lambda: amp.list_lp16_ops("int8"), "amp.list_lp16_ops"),
    (lambda: amp.init("bfloat16", fp32_ops=["no_such_op"]), "'no_such_op'"),
    (lambda: amp.init("bfloat16", conditional_fp32_ops=[("Activation", "act_type")]), "conditional_fp32_ops"),
    (lambda: amp.init("bfloat16", conditional_fp32_ops=[("Activation", "kind", ["x"])]), "no parameter 'kind'"),
    (lambda: amp.convert_symbol("not a symbol", "bfloat16"), "should be Symbol"),
    (lambda: amp.convert_hybrid_block(nn.Dense(2), target_dtype="int32"), "amp.convert_hybrid_block"),
    (lambda: amp.convert_hybrid_block(object(), target_dtype="bfloat16"), "should be a HybridBlock"),
    (lambda: amp.init_trainer(None), "amp.init()"),
])
def test_bad_input_raises_value_and_assertion_error(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, (AssertionError, MXNetError))
    assert fragment in str(info.value)


def test_bad_input_other_errors():
    with pytest.raises(MXNetError, match="hybridize"):
        amp.convert_hybrid_block(small_cnn(), target_dtype="bfloat16")  # never run: no graph
    with pytest.raises(TypeError, match="excluded_sym_names"):
        amp.convert_symbol(mx.sym.var("a"), "bfloat16", excluded_sym_names="a")
    with pytest.raises(MXNetError, match="init_trainer"):
        with amp.scale_loss(mx.np.ones(1), Trainer(_dense_net().collect_params(), "sgd")):
            pass
    amp.init("bfloat16")
    with pytest.raises(TypeError, match="only compatible with Gluon Trainer"):
        amp.init_trainer(mx.optimizer.SGD())
    with pytest.raises(TypeError, match="Gluon Trainer or an optimizer"):
        amp.unscale("trainer")


def test_programs_compiled_under_amp_are_dropped_with_it():
    """A recorded op sequence compiled while AMP's casts were installed must not be reused after
    they are removed (it made a later float32 * 1.5 come out float64)."""
    def recorded_step():
        x = mx.np.array([0.5, -0.2, 0.3], dtype="float32")
        x.attach_grad()
        with autograd.record():
            y = x * 1.5
            loss = (y * 65536.0).sum()
        loss.backward()
        return y, x.grad

    amp.init("float16", target_precision_ops=[])
    recorded_step()
    amp.amp._reset()
    y, grad = recorded_step()
    assert y.dtype == np.float32 and grad.dtype == np.float32
    np.testing.assert_allclose(grad.asnumpy(), np.full(3, 1.5 * 65536.0), rtol=1e-6)
