"""SymbolBlock.imports of recurrent models exported by MXNet 1.9.1's Gluon (tools/make_rnn_export_fixture.py):
their graphs hold ``_rnn_param_concat``, ``RNN`` and begin states made as ``zeros((L*D, 0, H))``, whose 0
(the batch) MXNet 1.x infers from the RNN node."""
import pathlib

import numpy as onp
import pytest

import mxjax as mx

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "rnn_export"


@pytest.mark.parametrize("name", ["bilstm", "gru"])
def test_outputs_match_mxnet_191(name):
    net = mx.gluon.SymbolBlock.imports(str(FIXTURES / f"{name}-symbol.json"), ["data"],
                                       str(FIXTURES / f"{name}-0000.params"))
    io = onp.load(FIXTURES / f"{name}_io.npz")
    onp.testing.assert_allclose(net(mx.nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5, atol=1e-6)
    net.hybridize()
    onp.testing.assert_allclose(net(mx.nd.array(io["x"])).asnumpy(), io["y"], rtol=1e-5, atol=1e-6)
    wider = onp.concatenate([io["x"], io["x"][:, :1]], axis=1)  # another batch size: the states follow it
    got = net(mx.nd.array(wider)).asnumpy()
    onp.testing.assert_allclose(got[:, :2], io["y"], rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(got[:, 2], io["y"][:, 0], rtol=1e-5, atol=1e-6)


def test_infer_shape_fills_the_deferred_begin_states():
    sym = mx.sym.load(str(FIXTURES / "bilstm-symbol.json"))
    args, outs, _ = sym.infer_shape(data=(5, 3, 4))
    assert outs == [(5, 3, 3)]
    names = sym.list_arguments()
    assert dict(zip(names, args))["data"] == (5, 3, 4)
