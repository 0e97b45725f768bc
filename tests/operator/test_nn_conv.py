"""FullyConnected, Convolution, Deconvolution, Pooling, UpSampling and BilinearResize2D against
NumPy loop references written with MXNet's shape and padding rules."""
import functools
import itertools
import math

import numpy as onp
import pytest
from oracle import check, run_op

import mxjax as mx
import mxjax.numpy_extension as npx
from mxjax._ndarray import invoke
from mxjax.operator import get_op

_run = run_op
_check = functools.partial(check, rtol=0.0001, atol=1e-05)
RNG = onp.random.default_rng(1)


def _x(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _a(x):
    return mx.np.array(x)


# ----------------------------------------------------------------------------- references

def conv_ref(x, w, stride, pad, dilate, groups):
    nd = x.ndim - 2
    xp = onp.pad(x.astype(onp.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    o, k = w.shape[0], w.shape[2:]
    sizes = [(xp.shape[2 + i] - dilate[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    out = onp.zeros((x.shape[0], o, *sizes))
    cg, og = x.shape[1] // groups, o // groups
    for pos in itertools.product(*map(range, sizes)):
        window = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dilate[i] * (k[i] - 1) + 1, dilate[i])
                       for i in range(nd))
        patch = xp[(slice(None), slice(None)) + window]
        for g in range(groups):
            axes = list(range(1, nd + 2))
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = onp.tensordot(
                patch[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], axes=(axes, axes))
    return out


def deconv_ref(x, w, stride, pad, dilate, adj, groups):
    """Scatter-add form of transposed convolution, cropped by pad (MXNet's weight (C, O/g, *k))."""
    nd = x.ndim - 2
    c, og, k = w.shape[0], w.shape[1], w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + dilate[i] * (k[i] - 1) + 1 + adj[i] for i in range(nd)]
    buf = onp.zeros((x.shape[0], og * groups, *full))
    cg = c // groups
    for pos in itertools.product(*map(range, x.shape[2:])):
        for g in range(groups):
            contrib = onp.einsum("nc,co...->no...", x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos],
                                 w[g * cg:(g + 1) * cg].astype(onp.float64))
            window = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + dilate[i] * (k[i] - 1) + 1, dilate[i])
                           for i in range(nd))
            buf[(slice(None), slice(g * og, (g + 1) * og)) + window] += contrib
    return buf[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(pad, full))]


def pool_ref(x, kernel, stride, pad, pool_type, convention="valid", count_include_pad=True, p_value=None):
    """MXNet's pool.h: windows start at o*s - p; avg divides by the window clipped to the padded input."""
    sizes = x.shape[2:]
    if convention == "valid":
        outs = [1 + (n + 2 * p - k) // s for n, k, p, s in zip(sizes, kernel, pad, stride)]
    elif convention == "full":
        outs = [1 + math.ceil((n + 2 * p - k) / s) for n, k, p, s in zip(sizes, kernel, pad, stride)]
    else:
        outs = [math.ceil(n / s) for n, s in zip(sizes, stride)]
    out = onp.zeros(x.shape[:2] + tuple(outs))
    for pos in itertools.product(*map(range, outs)):
        starts = [o * s - p for o, s, p in zip(pos, stride, pad)]
        ends = [min(st + k, n + p) for st, k, n, p in zip(starts, kernel, sizes, pad)]
        window = tuple(slice(max(st, 0), min(e, n)) for st, e, n in zip(starts, ends, sizes))
        patch = x[(slice(None), slice(None)) + window].astype(onp.float64).reshape(x.shape[:2] + (-1,))
        if pool_type == "max":
            value = patch.max(-1)
        elif pool_type == "lp":
            value = onp.sum(patch ** p_value, -1) ** (1.0 / p_value)
        else:
            value = patch.sum(-1)
            if pool_type == "avg":
                count = math.prod(e - st for st, e in zip(starts, ends)) if count_include_pad else patch.shape[-1]
                value = value / count
        out[(slice(None), slice(None)) + pos] = value
    return out


# ----------------------------------------------------------------------------- FullyConnected

def test_fully_connected():
    x, w, b = _x(2, 3, 4), _x(5, 12), _x(5)
    want = x.reshape(2, -1).astype(onp.float64) @ w.T + b
    _check(npx.fully_connected(_a(x), _a(w), _a(b), num_hidden=5, no_bias=False), want)
    _check(_run("FullyConnected", [x, w, b], num_hidden=5), want)  # legacy default no_bias=False
    # npx's default no_bias=True ignores the bias, as MXNet 2 does
    _check(npx.fully_connected(_a(x), _a(w), _a(b), num_hidden=5), want - b)
    w2 = _x(5, 4)
    _check(npx.fully_connected(_a(x), _a(w2), _a(b), num_hidden=5, no_bias=False, flatten=False),
           x.astype(onp.float64) @ w2.T + b)
    _check(npx.fully_connected(_a(onp.arange(12).reshape(3, 4)), _a(w2), num_hidden=5),
           onp.arange(12).reshape(3, 4) @ w2.T.astype(onp.float64))  # integer data: float32 out


def test_fully_connected_errors():
    x = _a(_x(2, 6))
    with pytest.raises(ValueError, match=r"FullyConnected: weight has shape \(5, 4\) but \(5, 6\) is expected"):
        npx.fully_connected(x, _a(_x(5, 4)), num_hidden=5)
    with pytest.raises(ValueError, match=r"FullyConnected: weight has shape \(5, 6\) but \(3, 6\)"):
        npx.fully_connected(x, _a(_x(5, 6)), num_hidden=3)
    with pytest.raises(ValueError, match="FullyConnected: no_bias=False needs a bias input"):
        _run("FullyConnected", [_x(2, 6), _x(5, 6)], num_hidden=5)
    with pytest.raises(ValueError, match=r"FullyConnected: bias has shape \(4,\) but \(5,\)"):
        npx.fully_connected(x, _a(_x(5, 6)), _a(_x(4)), num_hidden=5, no_bias=False)


# ----------------------------------------------------------------------------- Convolution

CONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, groups
    ((2, 3, 7), 4, (3,), (2,), (1,), (1,), 1),
    ((1, 4, 6, 5), 6, (3, 2), (1, 2), (1, 0), (1, 1), 2),
    ((2, 2, 7, 7), 3, (3, 3), (2, 2), (2, 1), (2, 1), 1),
    ((1, 2, 4, 5, 4), 2, (2, 3, 2), (1, 1, 2), (0, 1, 1), (1, 1, 1), 1),
]


@pytest.mark.parametrize("shape,nf,kernel,stride,pad,dilate,groups", CONV_CASES)
def test_convolution(shape, nf, kernel, stride, pad, dilate, groups):
    x, w, b = _x(*shape), _x(nf, shape[1] // groups, *kernel), _x(nf)
    want = conv_ref(x, w, stride, pad, dilate, groups) + b.reshape((1, -1) + (1,) * len(kernel))
    got = npx.convolution(_a(x), _a(w), _a(b), kernel=kernel, stride=stride, pad=pad, dilate=dilate,
                          num_filter=nf, num_group=groups)
    _check(got, want)


def test_convolution_channel_last_and_json_attrs():
    x, w = _x(2, 6, 5, 3), _x(4, 3, 3, 3)  # NHWC data, OHWI weight
    want = conv_ref(x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), (1, 1), (1, 1), (1, 1), 1)
    got = npx.convolution(_a(x), _a(w), kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True, layout="NHWC")
    _check(got, want.transpose(0, 2, 3, 1))
    op = get_op("Convolution")
    params = op.decode_params({"kernel": "(3, 3)", "num_filter": "4", "no_bias": "True", "pad": "(1, 1)",
                               "stride": "(1, 1)", "dilate": "(1, 1)", "num_group": "1", "workspace": "1024",
                               "cudnn_tune": "None", "layout": "None"})
    assert params["kernel"] == (3, 3) and params["no_bias"] is True and params["layout"] is None
    xc, wc = x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2)
    _check(invoke(op, [_a(xc), _a(wc)], params, mx.np.ndarray), want)
    assert op.encode_params({"kernel": (3, 3), "no_bias": False}) == {"kernel": "(3, 3)", "no_bias": "False"}


def test_convolution_errors():
    x = _a(_x(2, 3, 5, 5))
    with pytest.raises(ValueError, match=r"Convolution: weight has shape \(4, 2, 3, 3\) but \(4, 3, 3, 3\) "
                                         r"is expected \(data \(2, 3, 5, 5\) NCHW"):
        npx.convolution(x, _a(_x(4, 2, 3, 3)), kernel=(3, 3), num_filter=4, no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: data of shape \(2, 3, 5, 5\) must be 5-D"):
        npx.convolution(x, _a(_x(4, 3, 3, 3, 3)), kernel=(3, 3, 3), num_filter=4, no_bias=True)
    with pytest.raises(ValueError, match=r"Convolution: num_group=2 must divide both the input channels \(3\)"):
        npx.convolution(x, _a(_x(4, 1, 3, 3)), kernel=(3, 3), num_filter=4, num_group=2, no_bias=True)
    with pytest.raises(ValueError, match="Convolution: no_bias=False needs a bias input"):
        npx.convolution(x, _a(_x(4, 3, 3, 3)), kernel=(3, 3), num_filter=4)
    with pytest.raises(ValueError, match="Convolution: kernel is required"):
        npx.convolution(x, _a(_x(4, 3, 3, 3)), num_filter=4, no_bias=True)
    with pytest.raises(ValueError, match="Convolution: dilated kernel 7 on spatial axis 0 exceeds"):
        npx.convolution(x, _a(_x(4, 3, 7, 1)), kernel=(7, 1), num_filter=4, no_bias=True)
    with pytest.raises(ValueError, match="Convolution: layout 'NCW' does not fit a 2-D input"):
        npx.convolution(x, _a(_x(4, 3, 3, 3)), kernel=(3, 3), num_filter=4, no_bias=True, layout="NCW")


# ----------------------------------------------------------------------------- Deconvolution

DECONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, adj, groups
    ((2, 3, 4), 2, (3,), (2,), (1,), (1,), (1,), 1),
    ((1, 4, 3, 4), 6, (3, 2), (2, 1), (1, 0), (1, 1), (0, 0), 2),
    ((1, 2, 3, 3), 3, (2, 3), (3, 2), (0, 1), (2, 1), (2, 1), 1),
    ((1, 2, 2, 3, 2), 2, (2, 2, 3), (2, 1, 2), (1, 0, 1), (1, 1, 1), (1, 0, 0), 1),
]


@pytest.mark.parametrize("shape,nf,kernel,stride,pad,dilate,adj,groups", DECONV_CASES)
def test_deconvolution(shape, nf, kernel, stride, pad, dilate, adj, groups):
    x, w, b = _x(*shape), _x(shape[1], nf // groups, *kernel), _x(nf)
    want = deconv_ref(x, w, stride, pad, dilate, adj, groups) + b.reshape((1, -1) + (1,) * len(kernel))
    # MXNet's output size: stride*(in-1) + dilate*(k-1) + 1 - 2*pad + adj
    sizes = [s * (n - 1) + d * (k - 1) + 1 - 2 * p + a
             for n, k, s, p, d, a in zip(shape[2:], kernel, stride, pad, dilate, adj)]
    assert list(want.shape[2:]) == sizes
    got = npx.deconvolution(_a(x), _a(w), _a(b), kernel=kernel, stride=stride, pad=pad, dilate=dilate, adj=adj,
                            num_filter=nf, num_group=groups)
    _check(got, want)


def test_deconvolution_target_shape_and_legacy_default():
    x, w = _x(1, 2, 4, 4), _x(2, 3, 4, 4)
    got = _run("Deconvolution", [x, w], kernel=(4, 4), stride=(2, 2), num_filter=3, target_shape=(8, 9))
    # InferPad: total = s*(in-1) + k - target -> pad = ceil(total/2), adj = total % 2
    want = deconv_ref(x, w, (2, 2), (1, 1), (1, 1), (0, 1), 1)
    _check(got, want)
    with pytest.raises(ValueError, match=r"Deconvolution: target_shape \(20, 20\) is too big"):
        _run("Deconvolution", [x, w], kernel=(4, 4), stride=(2, 2), num_filter=3, target_shape=(20, 20))


def test_deconvolution_errors():
    x = _a(_x(1, 2, 4, 4))
    with pytest.raises(ValueError, match=r"Deconvolution: weight has shape \(3, 2, 3, 3\) but \(2, 3, 3, 3\)"):
        npx.deconvolution(x, _a(_x(3, 2, 3, 3)), kernel=(3, 3), num_filter=3, no_bias=True)
    with pytest.raises(ValueError, match="Deconvolution: no_bias=False needs a bias input"):
        npx.deconvolution(x, _a(_x(2, 3, 3, 3)), kernel=(3, 3), num_filter=3)


# ----------------------------------------------------------------------------- Pooling

POOL_CASES = [
    # data shape, kernel, stride, pad, pool_type, convention, count_include_pad, p_value
    ((2, 3, 6, 7), (2, 3), (2, 2), (0, 1), "max", "valid", None, None),
    ((1, 2, 5, 5), (3, 3), (2, 2), (1, 1), "avg", "full", None, None),
    ((1, 2, 5, 5), (3, 3), (2, 2), (1, 1), "avg", "full", False, None),
    ((1, 2, 6, 5), (2, 2), (2, 2), (1, 0), "avg", "valid", True, None),
    ((1, 2, 5, 4), (2, 2), (1, 2), (0, 0), "sum", "valid", None, None),
    ((1, 2, 5, 4), (2, 2), (2, 2), (0, 0), "lp", "full", None, 2),
    ((1, 2, 5, 4), (3, 2), (1, 1), (1, 0), "lp", "valid", None, 1),
    ((2, 3, 7), (3,), (2,), (0,), "max", "same", None, None),
    ((1, 2, 4, 5, 3), (2, 3, 2), (2, 1, 1), (0, 1, 0), "max", "valid", None, None),
]


@pytest.mark.parametrize("shape,kernel,stride,pad,pool_type,conv,cip,p_value", POOL_CASES)
def test_pooling(shape, kernel, stride, pad, pool_type, conv, cip, p_value):
    x = _x(*shape)
    want = pool_ref(x, kernel, stride, pad, pool_type, conv, cip is not False, p_value)
    got = npx.pooling(_a(x), kernel=kernel, stride=stride, pad=pad, pool_type=pool_type,
                      pooling_convention=conv, count_include_pad=cip, p_value=p_value)
    _check(got, want)


def test_pooling_global_layouts_and_ints():
    x = _x(2, 3, 4, 5)
    _check(npx.pooling(_a(x), pool_type="avg", global_pool=True), x.mean((2, 3), keepdims=True))
    _check(npx.pooling(_a(x), kernel=(2, 2), pool_type="max", global_pool=True), x.max((2, 3), keepdims=True))
    nhwc = x.transpose(0, 2, 3, 1)
    got = npx.pooling(_a(nhwc), kernel=(2, 2), stride=(2, 2), pool_type="avg", layout="NHWC")
    _check(got, pool_ref(x, (2, 2), (2, 2), (0, 0), "avg").transpose(0, 2, 3, 1))
    ints = onp.arange(24, dtype="int32").reshape(1, 2, 3, 4)
    _check(npx.pooling(_a(ints), kernel=(2, 2), pool_type="max"), pool_ref(ints, (2, 2), (1, 1), (0, 0), "max"),
           dtype="int32")
    _check(npx.pooling(_a(ints), kernel=(2, 2), pool_type="avg"), pool_ref(ints, (2, 2), (1, 1), (0, 0), "avg"))


def test_pooling_errors():
    x = _a(_x(1, 2, 4, 4))
    with pytest.raises(ValueError, match=r"Pooling: kernel size \(5\) exceeds input \(4 padded to 4\)"):
        npx.pooling(x, kernel=(5, 2))
    with pytest.raises(ValueError, match="Pooling: pool_type='lp' needs p_value 1, 2 or 3"):
        npx.pooling(x, kernel=(2, 2), pool_type="lp")
    with pytest.raises(ValueError, match="Pooling: pool_type='median' is not supported"):
        npx.pooling(x, kernel=(2, 2), pool_type="median")
    with pytest.raises(ValueError, match=r"Pooling: kernel \(2,\) must have 2 entries"):
        npx.pooling(x, kernel=(2,))
    with pytest.raises(ValueError, match="Pooling: pooling_convention='same' supports 1-D pooling"):
        npx.pooling(x, kernel=(2, 2), pooling_convention="same")
    with pytest.raises(ValueError, match=r"Pooling: data of shape \(2, 2\) must be 3-D"):
        npx.pooling(_a(_x(2, 2)), kernel=(2,))


# ----------------------------------------------------------------------------- resizing

def test_upsampling_nearest_and_bilinear():
    a, b = _x(1, 2, 2, 3), _x(1, 1, 4, 6)
    up = a.repeat(2, axis=2).repeat(2, axis=3)
    _check(_run("UpSampling", [a], scale=2), up)
    _check(_run("UpSampling", [a, b], scale=2, num_args=2), onp.concatenate([up, b], axis=1))
    _check(_run("UpSampling", [a, b[:, :1].repeat(2, 1)], scale=2, num_args=2, multi_input_mode="sum"),
           up + b.repeat(2, 1))
    # bilinear = grouped deconvolution with kernel 2s - s%2, stride s, pad ceil((s-1)/2)
    w = _x(2, 1, 4, 4)
    _check(_run("UpSampling", [a, w], scale=2, sample_type="bilinear", num_filter=2, num_args=2),
           deconv_ref(a, w, (2, 2), (1, 1), (1, 1), (0, 0), 2))
    with pytest.raises(ValueError, match=r"UpSampling: input \(1, 1, 3, 6\) cannot be upsampled"):
        _run("UpSampling", [a, _x(1, 1, 3, 6)], scale=2, num_args=2)
    with pytest.raises(ValueError, match=r"UpSampling: weight has shape \(2, 1, 3, 3\) but \(2, 1, 4, 4\)"):
        _run("UpSampling", [a, _x(2, 1, 3, 3)], scale=2, sample_type="bilinear", num_filter=2)


def _resize_ref(x, out_h, out_w, align_corners):
    def coords(n_in, n_out):
        if align_corners:
            scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
            src = onp.arange(n_out) * scale
        else:
            src = onp.maximum((onp.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0)
        i0 = onp.minimum(onp.floor(src).astype(int), n_in - 1)
        return i0, onp.minimum(i0 + 1, n_in - 1), src - i0

    h0, h1, fh = coords(x.shape[2], out_h)
    w0, w1, fw = coords(x.shape[3], out_w)
    rows = x[:, :, h0] * (1 - fh)[:, None] + x[:, :, h1] * fh[:, None]
    return rows[..., w0] * (1 - fw) + rows[..., w1] * fw


@pytest.mark.parametrize("align_corners", [True, False])
def test_bilinear_resize(align_corners):
    x = _x(1, 2, 3, 4)
    _check(_run("BilinearResize2D", [x], height=5, width=7, align_corners=align_corners),
           _resize_ref(x.astype(onp.float64), 5, 7, align_corners))
    got = _run("_contrib_BilinearResize2D", [x], scale_height=2.0, scale_width=1.5, align_corners=align_corners)
    _check(got, _resize_ref(x.astype(onp.float64), 6, 6, align_corners))


def test_bilinear_resize_modes():
    x = _x(1, 1, 3, 4)
    assert _run("BilinearResize2D", [x, _x(1, 1, 2, 2)], mode="like").shape == (1, 1, 2, 2)
    assert _run("BilinearResize2D", [x], mode="to_even_up").shape == (1, 1, 4, 4)
    assert _run("BilinearResize2D", [x], mode="to_even_down").shape == (1, 1, 2, 4)
    assert _run("BilinearResize2D", [x], mode="to_odd_up").shape == (1, 1, 3, 5)
    assert _run("BilinearResize2D", [x], mode="to_odd_down").shape == (1, 1, 3, 3)
    assert _run("BilinearResize2D", [x], mode="odd_scale", scale_height=2.0, scale_width=2.0).shape == (1, 1, 5, 8)
    with pytest.raises(ValueError, match="BilinearResize2D: mode='like' needs a 4-D second input"):
        _run("BilinearResize2D", [x], mode="like")
    with pytest.raises(ValueError, match=r"BilinearResize2D: data of shape \(3, 4\) must be 4-D NCHW"):
        _run("BilinearResize2D", [_x(3, 4)], height=2, width=2)
