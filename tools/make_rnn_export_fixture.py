"""Write tests/fixtures/rnn_export/: a bidirectional 2-layer LSTM (and a GRU) exported by MXNet 1.9.1's
Gluon (symbol JSON with ``_rnn_param_concat`` and ``RNN`` nodes, and its .params), with an input and
MXNet's output.  Run inside the MXNet 1.9.1 reference virtualenv:
``python tools/make_rnn_export_fixture.py``."""
from __future__ import annotations

import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rnn_export"


class Net(mx.gluon.HybridBlock):
    def __init__(self, layer, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.rnn = layer
            self.out = mx.gluon.nn.Dense(3, flatten=False)

    def hybrid_forward(self, F, x):
        return self.out(self.rnn(x))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (5, 2, 4)).astype("float32")  # TNC
    for name, layer in (("bilstm", mx.gluon.rnn.LSTM(6, num_layers=2, bidirectional=True, input_size=4)),
                        ("gru", mx.gluon.rnn.GRU(5, num_layers=1, input_size=4))):
        mx.random.seed(3)
        net = Net(layer)
        net.initialize(mx.init.Uniform(0.3))
        net.hybridize()
        y = net(mx.nd.array(x))
        net.export(str(OUT / name))
        np.savez(OUT / f"{name}_io.npz", x=x, y=y.asnumpy())


if __name__ == "__main__":
    main()
