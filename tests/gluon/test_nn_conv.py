"""gluon.nn convolution, transposed-convolution and pooling layers against NumPy loops."""
import itertools
import pathlib

import numpy as onp
import pytest
from oracle import check_hybrid as oracle_check_hybrid

import mxjax as mx
from mxjax.gluon import nn

RNG = onp.random.default_rng(0)


def _rand(*shape):
    return RNG.normal(size=shape).astype(onp.float32)


check_hybrid = oracle_check_hybrid


# -------------------------------------------------------------------- NumPy references (channel-first)

def np_conv(x, w, b, stride, pad, dil, groups):
    n, c = x.shape[:2]
    o, k = w.shape[0], w.shape[2:]
    xp = onp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    outs = [(s + 2 * p - d * (kk - 1) - 1) // st + 1 for s, p, d, kk, st in zip(x.shape[2:], pad, dil, k, stride)]
    out = onp.zeros((n, o, *outs), onp.float64)
    cg, og = c // groups, o // groups
    for idx in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(i * d, i * d + st * (m - 1) + 1, st) for i, d, st, m in zip(idx, dil, stride, outs))
        xs = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            out[:, g * og:(g + 1) * og] += onp.einsum("nc...,oc->no...", xs[:, g * cg:(g + 1) * cg],
                                                     w[(slice(g * og, (g + 1) * og), slice(None)) + idx])
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(k))
    return out


def np_deconv(x, w, b, stride, pad, dil, adj, groups):
    n, c = x.shape[:2]
    og, k = w.shape[1], w.shape[2:]
    full = [st * (s - 1) + d * (kk - 1) + 1 + a for s, st, d, kk, a in zip(x.shape[2:], stride, dil, k, adj)]
    out = onp.zeros((n, og * groups, *full), onp.float64)
    cg = c // groups
    for idx in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(i * d, i * d + st * (s - 1) + 1, st) for i, d, st, s in zip(idx, dil, stride, x.shape[2:]))
        for g in range(groups):
            out[(slice(None), slice(g * og, (g + 1) * og)) + sl] += onp.einsum(
                "nc...,co->no...", x[:, g * cg:(g + 1) * cg], w[(slice(g * cg, (g + 1) * cg), slice(None)) + idx])
    out = out[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(pad, full))]
    if b is not None:
        out += b.reshape((1, -1) + (1,) * len(k))
    return out


def np_pool(x, kernel, stride, pad, kind, ceil_mode=False, count_include_pad=True):
    sizes = x.shape[2:]
    if ceil_mode:
        outs = [-(-(s + 2 * p - k) // st) + 1 for s, p, k, st in zip(sizes, pad, kernel, stride)]
    else:
        outs = [(s + 2 * p - k) // st + 1 for s, p, k, st in zip(sizes, pad, kernel, stride)]
    out = onp.zeros(x.shape[:2] + tuple(outs))
    for pos in itertools.product(*[range(o) for o in outs]):
        lo = [i * st - p for i, st, p in zip(pos, stride, pad)]
        hi = [min(l + k, s + p) for l, k, s, p in zip(lo, kernel, sizes, pad)]   # clipped to padded input
        inside = tuple(slice(max(l, 0), min(h, s)) for l, h, s in zip(lo, hi, sizes))
        window = x[(slice(None), slice(None)) + inside]
        if kind == "max":
            val = window.max(axis=tuple(range(2, x.ndim)))
        else:
            count = onp.prod([h - l for l, h in zip(lo, hi)]) if count_include_pad else window[0, 0].size
            val = window.sum(axis=tuple(range(2, x.ndim))) / count
        out[(slice(None), slice(None)) + pos] = val
    return out


CONV_CASES = [  # (layer, kwargs, input shape)
    (nn.Conv1D, dict(channels=4, kernel_size=3), (2, 3, 7)),
    (nn.Conv1D, dict(channels=4, kernel_size=3, strides=2, padding=1, dilation=2, groups=2, activation="relu"),
     (2, 2, 9)),
    (nn.Conv2D, dict(channels=4, kernel_size=(3, 2), strides=(2, 1), padding=(1, 0)), (2, 3, 6, 5)),
    (nn.Conv2D, dict(channels=6, kernel_size=3, padding=1, groups=3, use_bias=False), (1, 3, 5, 5)),
    (nn.Conv3D, dict(channels=2, kernel_size=2, strides=1, padding=(1, 0, 0)), (1, 2, 3, 4, 3)),
]


@pytest.mark.parametrize("layer, kwargs, shape", CONV_CASES)
def test_conv_matches_numpy_and_hybrid(layer, kwargs, shape):
    block = layer(**kwargs)
    block.initialize()
    x = _rand(*shape)
    out = check_hybrid(block, x)
    n = len(shape) - 2
    tup = lambda v, d: (v,) * n if isinstance(v, int) else v  # noqa: E731
    b = block.bias.data().asnumpy() if block.bias is not None else None
    want = np_conv(x, block.weight.data().asnumpy(), b, tup(kwargs.get("strides", 1), 1),
                   tup(kwargs.get("padding", 0), 0), tup(kwargs.get("dilation", 1), 1), kwargs.get("groups", 1))
    if kwargs.get("activation") == "relu":
        want = onp.maximum(want, 0)
    assert out.shape == want.shape and out.dtype == onp.float32
    onp.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


DECONV_CASES = [
    (nn.Conv1DTranspose, dict(channels=3, kernel_size=3, strides=2, padding=1, output_padding=1), (2, 2, 4)),
    (nn.Conv2DTranspose, dict(channels=4, kernel_size=(2, 3), strides=(2, 1), padding=(0, 1), groups=2),
     (1, 2, 3, 3)),
    (nn.Conv2DTranspose, dict(channels=2, kernel_size=3, dilation=2, use_bias=False), (1, 3, 2, 3)),
    (nn.Conv3DTranspose, dict(channels=2, kernel_size=2, strides=2), (1, 2, 2, 2, 2)),
]


@pytest.mark.parametrize("layer, kwargs, shape", DECONV_CASES)
def test_conv_transpose_matches_numpy_and_hybrid(layer, kwargs, shape):
    block = layer(**kwargs)
    block.initialize()
    x = _rand(*shape)
    out = check_hybrid(block, x)
    n = len(shape) - 2
    tup = lambda v: (v,) * n if isinstance(v, int) else v  # noqa: E731
    b = block.bias.data().asnumpy() if block.bias is not None else None
    want = np_deconv(x, block.weight.data().asnumpy(), b, tup(kwargs.get("strides", 1)),
                     tup(kwargs.get("padding", 0)), tup(kwargs.get("dilation", 1)),
                     tup(kwargs.get("output_padding", 0)), kwargs.get("groups", 1))
    assert out.shape == want.shape
    onp.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_conv_deferred_shapes_and_layouts():
    conv = nn.Conv2D(5, 3, groups=1)
    assert conv.weight.shape == (5, -1, 3, 3)
    conv.initialize()
    conv(mx.np.ones((1, 4, 5, 5)))
    assert conv.weight.shape == (5, 4, 3, 3) and conv.bias.shape == (5,)
    tconv = nn.Conv2DTranspose(6, 2, groups=2)
    tconv.initialize()
    assert tconv(mx.np.ones((1, 4, 3, 3))).shape == (1, 6, 4, 4)
    assert tconv.weight.shape == (4, 3, 2, 2)
    given = nn.Conv1D(2, 3, in_channels=4)
    assert given.weight.shape == (2, 4, 3)
    nwc = nn.Conv1D(3, 2, layout="NWC")
    nwc.initialize()
    x = _rand(2, 5, 4)
    out = nwc(mx.np.array(x)).asnumpy()
    assert nwc.weight.shape == (3, 2, 4)
    w = nwc.weight.data().asnumpy().transpose(0, 2, 1)
    want = np_conv(x.transpose(0, 2, 1), w, nwc.bias.data().asnumpy(), (1,), (0,), (1,), 1).transpose(0, 2, 1)
    onp.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_conv_bad_input_names_layer_and_shapes():
    conv = nn.Conv2D(4, 3)
    conv.initialize()
    conv(mx.np.ones((1, 3, 5, 5)))
    with pytest.raises(mx.MXNetError, match=r"Conv2D: input of shape \(1, 3, 5\) must be 4-D"):
        conv(mx.np.ones((1, 3, 5)))
    with pytest.raises(mx.MXNetError, match=r"Convolution.*weight"):
        conv(mx.np.ones((1, 2, 5, 5)))   # channels differ from the inferred weight
    with pytest.raises(mx.MXNetError, match="layout must be one of"):
        nn.Conv2D(4, 3, layout="NCW")
    with pytest.raises(mx.MXNetError, match="kernel_size must be"):
        nn.Conv2D(4, (3, 3, 3))
    grouped = nn.Conv2D(4, 3, groups=2)
    grouped.initialize()
    with pytest.raises(mx.MXNetError, match="groups=2 does not divide the 3 input channels"):
        grouped(mx.np.ones((1, 3, 5, 5)))


POOL_CASES = [  # (layer, kwargs, input shape, kind, reference kwargs)
    (nn.MaxPool1D, dict(), (2, 3, 7), "max", dict(kernel=(2,), stride=(2,), pad=(0,))),
    (nn.MaxPool2D, dict(pool_size=3, strides=2, padding=1), (1, 2, 6, 5), "max",
     dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    (nn.MaxPool2D, dict(pool_size=2, strides=2, ceil_mode=True), (1, 2, 5, 5), "max",
     dict(kernel=(2, 2), stride=(2, 2), pad=(0, 0), ceil_mode=True)),
    (nn.MaxPool3D, dict(pool_size=(2, 2, 1)), (1, 2, 4, 4, 3), "max",
     dict(kernel=(2, 2, 1), stride=(2, 2, 1), pad=(0, 0, 0))),
    (nn.AvgPool1D, dict(pool_size=3, strides=1, padding=1), (2, 2, 5), "avg",
     dict(kernel=(3,), stride=(1,), pad=(1,))),
    (nn.AvgPool2D, dict(pool_size=3, strides=2, padding=1, count_include_pad=False), (1, 2, 5, 6), "avg",
     dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), count_include_pad=False)),
    (nn.AvgPool3D, dict(pool_size=2), (1, 1, 4, 4, 4), "avg", dict(kernel=(2, 2, 2), stride=(2, 2, 2), pad=(0, 0, 0))),
]


@pytest.mark.parametrize("layer, kwargs, shape, kind, ref", POOL_CASES)
def test_pooling_matches_numpy_and_hybrid(layer, kwargs, shape, kind, ref):
    x = _rand(*shape)
    out = check_hybrid(layer(**kwargs), x)
    want = np_pool(x, kind=kind, **ref)
    assert out.shape == want.shape and out.dtype == onp.float32
    onp.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layer, reduce", [
    (nn.GlobalMaxPool1D, onp.max), (nn.GlobalMaxPool2D, onp.max), (nn.GlobalMaxPool3D, onp.max),
    (nn.GlobalAvgPool1D, onp.mean), (nn.GlobalAvgPool2D, onp.mean), (nn.GlobalAvgPool3D, onp.mean)])
def test_global_pooling(layer, reduce):
    n = int(layer.__name__[-2])
    x = _rand(2, 3, *[4 - i for i in range(n)])
    out = check_hybrid(layer(), x)
    want = reduce(x, axis=tuple(range(2, x.ndim)), keepdims=True)
    assert out.shape == (2, 3) + (1,) * n
    onp.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_pool_layout_and_errors():
    x = _rand(1, 4, 4, 2)
    out = nn.MaxPool2D(layout="NHWC")(mx.np.array(x)).asnumpy()
    want = np_pool(x.transpose(0, 3, 1, 2), (2, 2), (2, 2), (0, 0), "max").transpose(0, 2, 3, 1)
    onp.testing.assert_allclose(out, want)
    assert nn.MaxPool2D(3).__repr__().startswith("MaxPool2D(size=(3, 3), stride=(3, 3)")
    with pytest.raises(mx.MXNetError, match=r"MaxPool2D: input of shape \(2, 3\) must be 4-D"):
        nn.MaxPool2D()(mx.np.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match="Pooling.*kernel size"):
        nn.AvgPool1D(pool_size=5)(mx.np.ones((1, 1, 3)))


def test_reflection_pad_2d_matches_mxnet20_and_numpy():
    path = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gluon_api"
    ref = onp.load(path / "block_api_mxnet20.npz")
    x = ref["bnr_x"]
    onp.testing.assert_allclose(nn.ReflectionPad2D(2)(mx.np.array(x)).asnumpy(), ref["pad_out"])
    block = nn.ReflectionPad2D((0, 0, 0, 0, 1, 2, 0, 3))
    want = onp.pad(x, ((0, 0), (0, 0), (1, 2), (0, 3)), mode="reflect")
    onp.testing.assert_allclose(check_hybrid(block, x), want)
    with pytest.raises(ValueError, match="ReflectionPad2D: padding must be an int or 8 ints"):
        nn.ReflectionPad2D((1, 1, 0, 0, 1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"ReflectionPad2D: input of shape \(3, 4\) must be 4-D"):
        nn.ReflectionPad2D(1)(mx.np.ones((3, 4)))
