"""Writes tests/fixtures/export_for_mxnet: a small CNN exported by mxjax, and what real MXNet gives for it.

Two stages, run from the repository root:

    python tools/make_export_fixture.py export                      # mxjax: the model files and the input
    $REF_DIR/mxnet191/bin/python tools/make_export_fixture.py run   # MXNet 1.9.1 loads them: its outputs

``$REF_DIR`` is where ``shared/tools/reference-venvs.sh`` built the virtualenvs.  The
test (tests/gluon/test_export_mxnet.py) checks that mxjax still exports what MXNet
accepted, and that mxjax reads the files back to MXNet's numbers.
"""
import json
import pathlib
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "export_for_mxnet"


def build():
    """(mxjax) The model, hybridized and run once, and its input."""
    import mxjax as mx
    from mxjax.gluon import nn
    mx.random.seed(7)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, activation="relu"), nn.BatchNorm(), nn.MaxPool2D(2), nn.Flatten(),
            nn.Dropout(0.5), nn.Dense(8, activation="tanh"), nn.LayerNorm(), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x = np.random.default_rng(7).normal(size=(2, 1, 8, 8)).astype(np.float32)
    with mx.autograd.record():  # a training pass, so the running statistics are not the initial ones
        net(mx.np.array(x))
    net.hybridize()
    net(mx.np.array(x))
    return net, x


def export() -> None:
    net, x = build()
    net.export(str(OUT / "model"))
    np.save(OUT / "input.npy", x)


def run() -> None:
    import mxnet as mx
    x = mx.nd.array(np.load(OUT / "input.npy"))
    with mx.np_shape(True):  # mxjax saves numpy-shape arrays, as MXNet 2 does
        block = mx.gluon.SymbolBlock.imports(str(OUT / "model-symbol.json"), ["data"],
                                             str(OUT / "model-0000.params"))
        out = block(x).asnumpy()
    np.save(OUT / "mxnet_output.npy", out)
    (OUT / "mxnet_version.json").write_text(json.dumps({"mxnet": mx.__version__}) + "\n")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    {"export": export, "run": run}[sys.argv[1]]()
