"""mx.model: checkpoints (MXNet's file layout both ways), BatchEndParam, removed 1.x names."""
import os
import pathlib

import numpy as onp
import pytest

import mxjax as mx

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "util"


def _run(symbol, arg_params, aux_params, x):
    args = dict(arg_params, data=mx.nd.array(x))
    return symbol.bind(mx.cpu(), args=args, aux_states=aux_params).forward(is_train=False)[0].asnumpy()


def test_load_checkpoint_written_by_mxnet():
    symbol, arg_params, aux_params = mx.model.load_checkpoint(str(FIXTURES / "fc"), 3)
    assert sorted(arg_params) == ["bn_beta", "bn_gamma", "fc_bias", "fc_weight"]
    assert sorted(aux_params) == ["bn_moving_mean", "bn_moving_var"]
    assert symbol.list_arguments() == ["data", "fc_weight", "fc_bias", "bn_gamma", "bn_beta"]
    expected = onp.load(FIXTURES / "fc-expected.npz")
    onp.testing.assert_allclose(_run(symbol, arg_params, aux_params, expected["x"]), expected["out"],
                                rtol=1e-5, atol=1e-6)


def test_save_then_load_round_trip(tmp_path):
    symbol, arg_params, aux_params = mx.model.load_checkpoint(str(FIXTURES / "fc"), 3)
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 12, symbol, arg_params, aux_params)
    assert os.path.exists(prefix + "-symbol.json") and os.path.exists(prefix + "-0012.params")
    raw = mx.nd.load(prefix + "-0012.params")
    assert sorted(raw) == sorted([f"arg:{k}" for k in arg_params] + [f"aux:{k}" for k in aux_params])
    symbol2, args2, aux2 = mx.model.load_checkpoint(prefix, 12)
    assert symbol2.tojson() == symbol.tojson()
    for name, value in arg_params.items():
        onp.testing.assert_array_equal(args2[name].asnumpy(), value.asnumpy())
    x = onp.load(FIXTURES / "fc-expected.npz")["x"]
    onp.testing.assert_allclose(_run(symbol2, args2, aux2, x), _run(symbol, arg_params, aux_params, x))


def test_save_checkpoint_without_symbol_and_empty_params(tmp_path, caplog):
    prefix = str(tmp_path / "empty")
    mx.model.save_checkpoint(prefix, 1, None, {}, {})
    assert not os.path.exists(prefix + "-symbol.json")
    with caplog.at_level("WARNING"):
        assert mx.model.load_params(prefix, 1) == ({}, {})
    assert "is empty" in caplog.text


def test_batch_end_param():
    param = mx.model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals=None)
    assert (param.epoch, param.nbatch) == (1, 2) and type(param).__name__ == "BatchEndParams"


def test_feed_forward_is_removed_with_a_pointer():
    with pytest.raises(AttributeError, match="gluon.HybridBlock"):
        mx.model.FeedForward  # noqa: B018
    assert not hasattr(mx.model, "FeedForward")
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        mx.model.nothing_here  # noqa: B018
