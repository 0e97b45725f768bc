"""Write tests/fixtures/conv_rnn/: MXNet 2.0's convolutional recurrent cells, run by real MXNet.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_conv_rnn_fixtures.py``).  Each case
``NAME`` becomes ``NAME.npz`` holding ``config`` (JSON: class, constructor keywords, ``repr``,
``state_info(N)`` shapes, parameter shapes), ``param:<name>`` (the weights used), ``x`` (an 'NTC'
sequence of T steps), ``state_i`` (begin states), ``out`` / ``out_state_i`` (``unroll`` with
``merge_outputs=True``), ``head`` and the gradients of ``sum(out * head)`` w.r.t. ``x``
(``grad_x``) and each parameter (``grad:<name>``).
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "conv_rnn"
RNG = np.random.default_rng(19)
T, N, HIDDEN = 3, 2, 3
rnn = mx.gluon.rnn

# name: (class, input_shape, kwargs).  Channel-first layouts only: MXNet's CPU convolution has no
# channel-last kernel (2.0.0b1 rejects 'NWC' outright and fails on 'NHWC'/'NDHWC' when computing).
CASES = {
    "rnn1d": ("Conv1DRNNCell", (2, 7), dict(i2h_kernel=3, h2h_kernel=3)),
    "rnn2d": ("Conv2DRNNCell", (2, 5, 6), dict(i2h_kernel=(3, 2), h2h_kernel=(3, 1), i2h_pad=(1, 0))),
    "rnn3d": ("Conv3DRNNCell", (2, 4, 4, 3), dict(i2h_kernel=2, h2h_kernel=3, activation="relu")),
    "lstm1d": ("Conv1DLSTMCell", (2, 8), dict(i2h_kernel=3, h2h_kernel=5, i2h_dilate=2, h2h_dilate=1)),
    "lstm2d": ("Conv2DLSTMCell", (2, 5, 5), dict(i2h_kernel=3, h2h_kernel=3, i2h_pad=1, h2h_dilate=2)),
    "lstm3d": ("Conv3DLSTMCell", (2, 3, 4, 4), dict(i2h_kernel=(1, 3, 3), h2h_kernel=3)),
    "gru1d": ("Conv1DGRUCell", (2, 7), dict(i2h_kernel=3, h2h_kernel=3, activation="softsign")),
    "gru2d": ("Conv2DGRUCell", (2, 5, 6), dict(i2h_kernel=3, h2h_kernel=(1, 3), i2h_dilate=(1, 2))),
    "gru3d": ("Conv3DGRUCell", (2, 4, 3, 4), dict(i2h_kernel=2, h2h_kernel=3, i2h_pad=(1, 0, 0))),
}


def rand(*shape, scale=1.0):
    return (RNG.uniform(-1, 1, shape) * scale).astype("float32")


def save_case(name, cls_name, input_shape, kwargs):
    cell = getattr(rnn, cls_name)(input_shape, HIDDEN, **kwargs)
    cell.initialize()
    params = cell.collect_params()
    for p in params.values():
        p.set_data(mx.np.array(rand(*p.shape, scale=0.5)))
    x = mx.np.array(rand(N, T, *input_shape))
    states = [mx.np.array(rand(*info["shape"], scale=0.5)) for info in cell.state_info(N)]
    x.attach_grad()
    with mx.autograd.record():
        out, out_states = cell.unroll(T, x, begin_state=states, layout="NTC", merge_outputs=True)
        head = mx.np.array(rand(*out.shape))
        loss = (out * head).sum()
    loss.backward()
    config = {"cls": cls_name, "input_shape": list(input_shape), "hidden_channels": HIDDEN, "kwargs": kwargs,
              "repr": repr(cell), "state_shapes": [list(i["shape"]) for i in cell.state_info(N)],
              "layouts": [i["__layout__"] for i in cell.state_info(N)],
              "param_shapes": {k: list(p.shape) for k, p in params.items()}}
    record = {"config": np.array(json.dumps(config)), "x": x.asnumpy(), "out": out.asnumpy(),
              "head": head.asnumpy(), "grad_x": x.grad.asnumpy()}
    for i, (s, o) in enumerate(zip(states, out_states)):
        record[f"state_{i}"] = s.asnumpy()
        record[f"out_state_{i}"] = o.asnumpy()
    for k, p in params.items():
        record[f"param:{k}"] = p.data().asnumpy()
        record[f"grad:{k}"] = p.grad().asnumpy()
    np.savez_compressed(OUT / f"{name}.npz", **record)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (cls_name, input_shape, kwargs) in CASES.items():
        save_case(name, cls_name, input_shape, kwargs)
        print("wrote", name)


if __name__ == "__main__":
    main()
