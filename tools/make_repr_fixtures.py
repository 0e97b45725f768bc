"""Write tests/fixtures/gluon_repr/reprs.json: what ``repr`` gives for Gluon layers in MXNet 2.0.

Run with the reference MXNet 2.0 Python (``$REF_DIR/mxnet20/bin/python tools/make_repr_fixtures.py``).
Each case is the Python source of one block (``nn``, ``rnn`` and ``gluon`` bound); the file keeps
the source next to the text, so the test builds the same block in mxjax and compares.

Left out on purpose, where MXNet 2.0.0b1 prints what its layer does not hold: a convolution given
``in_channels`` (it prints ``-1 ->`` all the same; 1.9.1 and mxjax print the number), a transposed
one's ``output_padding`` (never printed: the attribute its repr reads is not set), and
SyncBatchNorm (its repr includes a random key).
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
from mxnet import gluon
from mxnet.gluon import nn, rnn

CASES = [
    "nn.Dense(3, in_units=2)", "nn.Dense(3, activation='relu')", "nn.Dense(3, use_bias=False, flatten=False)",
    "nn.Dropout(0.5)", "nn.Dropout(0.2, axes=(1,))",
    "nn.BatchNorm()", "nn.BatchNorm(in_channels=4, momentum=0.8)",
    "nn.BatchNorm(scale=False, use_global_stats=True, epsilon=1e-3)", "nn.BatchNormReLU()",
    "nn.LayerNorm()", "nn.LayerNorm(center=False, in_channels=5)",
    "nn.InstanceNorm()", "nn.InstanceNorm(in_channels=3)",
    "nn.GroupNorm()", "nn.GroupNorm(num_groups=2, in_channels=4)", "nn.Embedding(10, 4)",
    "nn.Flatten()", "nn.Activation('tanh')", "nn.LeakyReLU(0.1)",
    "nn.PReLU()", "nn.ELU()", "nn.SELU()", "nn.GELU()", "nn.Swish()", "nn.SiLU()", "nn.Identity()",
    "nn.Conv2D(8, 3)", "nn.Conv2D(8, (3, 3), strides=2, padding=1, activation='relu')",
    "nn.Conv2D(8, 3, use_bias=False, groups=2, dilation=2, padding=(1, 2))", "nn.Conv1D(4, 3, dilation=2)",
    "nn.Conv3D(2, 1)", "nn.Conv2DTranspose(4, 3)", "nn.Conv1DTranspose(8, 3, strides=2)",
    "nn.MaxPool2D()", "nn.AvgPool2D(3, 2, 1)", "nn.MaxPool2D(3, 1, 1, ceil_mode=True, layout='NHWC')",
    "nn.AvgPool1D(count_include_pad=False)", "nn.MaxPool1D(2)", "nn.AvgPool3D()",
    "nn.GlobalAvgPool2D()", "nn.GlobalMaxPool1D()", "nn.GlobalAvgPool3D()",
    "nn.ReflectionPad2D(2)", "nn.Lambda('tanh')", "nn.HybridLambda('tanh')", "nn.HybridLambda(lambda x: x)",
    "nn.Concatenate()", "nn.PixelShuffle2D(2)",
    "rnn.LSTM(10)", "rnn.GRU(5, num_layers=2, bidirectional=True)", "rnn.RNN(4, activation='tanh', input_size=3)",
    "rnn.LSTMCell(6)", "rnn.GRUCell(3, input_size=2)", "rnn.RNNCell(2)",
    "gluon.loss.L2Loss()", "gluon.loss.SoftmaxCrossEntropyLoss()", "gluon.loss.L1Loss(weight=2.0)",
    "\n".join(["net = nn.HybridSequential()",
               "net.add(nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(), nn.Activation('relu'),",
               "        nn.MaxPool2D(), nn.Flatten(), nn.Dense(16, activation='relu'), nn.Dropout(0.5), nn.Dense(10))",
               "net"]),
]


def build(source: str, scope: dict):
    """The block a case's source makes: its last line is an expression."""
    *statements, last = source.split("\n")
    exec("\n".join(statements), scope)  # noqa: S102  (our own case source)
    return eval(last, scope)  # noqa: S307


def main() -> None:
    found = {source: repr(build(source, {"nn": nn, "rnn": rnn, "gluon": gluon})) for source in CASES}
    path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gluon_repr" / "reprs.json"
    path.write_text(json.dumps({"mxnet": mx.__version__, "reprs": found}, indent=1) + "\n")
    print(f"wrote {len(found)} cases to {path}")


if __name__ == "__main__":
    main()
