"""Shared by the gluon.rnn tests: the blocks of tests/fixtures/gluon_rnn (as built by
tools/make_gluon_rnn_fixtures.py) and the run-and-compare against what MXNet 2.0 computed."""
from __future__ import annotations

import json
import pathlib

import numpy as onp

import mxjax as mx
from mxjax.gluon import rnn

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "gluon_rnn"
T, N, C, H = 4, 3, 5, 4


def _stack():
    seq = rnn.HybridSequentialRNNCell()
    seq.add(rnn.LSTMCell(H, input_size=C))
    seq.add(rnn.ResidualCell(rnn.GRUCell(H, input_size=H)))
    seq.add(rnn.DropoutCell(0.0))
    return seq


BUILD = {
    "rnn_tanh_l2": lambda: rnn.RNN(H, 2, activation="tanh"),
    "rnn_relu_nostate": lambda: rnn.RNN(H),
    "lstm_bi_ntc": lambda: rnn.LSTM(H, bidirectional=True, layout="NTC"),
    "gru_l2_bi": lambda: rnn.GRU(H, 2, bidirectional=True),
    "gru_nostate_ntc": lambda: rnn.GRU(H, layout="NTC"),
    "cell_rnn": lambda: rnn.RNNCell(H, input_size=C),
    "cell_lstm": lambda: rnn.LSTMCell(H, input_size=C),
    "cell_gru_valid": lambda: rnn.GRUCell(H, input_size=C),
    "cell_lstmp": lambda: rnn.LSTMPCell(H, 3, input_size=C),
    "cell_stack": _stack,
    "cell_bidir": lambda: rnn.BidirectionalCell(rnn.LSTMCell(H, input_size=C), rnn.GRUCell(H, input_size=C)),
    "cell_bidir_valid": lambda: rnn.BidirectionalCell(rnn.GRUCell(H, input_size=C), rnn.GRUCell(H, input_size=C)),
}
LAYERS = [n for n in BUILD if not n.startswith("cell_")]
CELLS = [n for n in BUILD if n.startswith("cell_")]


def load(name: str) -> tuple:
    """(block with MXNet's parameters loaded by load_parameters, the fixture's arrays, its config)."""
    data = dict(onp.load(FIXTURES / f"{name}.npz"))
    block = BUILD[name]()
    block.load_parameters(str(FIXTURES / f"{name}.params"))
    return block, data, json.loads(str(data["config"]))


def run(block, data: dict, config: dict, grad: bool = True) -> tuple:
    """Forward (and backward of sum(out*head) + sum(state*head_state)) as the fixture did."""
    x = mx.np.array(data["x"])
    states = [mx.np.array(data[f"state_{i}"]) for i in range(10) if f"state_{i}" in data]
    valid = config["valid_length"]
    valid = mx.np.array(onp.array(valid, "float32")) if valid is not None else None
    for a in [x] + states:
        a.attach_grad()
    with mx.autograd.record():
        if config["kind"] == "layer":
            res = block(x, states) if states else block(x)
            out, out_states = (res[0], list(res[1])) if states else (res, [])
        else:
            out, out_states = block.unroll(T, x, states or None, valid_length=valid, **config["call"])
        loss = (out * mx.np.array(data["head"])).sum()
        for i, s in enumerate(out_states):
            loss = loss + (s * mx.np.array(data[f"head_state_{i}"])).sum()
    if grad:
        loss.backward()
    return x, states, out, out_states


def check_against_fixture(block, data: dict, config: dict) -> None:
    x, states, out, out_states = run(block, data, config)
    tol = dict(rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(out.asnumpy(), data["out"], **tol)
    assert len(out_states) == len([k for k in data if k.startswith("out_state_")])
    for i, s in enumerate(out_states):
        onp.testing.assert_allclose(s.asnumpy(), data[f"out_state_{i}"], **tol)
    onp.testing.assert_allclose(x.grad.asnumpy(), data["grad_x"], **tol)
    for i, s in enumerate(states):
        onp.testing.assert_allclose(s.grad.asnumpy(), data[f"grad_state_{i}"], **tol)
    for name, p in block.collect_params().items():
        onp.testing.assert_allclose(p.grad().asnumpy(), data[f"grad:{name}"], err_msg=name, **tol)


def mxnet_param_shapes(data: dict) -> dict:
    return {k[len("param:"):]: v.shape for k, v in data.items() if k.startswith("param:")}
