"""Write tests/fixtures/rnn/*.npz: MXNet 2.0's fused ``RNN`` op and ``mx.init.RNNFused``.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_rnn_fixtures.py``).  Each op case
stores its inputs (``data``, ``parameters``, ``state``, ``state_cell``), parameters (``params``, JSON),
outputs (``out_0``...), the heads (``head_0``...) and the gradients of ``sum(out_i * head_i)`` over
all outputs w.r.t. each input (``grad_data``...).  MXNet's CPU op has no ``use_sequence_length``
(cuDNN only), so those cases are tested against mxjax itself.  ``init_*`` cases store a parameter
vector filled by ``RNNFused``.
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "rnn"
RNG = np.random.default_rng(31)
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def rand(*shape, scale=1.0):
    return (RNG.uniform(-1, 1, shape) * scale).astype("float32")


def param_size(mode, layers, dirs, size_in, hidden, proj=None):
    gh, out, total = GATES[mode] * hidden, proj or hidden, 0
    for layer in range(layers):
        cols = size_in if layer == 0 else out * dirs
        total += dirs * (gh * (cols + out + 2) + (proj * hidden if proj else 0))
    return total


def save_op(name, mode, layers=1, bidirectional=False, state_outputs=True, steps=4, batch=3, size_in=5,
            hidden=4, grad=True, **extra):
    dirs = 2 if bidirectional else 1
    proj = extra.get("projection_size")
    inputs = {"data": rand(steps, batch, size_in),
              "parameters": rand(param_size(mode, layers, dirs, size_in, hidden, proj), scale=0.6),
              "state": rand(layers * dirs, batch, proj or hidden, scale=0.5)}
    if mode == "lstm":
        inputs["state_cell"] = rand(layers * dirs, batch, hidden, scale=0.5)
    params = {"mode": mode, "state_size": hidden, "num_layers": layers, "bidirectional": bidirectional,
              "state_outputs": state_outputs, **extra}
    arrays = {k: mx.nd.array(v) for k, v in inputs.items()}
    record = {"params": np.array(json.dumps(params)), **inputs}
    if not grad:  # values only (MXNet's CPU projected LSTM runs in inference mode only)
        outs = mx.nd.RNN(**arrays, **params)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        record.update({f"out_{i}": o.asnumpy() for i, o in enumerate(outs)})
        np.savez_compressed(OUT / f"{name}.npz", **record)
        return
    for a in arrays.values():
        a.attach_grad()
    with mx.autograd.record():
        outs = mx.nd.RNN(**arrays, **params)
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        heads = [mx.nd.array(rand(*o.shape)) for o in outs]
        loss = sum((o * h).sum() for o, h in zip(outs, heads))
    loss.backward()
    record.update({f"out_{i}": o.asnumpy() for i, o in enumerate(outs)})
    record.update({f"head_{i}": h.asnumpy() for i, h in enumerate(heads)})
    record.update({f"grad_{k}": a.grad.asnumpy() for k, a in arrays.items()})
    np.savez_compressed(OUT / f"{name}.npz", **record)


def save_init(name, mode, layers, hidden, bidirectional=False, projection_size=None, size_in=3, default=None,
              **inits):
    """Fill a parameter vector as Gluon does: ``default`` set through ``set_initializer`` (a Parameter's
    own initialize path), or the sub-initializers called directly."""
    dirs = 2 if bidirectional else 1
    init = mx.init.RNNFused(mode, layers, hidden, bidirectional, projection_size, **inits)
    if default is not None:
        init.set_initializer(default)
    arr = mx.nd.zeros((param_size(mode, layers, dirs, size_in, hidden, projection_size),))
    mx.random.seed(0)
    init(mx.init.InitDesc("rnn_param", {"__init__": init}), arr)
    config = {"mode": mode, "num_layers": layers, "state_size": hidden, "bidirectional": bidirectional,
              "projection_size": projection_size, "size_in": size_in,
              "default": default.dumps() if default is not None else None,
              "inits": {k: (v.dumps() if isinstance(v, mx.init.Initializer) else v) for k, v in inits.items()}}
    np.savez_compressed(OUT / f"{name}.npz", params=np.array(json.dumps(config)), value=arr.asnumpy())


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for mode in GATES:  # tests compile each case: gradients of two layers both ways, values of the rest
        save_op(f"{mode}_l1_uni", mode, 1, False, grad=False)
        save_op(f"{mode}_l2_bi", mode, 2, True)
    save_op("lstm_l1_bi_nostate", "lstm", 1, True, state_outputs=False, grad=False)
    save_op("gru_l2_uni_nostate", "gru", 2, False, state_outputs=False, steps=6, batch=2, size_in=3, hidden=5,
            grad=False)
    save_op("lstm_proj_l1", "lstm", 1, False, grad=False, projection_size=3)
    save_op("lstm_proj_l2_bi", "lstm", 2, True, grad=False, projection_size=3)
    # no lstm_state_clip_* cases: MXNet's CPU op accepts and silently ignores them (cuDNN clips)

    const = {"i2h_weight_initializer": mx.init.Constant(0.5), "h2h_weight_initializer": mx.init.Constant(-0.25),
             "i2h_bias_initializer": mx.init.Constant(1.0), "h2h_bias_initializer": mx.init.Constant(2.0)}
    save_init("init_lstm_const", "lstm", 2, 4, True, **const)
    save_init("init_gru_const", "gru", 1, 3, False, **const)
    save_init("init_rnn_const", "rnn_tanh", 2, 3, False, **const)
    save_init("init_lstmp_const", "lstm", 2, 4, True, projection_size=2,
              h2r_weight_initializer=mx.init.Constant(3.0), **const)
    # random cases share piece lengths (48, 64, 16): each new length is a compile in the tests
    save_init("init_lstm_named", "lstm", 1, 4, False, i2h_weight_initializer="uniform",
              h2h_weight_initializer="normal", i2h_bias_initializer="zeros", h2h_bias_initializer="ones")
    save_init("init_gru_default", "gru", 1, 4, True, size_in=4, default=mx.init.Uniform(0.2))
    save_init("init_lstm_default_given", "lstm", 1, 4, False, default=mx.init.Uniform(0.3),
              i2h_weight_initializer=mx.init.Constant(0.5), i2h_bias_initializer=mx.init.Constant(1.0))


if __name__ == "__main__":
    main()
