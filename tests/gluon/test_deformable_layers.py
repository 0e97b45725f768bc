"""gluon.nn.DeformableConvolution / ModulatedDeformableConvolution against MXNet 2.0's layers with the same
weights (fixtures from tools/make_detection_fixtures.py).  MXNet cannot run the modulated layer on CPU
("only implemented in GPU"), so for it the fixture holds the parameter names and shapes, and its output is
checked against an ordinary convolution in the case where both must agree (zero offsets, unit masks)."""
from __future__ import annotations

import json
import pathlib

import numpy as onp
import pytest

import mxjax as mx

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "detection"


@pytest.fixture(autouse=True)
def np_mode():
    mx.npx.set_np()
    yield
    mx.npx.reset_np()


@pytest.mark.parametrize("name", ["deformable_conv", "deformable_conv_groups"])
def test_deformable_convolution_matches_mxnet(name):
    data = onp.load(FIXTURES / f"{name}.npz")
    kwargs = json.loads(str(data["params"]))
    layer = getattr(mx.gluon.nn, kwargs.pop("cls"))(**kwargs)
    layer.initialize()
    x = mx.np.array(data["in_0"])
    layer(x)
    params = layer.collect_params()
    expected = json.loads(str(data["names"]))
    assert list(params) == list(expected)
    assert {k: list(p.shape) for k, p in params.items()} == expected
    for key, param in params.items():
        param.set_data(mx.np.array(data[f"param:{key}"]))
    x.attach_grad()
    with mx.autograd.record():
        out = layer(x)
        loss = (out * mx.np.array(data["head"])).sum()
    loss.backward()
    onp.testing.assert_allclose(out.asnumpy(), data["out_0"], rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(x.grad.asnumpy(), data["grad_0"], rtol=1e-4, atol=1e-5)
    for key, param in params.items():
        onp.testing.assert_allclose(param.grad().asnumpy(), data[f"pgrad:{key}"], rtol=1e-4, atol=1e-5)


def test_deformable_convolution_hybridized_and_in_channels():
    layer = mx.gluon.nn.DeformableConvolution(3, kernel_size=3, padding=1, in_channels=2)
    assert layer.deformable_conv_weight.shape == (3, 2, 3, 3)
    assert layer.offset_weight.shape == (18, 2, 3, 3)
    layer.initialize()
    x = mx.np.array(onp.random.default_rng(0).uniform(-1, 1, (1, 2, 5, 5)).astype("float32"))
    eager = layer(x).asnumpy()
    layer.hybridize()
    onp.testing.assert_allclose(layer(x).asnumpy(), eager, rtol=1e-5, atol=1e-6)
    assert "DeformableConvolution(2 -> 3" in repr(layer)


def test_modulated_parameter_names_match_mxnet():
    expected = json.loads(str(onp.load(FIXTURES / "modulated_deformable_conv_params.npz")["names"]))
    layer = mx.gluon.nn.ModulatedDeformableConvolution(channels=4, kernel_size=(3, 3), padding=(1, 1),
                                                       num_deformable_group=2)
    layer.initialize()
    layer(mx.np.zeros((2, 4, 7, 6)))
    params = layer.collect_params()
    assert list(params) == list(expected)
    assert {k: list(p.shape) for k, p in params.items()} == expected


def test_modulated_with_zero_offsets_is_a_convolution():
    rng = onp.random.default_rng(2)
    layer = mx.gluon.nn.ModulatedDeformableConvolution(channels=4, kernel_size=(3, 3), padding=(1, 1),
                                                       num_deformable_group=2)
    layer.initialize()  # offset weights and biases start at zero: offsets 0, masks 2 * sigmoid(0) = 1
    x = mx.np.array(rng.uniform(-1, 1, (2, 4, 7, 6)).astype("float32"))
    out = layer(x)
    conv = mx.npx.convolution(x, layer.deformable_conv_weight.data(), layer.deformable_conv_bias.data(),
                              kernel=(3, 3), pad=(1, 1), num_filter=4)
    onp.testing.assert_allclose(out.asnumpy(), conv.asnumpy(), rtol=1e-4, atol=1e-5)
    # a mask bias of log(3) makes every mask 2 * sigmoid(log 3) = 1.5: the output bias-free part scales by it
    bias = onp.zeros(54, "float32")
    bias[36:] = onp.log(3.0)
    layer.offset_bias.set_data(mx.np.array(bias))
    layer.deformable_conv_bias.set_data(mx.np.zeros(4))
    conv = mx.npx.convolution(x, layer.deformable_conv_weight.data(), None, kernel=(3, 3), pad=(1, 1),
                              num_filter=4, no_bias=True)
    onp.testing.assert_allclose(layer(x).asnumpy(), 1.5 * conv.asnumpy(), rtol=1e-4, atol=1e-5)


def test_bad_layout_and_groups_raise():
    with pytest.raises(mx.MXNetError, match="DeformableConvolution.*layout"):
        mx.gluon.nn.DeformableConvolution(2, layout="NCW")
    layer = mx.gluon.nn.DeformableConvolution(2, kernel_size=1, groups=2)
    layer.initialize()
    with pytest.raises(mx.MXNetError, match="groups=2.*3 input channels"):
        layer(mx.np.zeros((1, 3, 4, 4)))
