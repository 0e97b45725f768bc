"""mxjax on a GPU: the same programs give the same numbers on ``mx.gpu(0)`` as on the CPU (or
NumPy), and values stay where MXNet puts them.  Skipped where the process sees no GPU (CI);
run on a machine with one: ``python -m pytest tests/test_gpu.py``."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon, np

pytestmark = pytest.mark.skipif(mx.device.num_gpus() == 0, reason="needs a GPU")

# float32 matrix products and convolutions on a GPU may run in TF32 (XLA's default precision)
MATMUL = dict(rtol=2e-2, atol=2e-2)


def on_gpu(x):
    return x.device == mx.gpu(0) and {d.platform for d in x.to_jax().devices()} == {"gpu"}


def test_new_arrays_go_to_the_gpu_when_asked_and_to_the_cpu_by_default():
    assert np.ones((2,)).device == mx.cpu(0)
    assert on_gpu(np.ones((2, 3), device=mx.gpu(0)))
    assert on_gpu(mx.nd.array([1.0, 2.0], ctx=mx.gpu(0)))
    with mx.gpu(0):
        assert on_gpu(np.arange(4)) and on_gpu(np.random.uniform(size=(3,))) and on_gpu(mx.nd.zeros((2,)))
    free, total = mx.device.gpu_memory_info(0)
    assert 0 < free <= total


@pytest.mark.parametrize("bulk", [True, False])
def test_imperative_ops_on_the_gpu_match_numpy(bulk):
    values = onp.linspace(-2, 2, 60, dtype=onp.float32).reshape(6, 10)
    previous = mx.engine.set_imperative_bulk(bulk)
    try:
        x = np.array(values, device=mx.gpu(0))
        y = x
        for _ in range(10):
            y = np.tanh(y * 1.5 + 0.1) - y.mean(axis=0)
        expected = values
        for _ in range(10):
            expected = onp.tanh(expected * 1.5 + 0.1) - expected.mean(axis=0)
        assert on_gpu(y)
        onp.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    finally:
        mx.engine.set_imperative_bulk(previous["enabled"])


def test_copies_between_cpu_and_gpu_keep_values():
    values = onp.arange(12, dtype=onp.float32).reshape(3, 4)
    host = np.array(values)
    dev = host.as_in_context(mx.gpu(0))
    assert on_gpu(dev) and host.device == mx.cpu(0)
    back = dev.copyto(mx.cpu(0))
    assert back.device == mx.cpu(0)
    target = mx.nd.zeros((3, 4), ctx=mx.gpu(0))
    mx.nd.array(values).copyto(target)
    assert on_gpu(target)
    onp.testing.assert_array_equal(back.asnumpy(), values)
    onp.testing.assert_array_equal(target.asnumpy(), values)
    dev[1] = 7.0  # an in-place write on the GPU leaves the host copy alone
    assert on_gpu(dev) and dev.asnumpy()[1].tolist() == [7.0] * 4 and host.asnumpy()[1].tolist() == [4, 5, 6, 7]


def test_autograd_on_the_gpu_matches_the_analytic_gradient():
    values = onp.linspace(0.1, 2.0, 8, dtype=onp.float32)
    x = np.array(values, device=mx.gpu(0))
    x.attach_grad()
    with autograd.record():
        y = (np.sin(x) * x).sum()
    y.backward()
    assert on_gpu(x.grad)
    onp.testing.assert_allclose(x.grad.asnumpy(), onp.cos(values) * values + onp.sin(values), rtol=1e-5)


def _mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(32, activation="relu", in_units=20), gluon.nn.Dense(4, in_units=32))
    return net


def _train(net, device, x, y, steps=3):
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    data, label = np.array(x, device=device), np.array(y, device=device)
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(len(x))
        losses.append(float(loss.mean()))
    return losses


@pytest.mark.parametrize("hybridize", [False, True])
def test_training_on_the_gpu_matches_the_cpu(hybridize):
    rng = onp.random.default_rng(0)
    x = rng.standard_normal((16, 20)).astype(onp.float32)
    y = rng.integers(0, 4, 16).astype(onp.float32)
    cpu_net, gpu_net = _mlp(), _mlp()
    cpu_net.initialize(mx.init.Xavier(), device=mx.cpu(0))
    gpu_net.initialize(mx.init.Xavier(), device=mx.gpu(0))
    pairs = list(zip(sorted(cpu_net.collect_params().items()), sorted(gpu_net.collect_params().items())))
    for (_, p), (_, q) in pairs:  # both start from the CPU net's weights
        q.set_data(p.data().as_in_context(mx.gpu(0)))
    if hybridize:
        cpu_net.hybridize()
        gpu_net.hybridize()
    cpu_losses = _train(cpu_net, mx.cpu(0), x, y)
    gpu_losses = _train(gpu_net, mx.gpu(0), x, y)
    onp.testing.assert_allclose(gpu_losses, cpu_losses, **MATMUL)
    for (_, p), (_, q) in pairs:
        assert on_gpu(q.data()) and on_gpu(q.grad())
        onp.testing.assert_allclose(q.data().asnumpy(), p.data().asnumpy(), **MATMUL)


def test_convolution_and_batchnorm_on_the_gpu_match_the_cpu():
    rng = onp.random.default_rng(1)
    x = rng.standard_normal((2, 3, 12, 12)).astype(onp.float32)
    outputs, grads = {}, {}
    for device in (mx.cpu(0), mx.gpu(0)):
        mx.random.seed(7)
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.Conv2D(8, 3, padding=1, in_channels=3), gluon.nn.BatchNorm(in_channels=8),
                gluon.nn.Activation("relu"), gluon.nn.MaxPool2D(2))
        net.initialize(mx.init.Xavier(), device=mx.cpu(0))
        net.reset_device(device)
        net.hybridize()
        data = np.array(x, device=device)
        with autograd.record():
            out = net(data)
            loss = (out * out).sum()
        loss.backward()
        assert out.device == device
        outputs[device] = out.asnumpy()
        grads[device] = net[0].weight.grad(device).asnumpy()
    onp.testing.assert_allclose(outputs[mx.gpu(0)], outputs[mx.cpu(0)], **MATMUL)
    onp.testing.assert_allclose(grads[mx.gpu(0)], grads[mx.cpu(0)], rtol=5e-2, atol=5e-2)


def test_parameters_saved_from_the_gpu_load_on_the_cpu(tmp_path):
    net = _mlp()
    net.initialize(mx.init.Xavier(), device=mx.gpu(0))
    x = np.array(onp.ones((2, 20), onp.float32), device=mx.gpu(0))
    expected = net(x).asnumpy()
    net.save_parameters(str(tmp_path / "mlp.params"))
    loaded = _mlp()
    loaded.load_parameters(str(tmp_path / "mlp.params"), device=mx.cpu(0))
    assert loaded[0].weight.data().device == mx.cpu(0)
    onp.testing.assert_allclose(loaded(np.ones((2, 20))).asnumpy(), expected, **MATMUL)


def test_split_and_load_and_kvstore_on_the_gpu():
    batch = np.array(onp.arange(8, dtype=onp.float32).reshape(4, 2))
    parts = gluon.utils.split_and_load(batch, [mx.gpu(0)])
    assert len(parts) == 1 and on_gpu(parts[0])
    onp.testing.assert_array_equal(parts[0].asnumpy(), batch.asnumpy())
    kv = mx.kv.create("device")
    kv.init("w", mx.nd.zeros((2,), ctx=mx.gpu(0)))
    kv.push("w", [mx.nd.ones((2,), ctx=mx.gpu(0)), mx.nd.ones((2,), ctx=mx.cpu(0)) * 2])
    out = mx.nd.zeros((2,), ctx=mx.gpu(0))
    kv.pull("w", out=out)
    assert on_gpu(out) and out.asnumpy().tolist() == [3.0, 3.0]


def test_export_from_the_gpu_imports_on_the_cpu(tmp_path):
    net = _mlp()
    net.initialize(mx.init.Xavier(), device=mx.gpu(0))
    net.hybridize()
    x = onp.random.default_rng(2).standard_normal((3, 20)).astype(onp.float32)
    expected = net(np.array(x, device=mx.gpu(0))).asnumpy()
    net.export(str(tmp_path / "mlp"))
    imported = gluon.SymbolBlock.imports(str(tmp_path / "mlp-symbol.json"), ["data"],
                                         str(tmp_path / "mlp-0000.params"), device=mx.cpu(0))
    onp.testing.assert_allclose(imported(np.array(x)).asnumpy(), expected, **MATMUL)


def test_lstm_on_the_gpu_matches_the_cpu():
    x = onp.random.default_rng(3).standard_normal((5, 2, 8)).astype(onp.float32)  # (time, batch, features)
    layer = gluon.rnn.LSTM(16, num_layers=2, input_size=8)
    layer.initialize(device=mx.cpu(0))
    results = {}
    for device in (mx.cpu(0), mx.gpu(0)):
        layer.reset_device(device)
        data = np.array(x, device=device)
        data.attach_grad()
        with autograd.record():
            out = layer(data)
        out.backward()
        assert out.device == device and data.grad.device == device
        results[device] = (out.asnumpy(), data.grad.asnumpy())
    for a, b in zip(results[mx.gpu(0)], results[mx.cpu(0)]):
        onp.testing.assert_allclose(a, b, **MATMUL)


def test_model_zoo_network_on_the_gpu_matches_the_cpu():
    net = gluon.model_zoo.vision.get_model("resnet18_v1", classes=10)
    net.initialize(mx.init.Xavier(), device=mx.cpu(0))
    net.hybridize()
    x = onp.random.default_rng(4).standard_normal((2, 3, 32, 32)).astype(onp.float32)
    expected = net(np.array(x)).asnumpy()
    net.reset_device(mx.gpu(0))
    out = net(np.array(x, device=mx.gpu(0)))
    assert on_gpu(out)
    onp.testing.assert_allclose(out.asnumpy(), expected, rtol=5e-2, atol=5e-2)


def test_dynamic_shape_ops_on_the_gpu():
    values = onp.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], onp.float32)
    x = np.array(values, device=mx.gpu(0))
    positive = x[x > 0]
    assert on_gpu(positive) and positive.asnumpy().tolist() == [1.0, 3.0, 5.0]
    rows, cols = np.nonzero(x < 0)
    assert rows.asnumpy().tolist() == [0, 1, 1] and cols.asnumpy().tolist() == [1, 0, 2]
    assert np.unique(np.array([3, 1, 3, 2], device=mx.gpu(0))).asnumpy().tolist() == [1, 2, 3]


def test_a_call_mixing_devices_names_them(tmp_path):
    # an imported model whose parameters are on the CPU, called with an input on the GPU
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, in_channels=1), gluon.nn.Dense(2))
    net.initialize(device=mx.cpu(0))
    net.hybridize()
    net(np.ones((1, 1, 8, 8)))
    net.export(str(tmp_path / "net"))
    imported = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"], str(tmp_path / "net-0000.params"))
    try:
        out = imported(np.ones((1, 1, 8, 8), device=mx.gpu(0)))
    except mx.MXNetError as err:  # XLA refused: the error names where each is
        assert "must be on one device, got input 0 on gpu(0); parameter" in str(err) and "on cpu(0)" in str(err)
    else:  # XLA moved the input itself: the values are still right
        onp.testing.assert_allclose(out.asnumpy(), net(np.ones((1, 1, 8, 8))).asnumpy(), **MATMUL)


def test_load_parameters_onto_the_gpu(tmp_path):
    net = _mlp()
    net.initialize(device=mx.cpu(0))
    net.save_parameters(str(tmp_path / "mlp.params"))
    loaded = _mlp()
    loaded.load_parameters(str(tmp_path / "mlp.params"), device=mx.gpu(0))
    assert all(on_gpu(p.data()) for p in loaded.collect_params().values())
    x = onp.ones((2, 20), onp.float32)
    onp.testing.assert_allclose(loaded(np.array(x, device=mx.gpu(0))).asnumpy(), net(np.array(x)).asnumpy(),
                                **MATMUL)
