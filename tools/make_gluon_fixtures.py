"""Writes tests/fixtures/gluon_api: what real MXNet gives for Gluon's 1.x idiom and 2.0 Block API.

Stages, run from the repository root (``$REF_DIR`` is where ``shared/tools/reference-venvs.sh``
built the reference virtualenvs):

    $REF_DIR/mxnet191/bin/python tools/make_gluon_fixtures.py mxnet191   # a 1.x hybrid_forward block
    python tools/make_gluon_fixtures.py export                          # mxjax exports that block
    $REF_DIR/mxnet191/bin/python tools/make_gluon_fixtures.py check191   # MXNet 1.9.1 runs the export
    $REF_DIR/mxnet20/bin/python tools/make_gluon_fixtures.py mxnet20     # Block.save, new layers, SDMLLoss

The tests (tests/gluon/test_hybrid_forward.py, tests/gluon/test_block_api.py) rebuild the
same blocks in mxjax, load the parameters MXNet wrote and compare the outputs.
"""
import json
import os
import pathlib
import shutil
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "gluon_api"


def legacy_classes(mx):
    """A MXNet 1.x-style model (``hybrid_forward(F, ...)``, ``self.params.get``): the same source
    runs in MXNet 1.9.1 and in mxjax."""
    gluon, nn = mx.gluon, mx.gluon.nn

    class Scale(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.alpha = self.params.get("alpha", shape=(1,), init=mx.init.Constant(0.5))

        def hybrid_forward(self, F, x, alpha):
            return F.broadcast_mul(x, alpha)

    class Legacy(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.weight = self.params.get("weight", shape=(6, 4))
                self.bias = self.params.get("bias", shape=(6,), init="zeros")
                self.gamma = self.params.get("gamma", shape=(6,), init="ones")
                self.beta = self.params.get("beta", shape=(6,), init="zeros")
                self.running_mean = self.params.get("running_mean", shape=(6,), init="zeros",
                                                    grad_req="null")
                self.running_var = self.params.get("running_var", shape=(6,), init="ones", grad_req="null")
                self.scale = Scale()
                self.out = nn.Dense(3, in_units=6)

        def hybrid_forward(self, F, x, weight, bias, gamma, beta, running_mean, running_var):
            h = F.FullyConnected(x, weight, bias, num_hidden=6)
            h = F.BatchNorm(h, gamma, beta, running_mean, running_var, fix_gamma=False, momentum=0.8)
            h = F.Activation(h, act_type="tanh")
            h = F.broadcast_add(h, F.reshape(bias, shape=(1, -1)))
            h = F.relu(h) + F.sigmoid(h) * 0.5
            pooled = h.reshape((0, 2, 3)).sum(axis=1)
            return self.out(self.scale(h)), F.concat(pooled, F.exp(-pooled), dim=1)

    return Legacy


def legacy_input():
    return np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32)


def mxnet191() -> None:
    import mxnet as mx
    mx.random.seed(11)
    net = legacy_classes(mx)()
    net.initialize(mx.init.Normal(0.5))
    net.running_mean.set_data(mx.nd.array([0.1, -0.2, 0.3, 0.0, 0.5, -0.1]))
    net.running_var.set_data(mx.nd.array([1.5, 0.7, 1.0, 2.0, 0.9, 1.1]))
    net.save_parameters(str(OUT / "legacy.params"))
    x = mx.nd.array(legacy_input())
    arrays = {"x": x.asnumpy()}
    out, pooled = net(x)
    arrays.update(imperative_out=out.asnumpy(), imperative_pooled=pooled.asnumpy())
    net.hybridize()
    out, pooled = net(x)
    arrays.update(hybrid_out=out.asnumpy(), hybrid_pooled=pooled.asnumpy())
    with mx.autograd.record():
        out, pooled = net(x)
        total = out.sum() + pooled.sum()
    total.backward()
    arrays.update(train_out=out.asnumpy(), train_pooled=pooled.asnumpy(),
                  weight_grad=net.weight.grad().asnumpy(), out_weight_grad=net.out.weight.grad().asnumpy(),
                  alpha_grad=net.scale.alpha.grad().asnumpy(),
                  running_mean=net.running_mean.data().asnumpy(), running_var=net.running_var.data().asnumpy())
    np.savez(OUT / "legacy_mxnet191.npz", **arrays)


def export() -> None:
    import mxjax as mx
    net = legacy_classes(mx)()
    net.load_parameters(str(OUT / "legacy.params"))
    net.hybridize()
    net(mx.nd.array(legacy_input()))
    net.export(str(OUT / "legacy"))


def check191() -> None:
    import mxnet as mx
    with mx.np_shape(True):  # mxjax saves numpy-shape arrays, as MXNet 2 does
        block = mx.gluon.SymbolBlock.imports(str(OUT / "legacy-symbol.json"), ["data"],
                                             str(OUT / "legacy-0000.params"))
        out, pooled = block(mx.nd.array(legacy_input()))
    np.savez(OUT / "legacy_export_mxnet191.npz", out=out.asnumpy(), pooled=pooled.asnumpy())
    _record_version("mxnet191", mx.__version__)


def saved_net(mx):
    """The model of the Block.save/load fixture."""
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3, activation="relu"), nn.Dense(2, in_units=4))
    return net


def mxnet20() -> None:
    import mxnet as mx
    from mxnet.gluon import loss, nn
    mx.random.seed(5)
    rng = np.random.default_rng(5)
    arrays = {}
    net = saved_net(mx)
    net.initialize(mx.init.Normal(1.0))
    x = rng.normal(size=(2, 3)).astype(np.float32)
    net.hybridize()
    arrays.update(save_x=x, save_out=net(mx.np.array(x)).asnumpy())
    cwd = os.getcwd()
    os.chdir(OUT)  # 2.0.0b1's save writes its parameters to MyModel-model.params in the working directory
    try:
        net.save("saved")
        shutil.move("MyModel-model.params", "saved-model.params")
    finally:
        os.chdir(cwd)
    seen = []
    net.register_op_hook(lambda name, op, array: seen.append([name, op, list(array.shape)]), monitor_all=True)
    net(mx.np.array(x))
    (OUT / "op_hook_mxnet20.json").write_text(json.dumps(seen) + "\n")

    data = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    bnr = nn.BatchNormReLU(in_channels=3)
    bnr.initialize()
    bnr.running_mean.set_data(mx.np.array([0.2, -0.3, 0.1]))
    bnr.running_var.set_data(mx.np.array([0.5, 2.0, 1.0]))
    bnr.gamma.set_data(mx.np.array([1.5, 0.5, -1.0]))
    arrays.update(bnr_x=data, bnr_predict=bnr(mx.np.array(data)).asnumpy())
    with mx.autograd.record():
        arrays.update(bnr_train=bnr(mx.np.array(data)).asnumpy())
    arrays.update(bnr_running_mean=bnr.running_mean.data().asnumpy(),
                  bnr_running_var=bnr.running_var.data().asnumpy())
    arrays.update(pad_out=nn.ReflectionPad2D(2)(mx.np.array(data)).asnumpy())
    x1 = rng.normal(size=(4, 6)).astype(np.float32)
    x2 = (x1 + 0.3 * rng.normal(size=(4, 6))).astype(np.float32)
    arrays.update(sdml_x1=x1, sdml_x2=x2, sdml=loss.SDMLLoss()(mx.np.array(x1), mx.np.array(x2)).asnumpy(),
                  sdml_smooth=loss.SDMLLoss(smoothing_parameter=0.1, weight=2.0)(
                      mx.np.array(x1), mx.np.array(x2)).asnumpy())
    np.savez(OUT / "block_api_mxnet20.npz", **arrays)
    _record_version("mxnet20", mx.__version__)


def _record_version(stage: str, version: str) -> None:
    path = OUT / "mxnet_versions.json"
    versions = json.loads(path.read_text()) if path.exists() else {}
    versions[stage] = version
    path.write_text(json.dumps(versions, sort_keys=True) + "\n")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    {"mxnet191": mxnet191, "export": export, "check191": check191, "mxnet20": mxnet20}[sys.argv[1]]()
