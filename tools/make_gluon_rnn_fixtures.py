"""Write tests/fixtures/gluon_rnn/: MXNet 2.0's ``gluon.rnn`` layers and cells, run by real MXNet.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_gluon_rnn_fixtures.py``).  Each case
``NAME`` writes ``NAME.params`` (``save_parameters``: MXNet's structural names) and ``NAME.npz`` with
``config`` (JSON: the constructor, the call), ``param:<name>`` (each parameter), ``x`` (inputs),
``state_i`` (begin states, if given), ``out`` / ``out_state_i`` (results), ``head`` / ``head_state_i``
and the gradients of ``sum(out*head) + sum(state_i*head_state_i)`` w.r.t. ``x`` (``grad_x``),
each begin state (``grad_state_i``) and each parameter (``grad:<name>``).  All cases share
T=4, N=3, C=5 (hidden 4) so the tests compile few programs.
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gluon_rnn"
RNG = np.random.default_rng(7)
T, N, C, H = 4, 3, 5, 4
rnn = mx.gluon.rnn


def rand(*shape, scale=1.0):
    return (RNG.uniform(-1, 1, shape) * scale).astype("float32")


def save_case(name, make, kind, x_shape, state_shapes=(), call=None):
    """``kind``: 'layer' (``block(x[, states])``) or 'unroll' (``block.unroll(T, x, states, **call)``)."""
    call = call or {}
    block = make()
    block.initialize()
    x = mx.np.array(rand(*x_shape))
    states = [mx.np.array(rand(*s, scale=0.5)) for s in state_shapes]
    valid = call.pop("valid_length", None)
    valid_nd = mx.np.array(np.array(valid, "float32")) if valid is not None else None

    def run():
        if kind == "layer":
            out = block(x, states) if states else block(x)
            return (out[0], list(out[1])) if states else (out, [])
        return block.unroll(T, x, states or None, valid_length=valid_nd, **call)

    run()  # deferred init
    params = block.collect_params()
    for p in params.values():
        p.set_data(mx.np.array(rand(*p.shape, scale=0.6)))
    for a in [x] + states:
        a.attach_grad()
    with mx.autograd.record():
        out, out_states = run()
        head = mx.np.array(rand(*out.shape))
        heads = [mx.np.array(rand(*s.shape)) for s in out_states]
        loss = (out * head).sum()
        for s, h in zip(out_states, heads):
            loss = loss + (s * h).sum()
    loss.backward()
    block.save_parameters(str(OUT / f"{name}.params"))
    record = {"config": np.array(json.dumps({"kind": kind, "call": call, "valid_length": valid})),
              "x": x.asnumpy(), "out": out.asnumpy(), "head": head.asnumpy(), "grad_x": x.grad.asnumpy()}
    for i, s in enumerate(states):
        record[f"state_{i}"] = s.asnumpy()
        record[f"grad_state_{i}"] = s.grad.asnumpy()
    for i, (s, h) in enumerate(zip(out_states, heads)):
        record[f"out_state_{i}"] = s.asnumpy()
        record[f"head_state_{i}"] = h.asnumpy()
    for pname, p in params.items():
        record[f"param:{pname}"] = p.data().asnumpy()
        record[f"grad:{pname}"] = p.grad().asnumpy()
    np.savez_compressed(OUT / f"{name}.npz", **record)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    # fused layers (the constructors are repeated in the tests, by case name)
    save_case("rnn_tanh_l2", lambda: rnn.RNN(H, 2, activation="tanh"), "layer", (T, N, C), state_shapes=[(2, N, H)])
    save_case("rnn_relu_nostate", lambda: rnn.RNN(H), "layer", (T, N, C))
    save_case("lstm_bi_ntc", lambda: rnn.LSTM(H, bidirectional=True, layout="NTC"), "layer", (N, T, C),
              state_shapes=[(2, N, H), (2, N, H)])
    save_case("gru_l2_bi", lambda: rnn.GRU(H, 2, bidirectional=True), "layer", (T, N, C),
              state_shapes=[(4, N, H)])
    save_case("gru_nostate_ntc", lambda: rnn.GRU(H, layout="NTC"), "layer", (N, T, C))
    # cells, unrolled
    save_case("cell_rnn", lambda: rnn.RNNCell(H, input_size=C), "unroll", (N, T, C), state_shapes=[(N, H)],
              call={"layout": "NTC", "merge_outputs": True})
    save_case("cell_lstm", lambda: rnn.LSTMCell(H, input_size=C), "unroll", (T, N, C),
              state_shapes=[(N, H), (N, H)], call={"layout": "TNC", "merge_outputs": True})
    save_case("cell_gru_valid", lambda: rnn.GRUCell(H, input_size=C), "unroll", (N, T, C), state_shapes=[(N, H)],
              call={"layout": "NTC", "merge_outputs": True, "valid_length": [2, 4, 3]})
    save_case("cell_lstmp", lambda: rnn.LSTMPCell(H, 3, input_size=C), "unroll", (N, T, C),
              state_shapes=[(N, 3), (N, H)], call={"layout": "NTC", "merge_outputs": True})

    def stack():
        seq = rnn.HybridSequentialRNNCell()
        seq.add(rnn.LSTMCell(H, input_size=C))
        seq.add(rnn.ResidualCell(rnn.GRUCell(H, input_size=H)))
        seq.add(rnn.DropoutCell(0.0))
        return seq
    save_case("cell_stack", stack, "unroll", (N, T, C), state_shapes=[(N, H), (N, H), (N, H)],
              call={"layout": "NTC", "merge_outputs": True})
    save_case("cell_bidir", lambda: rnn.BidirectionalCell(rnn.LSTMCell(H, input_size=C), rnn.GRUCell(H, input_size=C)),
              "unroll", (N, T, C), state_shapes=[(N, H), (N, H), (N, H)], call={"layout": "NTC", "merge_outputs": True})
    save_case("cell_bidir_valid",
              lambda: rnn.BidirectionalCell(rnn.GRUCell(H, input_size=C), rnn.GRUCell(H, input_size=C)),
              "unroll", (N, T, C), state_shapes=[(N, H), (N, H)],
              call={"layout": "NTC", "merge_outputs": True, "valid_length": [2, 4, 3]})


if __name__ == "__main__":
    main()
