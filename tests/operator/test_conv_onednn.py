"""Convolution and Deconvolution on oneDNN (mxjax/_onednn) against raw JAX (``lax``
convolutions and their VJPs): forward and both gradients over random configurations, in
float32 and bfloat16, through every way an op runs (the raw op function under the user's
``jax.jit``, imperative autograd, a hybridized Gluon block); the ``MXNET_ONEDNN_ENABLED``
switch, the fallback for inputs the oneDNN path does not take, a build that does not load,
and the error a failing handler gives."""
import logging
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as onp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

import mxjax as mx
from mxjax import autograd
from mxjax._onednn import TARGETS, available, load_error, ops, packing
from mxjax.base import MXNetError
from mxjax.gluon import nn
from mxjax.operator import get_op
from onednn_support import takes_bfloat16

pytestmark = pytest.mark.skipif(not available(), reason=f"oneDNN extension not built: {load_error()}")

CONV = get_op("Convolution").compute
SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def lax_conv(x, w, b, stride, pad, dilate, groups, channel_last):
    """The reference: XLA's convolution in MXNet's layouts."""
    sp = SPATIAL[x.ndim - 2]
    dims = ("N" + sp + "C", "O" + sp + "I", "N" + sp + "C") if channel_last else ("NC" + sp, "OI" + sp, "NC" + sp)
    out = lax.conv_general_dilated(x, w, stride, [(p, p) for p in pad], rhs_dilation=dilate,
                                   dimension_numbers=dims, feature_group_count=groups,
                                   precision=lax.Precision.HIGHEST)
    if b is None:
        return out
    return out + (b if channel_last else b.reshape((-1,) + (1,) * (x.ndim - 2)))


def close(got, want, what):
    want = onp.asarray(want)
    scale = max(1.0, float(onp.abs(want).max())) if want.size else 1.0
    onp.testing.assert_allclose(onp.asarray(got), want, rtol=1e-5, atol=3e-6 * scale, err_msg=what)


@st.composite
def configs(draw):
    nsp = draw(st.sampled_from([1, 2, 2, 3]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    dilate = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    # pads under the dilated kernel's extent (oneDNN rejects larger: test_fallback_when_onednn_rejects)
    pad = tuple(draw(st.integers(0, d * (k - 1))) for k, d in zip(kernel, dilate))
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilate)]
    top = {1: 10, 2: 8, 3: 5}[nsp]
    size = tuple(draw(st.integers(max(1, e - 2 * p), max(top, e))) for e, p in zip(extent, pad))
    groups = draw(st.integers(1, 3))
    return dict(batch=draw(st.integers(1, 3)), size=size, kernel=kernel, stride=stride, pad=pad, dilate=dilate,
                groups=groups, cin=groups * draw(st.integers(1, 3)), cout=groups * draw(st.integers(1, 3)),
                channel_last=draw(st.booleans()), bias=draw(st.booleans()))


def arrays(c, seed):
    rng = onp.random.default_rng(seed)
    last = c["channel_last"]
    xs = (c["batch"], *c["size"], c["cin"]) if last else (c["batch"], c["cin"], *c["size"])
    per = c["cin"] // c["groups"]
    ws = (c["cout"], *c["kernel"], per) if last else (c["cout"], per, *c["kernel"])
    x = jnp.asarray(rng.standard_normal(xs), jnp.float32)
    w = jnp.asarray(rng.standard_normal(ws), jnp.float32)
    b = jnp.asarray(rng.standard_normal(c["cout"]), jnp.float32) if c["bias"] else None
    return x, w, b


def op_fn(c):
    layout = "N" + SPATIAL[len(c["size"])] + "C" if c["channel_last"] else None
    return lambda x, w, b: CONV(x, w, b, kernel=c["kernel"], stride=c["stride"], dilate=c["dilate"], pad=c["pad"],
                                num_filter=c["cout"], num_group=c["groups"], no_bias=b is None, layout=layout)


def trained_on_onednn(fn, *args):
    """Whether differentiating ``fn`` runs oneDNN's forward handler (inference may run XLA's)."""
    return TARGETS["forward"] in str(jax.make_jaxpr(lambda *a: jax.vjp(fn, *a)[0])(*args))


def check_against_lax(c, seed=0):
    x, w, b = arrays(c, seed)
    mine = jax.jit(op_fn(c))
    ref = lambda x, w, b: lax_conv(x, w, b, c["stride"], c["pad"], c["dilate"], c["groups"],  # noqa: E731
                                   c["channel_last"])
    assert trained_on_onednn(op_fn(c), x, w, b), c
    out, vjp = jax.vjp(mine, x, w, b)
    want, ref_vjp = jax.vjp(ref, x, w, b)
    close(out, want, f"forward {c}")
    g = jnp.asarray(onp.random.default_rng(seed + 1).standard_normal(out.shape), jnp.float32)
    for name, got, exp in zip(("data", "weight", "bias"), vjp(g), ref_vjp(g)):
        if exp is not None:
            close(got, exp, f"{name} gradient {c}")
    # inference (nothing differentiates): by the channel rule, then forced onto oneDNN's plain path
    close(jax.jit(op_fn(c))(x, w, b), want, f"inference {c}")
    saved, ops.INFER_XLA_MAX_CHANNELS = ops.INFER_XLA_MAX_CHANNELS, 0
    try:
        close(jax.jit(op_fn(c))(x, w, b), want, f"inference on oneDNN {c}")
        # a hybridized block's inference: the weight packed into oneDNN's layout beforehand
        run = lambda args, _: op_fn(c)(*args)  # noqa: E731
        close(packing.PackedProgram(run, jax.jit(run), [1])((x, w, b), None), want, f"packed weights {c}")
    finally:
        ops.INFER_XLA_MAX_CHANNELS = saved


@settings(max_examples=25, deadline=None)
@given(configs())
def test_matches_lax_forward_and_gradients(c):
    check_against_lax(c)


@pytest.mark.parametrize("c", [
    dict(batch=2, size=(9, 8), kernel=(3, 3), stride=(1, 2), pad=(1, 1), dilate=(1, 1), groups=1, cin=16, cout=32,
         channel_last=False, bias=True),
    dict(batch=1, size=(5, 4, 6), kernel=(2, 3, 1), stride=(2, 1, 1), pad=(0, 1, 0), dilate=(1, 1, 2), groups=2,
         cin=4, cout=6, channel_last=True, bias=False)])
def test_bfloat16(c):
    """bfloat16 on oneDNN (float32 accumulation) against XLA's float32 convolution of the same
    bfloat16 values: within bfloat16's rounding of the result.  (On a CPU where oneDNN takes no
    bfloat16, XLA's convolution runs, to the same tolerance.)"""
    x, w, b = (None if a is None else a.astype(jnp.bfloat16) for a in arrays(c, 11))
    assert trained_on_onednn(op_fn(c), x, w, b) == takes_bfloat16()
    f32 = lambda a: None if a is None else a.astype(jnp.float32)  # noqa: E731
    ref = lambda x, w, b: lax_conv(f32(x), f32(w), f32(b), c["stride"], c["pad"], c["dilate"],  # noqa: E731
                                   c["groups"], c["channel_last"])
    out, vjp = jax.vjp(jax.jit(op_fn(c)), x, w, b)
    want, ref_vjp = jax.vjp(ref, x, w, b)
    infer = jax.jit(op_fn(c))(x, w, b)  # the inference path: XLA (16 channels) or oneDNN (grouped)
    g = jnp.asarray(onp.random.default_rng(12).standard_normal(out.shape), jnp.bfloat16)
    grads = zip(("data", "weight", "bias"), vjp(g), ref_vjp(g.astype(jnp.float32)))
    for name, got, exp in (("forward", out, want), ("inference", infer, want), *grads):
        if exp is None:
            continue
        got, exp = onp.asarray(got, onp.float32), onp.asarray(exp, onp.float32)
        onp.testing.assert_allclose(got, exp, rtol=2e-2, atol=2e-2 * onp.abs(exp).max(), err_msg=f"{name} {c}")


@pytest.mark.parametrize("channel_last", [False, True])
def test_activations_stored_channel_last(monkeypatch, channel_last):
    """ops.MEMORY_LAST: XLA hands oneDNN channel-first activations in channel-last storage."""
    monkeypatch.setattr(ops, "MEMORY_LAST", True)
    c = dict(batch=2, size=(7, 6), kernel=(3, 2), stride=(2, 1), pad=(1, 0), dilate=(1, 2), groups=2, cin=4, cout=6,
             channel_last=channel_last, bias=True)
    check_against_lax(c, seed=3)


def test_imperative_autograd():
    rng = onp.random.default_rng(5)
    x_np, w_np, b_np = (rng.standard_normal(s).astype("float32") for s in ((2, 3, 9, 7), (4, 3, 3, 3), (4,)))
    x, w, b = mx.np.array(x_np), mx.np.array(w_np), mx.np.array(b_np)
    for a in (x, w, b):
        a.attach_grad()
    before = ops.stats["onednn"]
    with autograd.record():
        y = mx.npx.convolution(x, w, b, kernel=(3, 3), stride=(1, 2), pad=(1, 1), num_filter=4)
        loss = (y * y).sum()
    loss.backward()
    assert ops.stats["onednn"] > before
    ref = lambda x, w, b: (lax_conv(x, w, b, (1, 2), (1, 1), (1, 1), 1, False) ** 2).sum()  # noqa: E731
    want = jax.grad(ref, argnums=(0, 1, 2))(jnp.asarray(x_np), jnp.asarray(w_np), jnp.asarray(b_np))
    close(y.asnumpy(), lax_conv(x_np, w_np, b_np, (1, 2), (1, 1), (1, 1), 1, False), "forward")
    for name, a, exp in zip(("data", "weight", "bias"), (x, w, b), want):
        close(a.grad.asnumpy(), exp, name)


class _Net(mx.gluon.HybridBlock):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2D(5, kernel_size=3, strides=2, padding=1, groups=1, in_channels=2)

    def forward(self, x):
        return self.conv(x)


def test_hybridized_block():
    net = _Net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x_np = onp.random.default_rng(6).standard_normal((3, 2, 11, 10)).astype("float32")
    x = mx.np.array(x_np)
    before = ops.stats["onednn"]
    params = list(net.collect_params().values())
    with autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    assert ops.stats["onednn"] > before
    w, b = (jnp.asarray(p.data().asnumpy()) for p in params)
    ref = lambda w, b: (lax_conv(jnp.asarray(x_np), w, b, (2, 2), (1, 1), (1, 1), 1, False) ** 2).sum()  # noqa: E731
    close(loss.asnumpy(), ref(w, b), "loss")
    for p, exp in zip(params, jax.grad(ref, argnums=(0, 1))(w, b)):
        close(p.grad().asnumpy(), exp, p.name)


def test_inside_user_jit():
    """The raw op function under the user's jax.jit: all three handlers are in the compiled program."""
    c = dict(batch=1, size=(6, 6), kernel=(3, 3), stride=(1, 1), pad=(1, 1), dilate=(1, 1), groups=1, cin=2, cout=3,
             channel_last=False, bias=False)
    x, w, _ = arrays(c, 7)
    f = op_fn(c)
    loss = jax.jit(jax.value_and_grad(lambda x, w: (f(x, w, None) ** 2).sum(), argnums=(0, 1)))
    hlo = loss.lower(x, w).as_text()
    assert all(TARGETS[k] in hlo for k in ("forward", "backward_data", "backward_weights")), hlo
    (value, grads) = loss(x, w)
    ref = lambda x, w: (lax_conv(x, w, None, (1, 1), (1, 1), (1, 1), 1, False) ** 2).sum()  # noqa: E731
    rv, rg = jax.value_and_grad(ref, argnums=(0, 1))(x, w)
    close(value, rv, "loss")
    for got, exp in zip(grads, rg):
        close(got, exp, "gradient")


def test_fallback_for_unsupported_inputs(caplog):
    """What the oneDNN path does not take (an empty batch, float16) runs on XLA with the
    reason logged.  oneDNN itself built a primitive for every float32 configuration tried; its
    refusal inside the handler is test_handler_error_is_mxnet_error."""
    c = dict(batch=1, size=(5, 5), kernel=(1, 1), stride=(1, 1), pad=(2, 2), dilate=(1, 1), groups=1, cin=2,
             cout=3, channel_last=False, bias=True)
    x, w, b = arrays(c, 8)
    cases = (((0, 2, 5, 5), jnp.float32, "empty input"), ((1, 2, 5, 5), jnp.float16, "float16"))
    for xs, dtype, reason in cases:
        args = (jnp.ones(xs, dtype), w.astype(dtype), b.astype(dtype))
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger=ops.__name__):
            text = str(jax.make_jaxpr(op_fn(c))(*args))
        assert TARGETS["forward"] not in text and "conv_general_dilated" in text
        assert reason in caplog.text and "XLA path" in caplog.text, caplog.text
        got = jax.jit(op_fn(c))(*args)
        close(got.astype(jnp.float32), lax_conv(*args, (1, 1), (2, 2), (1, 1), 1, False).astype(jnp.float32), reason)


def test_handler_error_is_mxnet_error(monkeypatch):
    """oneDNN refusing a configuration inside the handler (here: an output shape that does not
    match the convolution, which the op's own checks never let through) gives an MXNetError
    naming Convolution and the shapes, and the process carries on."""
    right = ops._out_shape
    monkeypatch.setattr(ops, "_out_shape", lambda *a: (*right(*a)[:2], *(n + 2 for n in right(*a)[2:])))
    monkeypatch.setattr(ops, "_check", lambda flat: None)  # the trace-time check would fall back
    monkeypatch.setattr(ops, "INFER_XLA_MAX_CHANNELS", 0)  # inference of 2 channels would run on XLA
    x = mx.np.array(onp.ones((1, 2, 5, 4), "float32"))
    w = mx.np.array(onp.ones((3, 2, 1, 1), "float32"))
    with pytest.raises(MXNetError) as err:
        mx.npx.convolution(x, w, kernel=(1, 1), num_filter=3, no_bias=True).asnumpy()
    text = str(err.value)
    assert "Convolution" in text and "(1, 2, 5, 4)" in text and "(3, 2, 1, 1)" in text, text
    monkeypatch.undo()
    x = mx.np.array(onp.ones((1, 2, 4, 3), "float32"))  # new shapes: the failed program stays cached
    good = mx.npx.convolution(x, w, kernel=(1, 1), num_filter=3, no_bias=True)
    close(good.asnumpy(), onp.full((1, 3, 4, 3), 2.0), "after the error")


def test_packed_weights_of_the_wrong_size_are_an_mxnet_error(monkeypatch):
    """A packed weight that does not fit the plan (here: made so on purpose) gives an MXNetError
    naming Convolution and the sizes, not a crash; a weight packed as it should works after."""
    net = nn.Conv2D(4, 3, in_channels=40)
    net.initialize(mx.init.Uniform(0.5))
    x = mx.np.array(onp.random.default_rng(40).standard_normal((1, 40, 5, 5)).astype("float32"))
    expected = net(x).asnumpy()
    net.hybridize()
    real = packing.pack
    monkeypatch.setattr(packing, "pack", lambda w, flat: real(w, flat)[:-4])
    with pytest.raises(MXNetError) as err:
        net(x).asnumpy()
    text = str(err.value)
    assert "Convolution" in text and "packed weights of bytes" in text and "(1, 40, 5, 5)" in text, text
    monkeypatch.undo()
    net.weight.set_data(net.weight.data() * 1)  # a new array: packed anew, as it should be
    close(net(x).asnumpy(), expected, "after the error")


def _printed(script: str, **env: str) -> list:
    """The words ``script`` prints, run in a fresh process with ``env`` added to the environment."""
    out = subprocess.run([sys.executable, "-c", script], env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.split()


def test_feature_and_switch_off():
    assert mx.runtime.Features().is_enabled("ONEDNN")
    script = (
        "import jax, jax.numpy as jnp, mxjax as mx\n"
        "from mxjax.operator import get_op\n"
        "f = lambda x, w: get_op('Convolution').compute(x, w, kernel=(3, 3), num_filter=2, no_bias=True)\n"
        "text = jax.jit(f).lower(jnp.ones((1, 2, 5, 5)), jnp.ones((2, 2, 3, 3))).as_text()\n"
        "print('onednn' in text, mx.runtime.Features().is_enabled('ONEDNN'))\n")
    assert _printed(script, MXNET_ONEDNN_ENABLED="0") == ["False", "False"]


def test_extension_that_does_not_load_warns_once(monkeypatch):
    """A missing build: one warning at the first convolution, XLA's path, no import error."""
    import mxjax._onednn as onednn

    monkeypatch.setattr(onednn, "_state", {})
    monkeypatch.setattr(onednn, "_extension_path", lambda: None)
    monkeypatch.setattr(ops, "_warned", [])
    c = dict(batch=1, size=(6,), kernel=(2,), stride=(1,), pad=(0,), dilate=(1,), groups=1, cin=1, cout=1,
             channel_last=False, bias=False)
    x, w, _ = arrays(c, 10)
    with pytest.warns(RuntimeWarning, match="oneDNN convolutions unavailable") as record:
        text = str(jax.make_jaxpr(op_fn(c))(x, w, None))
        jax.make_jaxpr(op_fn(c))(x, w, None)
    assert len([r for r in record if "oneDNN" in str(r.message)]) == 1
    assert TARGETS["forward"] not in text and not onednn.available() and "not built" in onednn.load_error()


# ----------------------------------------------------------------------------- deconvolution

DECONV = get_op("Deconvolution").compute


def lax_deconv(x, w, stride, pad, dilate, adj, groups):
    """The reference: the data-gradient (a VJP in raw JAX) of the convolution from the
    deconvolution's output back to its input; channel-first, MXNet weight (C, F/g, *k)."""
    sp = SPATIAL[x.ndim - 2]
    sizes = [s * (n - 1) + d * (k - 1) + 1 - 2 * p + a
             for n, k, s, p, d, a in zip(x.shape[2:], w.shape[2:], stride, pad, dilate, adj)]
    z = jnp.zeros((x.shape[0], w.shape[1] * groups, *sizes), x.dtype)
    conv = lambda z: lax.conv_general_dilated(z, w, stride, [(p, p) for p in pad], rhs_dilation=dilate,  # noqa: E731
                                              dimension_numbers=("NC" + sp, "OI" + sp, "NC" + sp),
                                              feature_group_count=groups, precision=lax.Precision.HIGHEST)
    return jax.vjp(conv, z)[1](x)[0]


@st.composite
def deconv_configs(draw):
    nsp = draw(st.sampled_from([1, 2, 3]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    dilate = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    adj = tuple(draw(st.integers(0, s - 1)) for s in stride)
    pad = tuple(draw(st.integers(0, (d * (k - 1)) // 2)) for k, d in zip(kernel, dilate))
    size = tuple(draw(st.integers(1, {1: 7, 2: 5, 3: 3}[nsp])) for _ in range(nsp))
    groups = draw(st.integers(1, 2))
    return dict(batch=draw(st.integers(1, 2)), size=size, kernel=kernel, stride=stride, pad=pad, adj=adj,
                dilate=dilate, groups=groups, cin=groups * draw(st.integers(1, 3)),
                cout=groups * draw(st.integers(1, 3)), channel_last=draw(st.booleans()))


@settings(max_examples=12, deadline=None)
@given(deconv_configs())
def test_deconvolution_matches_lax(c):
    rng = onp.random.default_rng(13)
    nsp = len(c["size"])
    x = jnp.asarray(rng.standard_normal((c["batch"], c["cin"], *c["size"])), jnp.float32)
    w = jnp.asarray(rng.standard_normal((c["cin"], c["cout"] // c["groups"], *c["kernel"])), jnp.float32)
    last = c["channel_last"]
    move = (lambda a: jnp.moveaxis(a, 1, -1)) if last else (lambda a: a)  # noqa: E731
    back = (lambda a: jnp.moveaxis(a, -1, 1)) if last else (lambda a: a)  # noqa: E731
    layout = "N" + SPATIAL[nsp] + "C" if last else None

    def mine(x, w):
        return back(DECONV(move(x), move(w), kernel=c["kernel"], stride=c["stride"], dilate=c["dilate"],
                           pad=c["pad"], adj=c["adj"], num_filter=c["cout"], num_group=c["groups"], layout=layout))

    def ref(x, w):
        return lax_deconv(x, w, c["stride"], c["pad"], c["dilate"], c["adj"], c["groups"])

    if min(s * (n - 1) + d * (k - 1) + 1 - 2 * p + a for n, k, s, p, d, a in
           zip(c["size"], c["kernel"], c["stride"], c["pad"], c["dilate"], c["adj"])) < 1:
        return  # no output: the op's own error, tested in test_nn_conv
    assert TARGETS["backward_data"] in str(jax.make_jaxpr(mine)(x, w)), c
    out, vjp = jax.vjp(jax.jit(mine), x, w)
    want, ref_vjp = jax.vjp(ref, x, w)
    close(out, want, f"forward {c}")
    g = jnp.asarray(rng.standard_normal(out.shape), jnp.float32)
    for name, got, exp in zip(("data", "weight"), vjp(g), ref_vjp(g)):
        close(got, exp, f"{name} gradient {c}")


# ------------------------------------------------------------------- inference path, plan cache

def lowered(fn, *args):
    return jax.jit(fn).lower(*args).as_text()


@pytest.mark.parametrize("c", [
    # thin input (ops.INFER_XLA_MAX_CHANNELS): inference on XLA's convolution
    dict(batch=3, size=(9, 8), kernel=(3, 3), stride=(1, 2), pad=(1, 0), dilate=(1, 1), groups=1, cin=3, cout=5,
         channel_last=False, bias=True),
    # wider: inference on oneDNN with channel-last activations handed over as they are
    dict(batch=2, size=(7, 6), kernel=(3, 2), stride=(2, 1), pad=(1, 1), dilate=(1, 2), groups=1, cin=40, cout=6,
         channel_last=False, bias=True),
    dict(batch=1, size=(5, 4, 6), kernel=(2, 3, 1), stride=(1, 1, 2), pad=(1, 1, 0), dilate=(1, 1, 1), groups=2,
         cin=36, cout=4, channel_last=True, bias=False),
    dict(batch=2, size=(11,), kernel=(3,), stride=(1,), pad=(2,), dilate=(2,), groups=1, cin=48, cout=8,
         channel_last=True, bias=True)])
def test_inference_path_equals_training_path(c):
    """A convolution nothing differentiates runs the inference path (XLA for thin inputs, else
    oneDNN on plain channel-last activations); under autodiff the training path (oneDNN's
    blocked layouts).  Both give XLA's convolution, and the gradients stay right."""
    x, w, b = arrays(c, 21)
    f = op_fn(c)
    thin = c["groups"] == 1 and c["cin"] <= ops.INFER_XLA_MAX_CHANNELS
    infer = lowered(f, x, w, b)
    train = lowered(lambda x, w, b: jax.vjp(f, x, w, b)[0], x, w, b)
    if thin:
        assert TARGETS["forward"] not in infer and "convolution" in infer
    else:
        assert TARGETS["forward"] in infer and "plain = 1 : i64" in infer and "plain = 0" not in infer
    assert TARGETS["forward"] in train and "plain = 0 : i64" in train and "plain = 1" not in train
    ref = lambda x, w, b: lax_conv(x, w, b, c["stride"], c["pad"], c["dilate"], c["groups"],  # noqa: E731
                                   c["channel_last"])
    got = jax.jit(f)(x, w, b)
    out, vjp = jax.vjp(jax.jit(f), x, w, b)
    want, ref_vjp = jax.vjp(ref, x, w, b)
    close(got, want, f"inference {c}")
    close(got, out, f"inference vs training forward {c}")
    g = jnp.asarray(onp.random.default_rng(22).standard_normal(out.shape), jnp.float32)
    for name, got_g, exp in zip(("data", "weight", "bias"), vjp(g), ref_vjp(g)):
        if exp is not None:
            close(got_g, exp, f"{name} gradient {c}")


def test_inference_threshold_switch(monkeypatch):
    """With the threshold at 0 a thin convolution's inference runs on oneDNN too, same answer."""
    c = dict(batch=2, size=(6, 7), kernel=(3, 3), stride=(1, 1), pad=(1, 1), dilate=(1, 1), groups=1, cin=2, cout=3,
             channel_last=False, bias=True)
    x, w, b = arrays(c, 23)
    on_xla = jax.jit(op_fn(c))(x, w, b)
    monkeypatch.setattr(ops, "INFER_XLA_MAX_CHANNELS", 0)
    text = lowered(op_fn(c), x, w, b)
    assert TARGETS["forward"] in text and "plain = 1 : i64" in text
    on_onednn = jax.jit(op_fn(c))(x, w, b)
    close(on_onednn, on_xla, "oneDNN vs XLA inference")
    close(on_onednn, lax_conv(x, w, b, (1, 1), (1, 1), (1, 1), 1, False), "oneDNN inference vs lax")


class _SmallCNN(mx.gluon.HybridBlock):
    """Both inference paths in one block: a thin first convolution, a wider second one."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2D(40, kernel_size=3, in_channels=1, activation="relu")
        self.pool = nn.MaxPool2D(2)
        self.conv2 = nn.Conv2D(8, kernel_size=3, padding=1, in_channels=40, activation="relu")

    def forward(self, x):
        return self.conv2(self.pool(self.conv1(x)))


def test_hybridized_inference_equals_training():
    net = _SmallCNN()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x_np = onp.random.default_rng(24).standard_normal((4, 1, 12, 12)).astype("float32")
    x = mx.np.array(x_np)
    infer = net(x).asnumpy()
    with autograd.record():
        train = net(x)
    train = train.asnumpy()
    w1, b1, w2, b2 = (jnp.asarray(p.data().asnumpy()) for p in net.collect_params().values())
    h = jax.nn.relu(lax_conv(jnp.asarray(x_np), w1, b1, (1, 1), (0, 0), (1, 1), 1, False))
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    want = jax.nn.relu(lax_conv(h, w2, b2, (1, 1), (1, 1), (1, 1), 1, False))
    close(infer, want, "hybridized inference")
    close(train, want, "hybridized training forward")


def test_plan_cache_bound():
    """With room for two plans, configurations that each need four (three training kinds, one
    inference) keep evicting each other and are rebuilt when called again: answers stay right,
    the cache never holds more than its bound."""
    import mxjax._onednn as onednn

    lib = onednn.library()
    built = lib.mxjax_onednn_plans_built()
    cases = [dict(batch=b, size=(5 + b, 6), kernel=(3, 3), stride=(1, 1), pad=(1, 1), dilate=(1, 1), groups=1,
                  cin=33 + b, cout=2 + b, channel_last=False, bias=b % 2 == 0) for b in range(1, 5)]
    try:
        onednn.set_plan_cache_size(2)
        assert lib.mxjax_onednn_plans_cached() <= 2
        for _ in range(2):
            for i, c in enumerate(cases):
                check_against_lax(c, seed=30 + i)
                x, w, b = arrays(c, 30 + i)
                close(jax.jit(op_fn(c))(x, w, b), lax_conv(x, w, b, (1, 1), (1, 1), (1, 1), 1, False), f"{c}")
                assert lib.mxjax_onednn_plans_cached() <= 2
        assert lib.mxjax_onednn_plans_built() - built >= 2 * 4 * len(cases)  # every pass rebuilt them
    finally:
        onednn.set_plan_cache_size(onednn.PLAN_CACHE_SIZE)
    with pytest.raises(TypeError, match="set_plan_cache_size"):
        onednn.set_plan_cache_size(2.5)


def test_cache_size_from_environment():
    """MXNET_ONEDNN_CACHE_NUM (MXNet's oneDNN cache bound) bounds the plan cache."""
    script = (
        "import jax, jax.numpy as jnp\n"
        "from mxjax._onednn import library\n"
        "from mxjax.operator import get_op\n"
        "conv = get_op('Convolution').compute\n"
        "for n in (4, 5, 6):\n"
        "    f = jax.jit(jax.grad(lambda x, w: conv(x, w, kernel=(3, 3), num_filter=2, no_bias=True).sum()))\n"
        "    f(jnp.ones((1, 40, n, n)), jnp.ones((2, 40, 3, 3)))\n"
        "print(library().mxjax_onednn_plans_cached(), library().mxjax_onednn_plans_built())\n")
    assert _printed(script, MXNET_ONEDNN_CACHE_NUM="3") == ["3", "12"]
    # a value that is no integer: a warning, the default bound, and oneDNN still used
    assert _printed(script, MXNET_ONEDNN_CACHE_NUM="many") == ["12", "12"]


def test_imperative_inference_packs_weights_once(monkeypatch):
    """Imperative convolutions (bulk execution: a repeated segment runs as one program) take
    their weights packed too, once per weight array, and give lax's answer; a changed weight
    (a new array) is packed anew."""
    seen, real = [], packing.pack
    monkeypatch.setattr(packing, "pack", lambda w, flat: seen.append(tuple(w.shape)) or real(w, flat))
    rng = onp.random.default_rng(41)
    x_np = rng.standard_normal((2, 40, 6, 6)).astype("float32")
    w_np = rng.standard_normal((8, 40, 3, 3)).astype("float32")
    x, w = mx.np.array(x_np), mx.np.array(w_np)
    want = lax_conv(jnp.asarray(x_np), jnp.asarray(w_np), None, (1, 1), (1, 1), (1, 1), 1, False)
    before = ops.stats["onednn_packed"]
    for _ in range(5):  # the structure's third sighting on compiles one program
        y = mx.npx.convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
        close((y * 1).asnumpy(), want, "imperative inference")
    assert seen == [(8, 40, 3, 3)] and ops.stats["onednn_packed"] > before
    w = mx.np.array(w_np * 2)  # a new array (a parameter after an update)
    y = mx.npx.convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
    close((y * 1).asnumpy(), onp.asarray(want) * 2, "a new weight")
    assert seen == [(8, 40, 3, 3)] * 2
