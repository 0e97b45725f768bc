"""Write tests/fixtures/onnx/: a small CNN saved by real MXNet 2.0, its ONNX export by
MXNet's own ``mx.onnx.export_model``, and an input with MXNet's output; and a small
NumPy-mode Gluon block exported by MXNet 2.0 (its JSON holds the _npi_/_npx_ op names
MXNet 2.0 writes) with its inputs and outputs.

Run with the MXNet 2.0 interpreter that has ``onnx`` installed:
    python tools/make_onnx_fixtures.py
tests/test_onnx.py exports the same files with mxjax and compares op types and values.
"""
from pathlib import Path

import mxnet as mx
import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "onnx"
SHAPE = (2, 2, 6, 6)


def small_cnn():
    data = mx.sym.var("data")
    x = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv0")
    x = mx.sym.BatchNorm(x, fix_gamma=False, name="bn0")
    x = mx.sym.Activation(x, act_type="relu", name="relu0")
    x = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool0")
    x = mx.sym.Flatten(x, name="flat0")
    x = mx.sym.FullyConnected(x, num_hidden=3, name="fc0")
    return mx.sym.softmax(x, name="sm0")


def np_block():
    from mxnet import np as mnp
    from mxnet import npx
    from mxnet.gluon import nn
    npx.set_np()

    class Mixed(nn.HybridBlock):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(4, 3, padding=1, in_channels=2)
            self.bn = nn.BatchNorm(in_channels=4)
            self.dense = nn.Dense(3, in_units=4)
            self.emb = nn.Embedding(5, 2)

        def forward(self, x, idx):
            y = npx.pooling(npx.relu(self.bn(self.conv(x))), kernel=(2, 2), stride=(2, 2), pool_type="avg")
            z = mnp.mean(mnp.concatenate([y, y * 0.5 + 1.0], axis=1), axis=1)
            z = mnp.transpose(mnp.expand_dims(npx.reshape(z, (-2, -1)), 0), (1, 0, 2))
            out = self.dense(mnp.squeeze(z, axis=1))
            out = npx.softmax(mnp.maximum(out, -0.5) - mnp.tanh(out), axis=-1)
            e = self.emb(idx).sum(axis=1)
            return out / 2 + mnp.exp(-mnp.abs(e)).sum(axis=-1, keepdims=True), npx.sigmoid(out)

    return Mixed()


def write_np_block(rng):
    net = np_block()
    net.initialize(mx.init.Uniform(0.5))
    for name, param in net.collect_params().items():
        if name.endswith(("running_mean", "running_var")):
            param.set_data(mx.np.array(rng.uniform(0.5, 1.5, param.shape).astype("float32")))
    net.hybridize()
    x = rng.uniform(-1, 1, (2, 2, 4, 4)).astype("float32")
    idx = np.array([[0, 4], [2, 3]], dtype="float32")
    out, aux = net(mx.np.array(x), mx.np.array(idx))
    net.export(str(OUT / "np_block"))
    np.savez(OUT / "np_block_io.npz", x=x, idx=idx, out=out.asnumpy(), aux=aux.asnumpy())
    mx.npx.reset_np()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(7)
    net = small_cnn()
    arg_shapes, _, aux_shapes = net.infer_shape(data=SHAPE)
    arg = {n: mx.nd.array(rng.uniform(-1, 1, s).astype("float32"))
           for n, s in zip(net.list_arguments(), arg_shapes) if n != "data"}
    aux = {n: mx.nd.array(rng.uniform(0.5, 1.5, s).astype("float32"))
           for n, s in zip(net.list_auxiliary_states(), aux_shapes)}
    mx.model.save_checkpoint(str(OUT / "small_cnn"), 0, net, arg, aux)
    x = rng.uniform(-1, 1, SHAPE).astype("float32")
    exe = net._bind(mx.cpu(), {"data": mx.nd.array(x), **arg}, aux_states=aux, grad_req="null")
    y = exe.forward(is_train=False)[0].asnumpy()
    np.savez(OUT / "small_cnn_io.npz", x=x, y=y)
    mx.onnx.export_model(net, {**arg, **aux}, [SHAPE], np.float32, str(OUT / "small_cnn_mxnet.onnx"))
    write_np_block(rng)


if __name__ == "__main__":
    main()
