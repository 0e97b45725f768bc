"""gluon.rnn.RNN/LSTM/GRU against MXNet 2.0 (fixtures from tools/make_gluon_rnn_fixtures.py)."""
import numpy as onp
import pytest
from rnn_fixture_cases import BUILD, LAYERS, C, H, N, T, check_against_fixture, load, mxnet_param_shapes

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon import rnn


# every case imperative; hybridized for two (each case compiles its own programs: keep the suite fast)
@pytest.mark.parametrize("name,hybridize", [(n, False) for n in LAYERS] + [("lstm_bi_ntc", True),
                                                                          ("gru_nostate_ntc", True)])
def test_layer_matches_mxnet(name, hybridize):
    block, data, config = load(name)
    assert {k: tuple(p.shape) for k, p in block.collect_params().items()} == mxnet_param_shapes(data)
    for k, p in block.collect_params().items():
        onp.testing.assert_array_equal(p.data().asnumpy(), data[f"param:{k}"])
    if hybridize:
        block.hybridize()
    check_against_fixture(block, data, config)


@pytest.mark.parametrize("name", ["lstm_bi_ntc", "gru_l2_bi", "rnn_relu_nostate"])
def test_deferred_init_names_and_shapes(name):
    _, data, _ = load(name)
    fresh = BUILD[name]()
    assert list(fresh.collect_params()) == ["rnn_param"]
    fresh.initialize()
    fresh.infer_shape(mx.np.array(data["x"]))  # what the first call does
    assert {k: tuple(p.shape) for k, p in fresh.collect_params().items()} == mxnet_param_shapes(data)


def test_call_without_states_and_hybridized_equals_imperative():
    block, data, config = load("rnn_relu_nostate")
    x = mx.np.array(data["x"])
    out = block(x)  # no states: only the output, begin states are zeros
    onp.testing.assert_allclose(out.asnumpy(), data["out"], rtol=1e-4, atol=1e-5)
    out2, states = block(x, block.begin_state(N))
    assert [s.shape for s in states] == [(1, N, H)]
    block.hybridize()
    out3, states3 = block(x, block.begin_state(N))
    for got in (out2, out3, block(x)):
        onp.testing.assert_allclose(got.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(states3[0].asnumpy(), states[0].asnumpy(), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(states[0].asnumpy()[0], out.asnumpy()[-1], rtol=1e-5, atol=1e-6)


def test_state_info_begin_state_and_repr():
    layer = rnn.LSTM(H, 2, bidirectional=True, projection_size=3)
    assert [i["shape"] for i in layer.state_info(N)] == [(4, N, 3), (4, N, H)]
    assert layer.state_info(N)[0]["__layout__"] == "LNC"
    states = layer.begin_state(N, func=mx.np.ones)
    assert [s.shape for s in states] == [(4, N, 3), (4, N, H)] and float(states[0].sum()) == 4 * N * 3
    assert repr(rnn.GRU(H, 2, dropout=0.5, input_size=C)) == "GRU(5 -> 4, TNC, num_layers=2, dropout=0.5)"
    assert rnn.RNN(H)._mode == "rnn_relu" and rnn.RNN(H, activation="tanh")._mode == "rnn_tanh"


def test_default_initialization_is_rnnfused():
    layer = rnn.LSTM(H, input_size=C, i2h_bias_initializer="ones")
    layer.initialize(mx.init.Constant(0.5))
    vec = layer.rnn_param.data().asnumpy()
    weights = 4 * H * (C + H)
    assert vec.shape == (weights + 8 * H,)
    assert onp.all(vec[:weights] == 0.5)  # unset weight initializers take the global one
    assert onp.all(vec[weights:] == 0)  # set ones become 'zero' (MXNet's set_initializer rule)


def test_bad_inputs_raise():
    block, data, config = load("rnn_tanh_l2")
    with pytest.raises(MXNetError, match="input size"):
        block(mx.np.zeros((T, N, C + 1)))
    with pytest.raises(MXNetError, match="state shape"):
        block(mx.np.zeros((T, N, C)), [mx.np.zeros((1, N, H))])
    with pytest.raises(MXNetError, match="rank-3"):
        block(mx.np.zeros((T, C)))
    with pytest.raises(MXNetError, match="layout"):
        rnn.GRU(H, layout="CTN")


def test_a_hybridized_model_passes_its_lstm_states_as_a_list():
    """MXNet's word language model: ``model(data, hidden)`` with ``hidden`` the LSTM's [h, c],
    returning ``(output, new hidden)``; hybridized, the same numbers as imperatively, and the
    states detached between batches carry over."""
    from mxjax import gluon
    from mxjax.gluon import nn

    class LM(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.embed, self.lstm = nn.Embedding(11, 6), rnn.LSTM(7, input_size=6)
            self.out = nn.Dense(11, flatten=False)

        def forward(self, x, hidden):
            output, hidden = self.lstm(self.embed(x), hidden)
            return self.out(output), hidden

    tokens = onp.random.default_rng(0).integers(0, 11, size=(3, 5, 2))
    runs = []
    for hybridize in (False, True):
        mx.random.seed(0)
        model = LM()
        model.initialize()
        if hybridize:
            model.hybridize()
        hidden = model.lstm.begin_state(batch_size=2)
        outs = []
        for batch in tokens:
            hidden = [h.detach() for h in hidden]
            out, hidden = model(mx.np.array(batch), hidden)
            assert len(hidden) == 2 and hidden[0].shape == (1, 2, 7)
            outs.append(out.asnumpy())
        runs.append(onp.stack(outs))
    onp.testing.assert_allclose(runs[1], runs[0], rtol=1e-5, atol=1e-6)
