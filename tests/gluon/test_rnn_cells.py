"""gluon.rnn cells (step and unroll) against MXNet 2.0 (fixtures from tools/make_gluon_rnn_fixtures.py)."""
import numpy as onp
import pytest
from rnn_fixture_cases import BUILD, CELLS, C, H, N, T, check_against_fixture, load, mxnet_param_shapes, run

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon import rnn

RNG = onp.random.default_rng(3)


def _x(*shape):
    return mx.np.array(RNG.uniform(-1, 1, shape).astype("float32"))


# every case imperative; hybridized for two (each compiles its own programs: keep the suite fast)
@pytest.mark.parametrize("name,hybridize", [(n, False) for n in CELLS] + [("cell_stack", True),
                                                                         ("cell_gru_valid", True)])
def test_cell_unroll_matches_mxnet(name, hybridize):
    block, data, config = load(name)
    assert {k: tuple(p.shape) for k, p in block.collect_params().items()} == mxnet_param_shapes(data)
    if hybridize:
        block.hybridize()
    check_against_fixture(block, data, config)


def test_step_equals_unroll_and_hybridized_step():
    block, data, config = load("cell_lstm")
    _, _, out, out_states = run(block, data, config, grad=False)
    x = mx.np.array(data["x"])  # TNC
    states = [mx.np.array(data["state_0"]), mx.np.array(data["state_1"])]
    block.hybridize()
    for t in range(T):
        y, states = block(x[t], states)
        onp.testing.assert_allclose(y.asnumpy(), out.asnumpy()[t], rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(states[1].asnumpy(), out_states[1].asnumpy(), rtol=1e-5, atol=1e-6)


def test_unroll_layouts_and_merge():
    cell = rnn.GRUCell(H, input_size=C)
    cell.initialize()
    x = _x(N, T, C)
    merged, states = cell.unroll(T, x, layout="NTC", merge_outputs=True)
    listed, _ = cell.unroll(T, x, layout="NTC", merge_outputs=False)
    tnc, _ = cell.unroll(T, mx.np.swapaxes(x, 0, 1), layout="TNC", merge_outputs=True)
    from_list, _ = cell.unroll(T, [x[:, t] for t in range(T)], layout="NTC", merge_outputs=True)
    assert merged.shape == (N, T, H) and len(listed) == T and listed[0].shape == (N, H)
    for other in (onp.stack([o.asnumpy() for o in listed], 1), onp.swapaxes(tnc.asnumpy(), 0, 1),
                  from_list.asnumpy()):
        onp.testing.assert_allclose(other, merged.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(states[0].asnumpy(), merged.asnumpy()[:, -1], rtol=1e-5, atol=1e-6)


def test_deferred_input_size_and_names():
    seq = rnn.SequentialRNNCell()
    seq.add(rnn.LSTMCell(H))
    seq.add(rnn.RNNCell(H, activation="relu"))
    seq.initialize()
    out, states = seq.unroll(T, _x(N, T, C), layout="NTC", merge_outputs=True)
    assert out.shape == (N, T, H) and [s.shape for s in states] == [(N, H)] * 3
    assert {k: p.shape for k, p in seq.collect_params().items()} == {
        "0.i2h_weight": (4 * H, C), "0.h2h_weight": (4 * H, H), "0.i2h_bias": (4 * H,), "0.h2h_bias": (4 * H,),
        "1.i2h_weight": (H, H), "1.h2h_weight": (H, H), "1.i2h_bias": (H,), "1.h2h_bias": (H,)}
    assert len(seq) == 2 and isinstance(seq[1], rnn.RNNCell)


def test_state_info_begin_state_reset():
    cell = rnn.LSTMPCell(H, 3)
    assert [i["shape"] for i in cell.state_info(N)] == [(N, 3), (N, H)]
    assert [s.shape for s in cell.begin_state(N)] == [(N, 3), (N, H)]
    bi = rnn.BidirectionalCell(rnn.GRUCell(H), rnn.LSTMCell(H))
    assert [s.shape for s in bi.begin_state(batch_size=N)] == [(N, H)] * 3
    cell._counter = 5
    cell.reset()
    assert cell._counter == -1


def test_modifier_cells():
    base = rnn.GRUCell(H, input_size=H)
    res = rnn.ResidualCell(base)
    res.initialize()
    with pytest.raises(MXNetError, match="modifier"):
        base.begin_state(N)
    with pytest.raises(MXNetError, match="modified twice"):
        rnn.ZoneoutCell(base)
    x = _x(N, T, H)
    out, _ = res.unroll(T, x, layout="NTC", merge_outputs=True)
    plain, _ = rnn.GRUCell(H, input_size=H).share_parameters(base.collect_params()).unroll(
        T, x, layout="NTC", merge_outputs=True)
    onp.testing.assert_allclose(out.asnumpy(), plain.asnumpy() + x.asnumpy(), rtol=1e-5, atol=1e-6)
    # dropout-like modifiers are the identity in predict mode
    for make in (lambda c: rnn.ZoneoutCell(c, 0.5, 0.5), lambda c: rnn.VariationalDropoutCell(c, 0.5, 0.5, 0.5),
                 lambda c: rnn.VariationalDropoutCell(c, drop_inputs=0.5, drop_outputs=0.5)):
        cell = make(rnn.GRUCell(H, input_size=H).share_parameters(base.collect_params()))
        got, _ = cell.unroll(T, x, layout="NTC", merge_outputs=True)
        onp.testing.assert_allclose(got.asnumpy(), plain.asnumpy(), rtol=1e-5, atol=1e-6)
    drop = rnn.DropoutCell(0.5)
    out, states = drop.unroll(T, x, layout="NTC", merge_outputs=True)
    assert states == [] and drop.state_info() == []
    with mx.autograd.record():
        zeros = float((rnn.DropoutCell(0.5)(mx.np.ones((50, 50)), [])[0] == 0).mean())
    assert 0.3 < zeros < 0.7


def test_bidirectional_cannot_step_and_errors():
    bi = rnn.BidirectionalCell(rnn.GRUCell(H, input_size=C), rnn.GRUCell(H, input_size=C))
    bi.initialize()
    with pytest.raises(NotImplementedError):
        bi(_x(N, C), bi.begin_state(batch_size=N))
    cell = rnn.LSTMCell(H, input_size=C)
    cell.initialize()
    with pytest.raises(MXNetError, match="input of shape"):
        cell(_x(N, C + 1), cell.begin_state(N))
    with pytest.raises(MXNetError, match="states of shapes"):
        cell(_x(N, C), [mx.np.zeros((N, H + 1)), mx.np.zeros((N, H))])
    with pytest.raises(MXNetError, match="layout"):
        cell.unroll(T, _x(N, T, C), layout="XYZ")
    with pytest.raises(MXNetError, match="length"):
        cell.unroll(T + 1, _x(N, T, C), layout="NTC", merge_outputs=False)


def test_reprs():
    assert repr(rnn.RNNCell(H, input_size=C)) == "RNNCell(5 -> 4, tanh)"
    assert repr(rnn.LSTMCell(H)) == "LSTMCell(-1 -> 16)"  # as MXNet 2.0 shows it
    assert repr(rnn.LSTMPCell(H, 3, input_size=C)) == "LSTMPCell(5 -> 16 -> 3)"
    assert "GRUCell" in repr(BUILD["cell_bidir"]())


class _LegacyCell(rnn.HybridRecurrentCell):
    """An MXNet 1.x cell: ``hybrid_forward(F, inputs, states, **params)``, its input size deferred."""

    def __init__(self, hidden):
        super().__init__()
        self._hidden = hidden
        with self.name_scope():
            self.i2h = self.params.get("i2h_weight", shape=(hidden, 0), allow_deferred_init=True)
            self.h2h = self.params.get("h2h_weight", shape=(hidden, hidden))

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden), "__layout__": "NC"}]

    def hybrid_forward(self, F, inputs, states, i2h, h2h):
        h = F.tanh(F.FullyConnected(inputs, i2h, no_bias=True, num_hidden=self._hidden)
                   + F.FullyConnected(states[0], h2h, no_bias=True, num_hidden=self._hidden))
        return h, [h]


@pytest.mark.parametrize("hybridize", [False, True])
def test_a_1x_cell_with_hybrid_forward_steps_and_unrolls(hybridize):
    """A 1.x custom cell runs as in MXNet 1.9.1 (its states one list; mx.nd in, mx.nd out per step),
    hybridized or not, against the recurrence in NumPy."""
    cell = _LegacyCell(4)
    cell.initialize(mx.init.Uniform(0.5))
    if hybridize:
        cell.hybridize()
    x = onp.random.default_rng(3).normal(size=(2, 3, 5)).astype(onp.float32)
    outs, states = cell.unroll(3, mx.nd.array(x), layout="NTC", merge_outputs=True)
    assert cell.i2h.shape == (4, 5) and isinstance(states, list) and len(states) == 1
    assert type(outs) is mx.nd.NDArray and type(states[0]) is mx.nd.NDArray
    i2h, h2h = cell.i2h.data().asnumpy(), cell.h2h.data().asnumpy()
    h, want = onp.zeros((2, 4), onp.float32), []
    for t in range(3):
        h = onp.tanh(x[:, t] @ i2h.T + h @ h2h.T)
        want.append(h)
    onp.testing.assert_allclose(outs.asnumpy(), onp.stack(want, axis=1), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(states[0].asnumpy(), h, rtol=1e-5, atol=1e-6)
    out, new = cell(mx.nd.array(x[:, 0]), cell.begin_state(batch_size=2))
    assert type(out) is mx.nd.NDArray and isinstance(new, list)
    onp.testing.assert_allclose(out.asnumpy(), want[0], rtol=1e-5, atol=1e-6)
