"""Quantization and intgemm ops against outputs written by MXNet 2.0's CPU (oneDNN) build
(tests/fixtures/quantization, from tools/make_quantization_fixtures.py): integer outputs and ranges
must be equal, float outputs within float32 rounding.  Every case runs through the front end MXNet
used (``mx.nd.contrib``, ``mx.nd`` or ``mx.npx``)."""
import json
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "quantization"
CASES = sorted(p.stem for p in FIXTURES.glob("*.npz") if p.stem != "intgemm_chain")


def _load(name):
    data = onp.load(FIXTURES / f"{name}.npz")
    params = json.loads(str(data["params"]))
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in params["kwargs"].items()}
    inputs = {k: data[f"in_{k}"] for k in params["inputs"]}
    outs = [data[f"out_{i}"] for i in range(sum(k.startswith("out_") for k in data.files))]
    return params["ns"], params["op"], inputs, kwargs, outs


def _call(ns, op, inputs, kwargs):
    if ns == "npx":
        arrays = {k: mx.np.array(v, dtype=v.dtype) for k, v in inputs.items()}
        return getattr(mx.npx, op)(**arrays, **kwargs)
    module = mx.nd.contrib if ns == "nd.contrib" else mx.nd
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in inputs.items()}
    if op == "quantized_concat":
        return module.quantized_concat(*arrays.values(), **kwargs)
    return getattr(module, op)(**arrays, **kwargs)


def test_fixtures_present():
    assert len(CASES) >= 60
    assert sum(p.stat().st_size for p in FIXTURES.glob("*.npz")) < 300_000


# The reference CPU has no VNNI: oneDNN's int8 GEMM there sums pairs of u8 x s8 products in int16
# with saturation (s8 data shifted by +128 and compensated).  mxjax computes the exact product (what
# VNNI/AVX-512 CPUs give); these cases check that the fixture is exactly that saturating model of
# mxjax's inputs, so the only difference is the reference machine's kernel.
SATURATING = {"fc_int8", "fc_uint8", "fc_noflatten", "fc_npx"}
# float32 rounding order inside oneDNN's fused kernels: the int32 sum of quantized_elemwise_add may differ
# by a float32 ulp of its terms, and requantized int8/uint8 results by one step in a few elements
ONE_STEP = {"add_calib_pos", "batch_norm", "batch_norm_fix_gamma", "batch_norm_gamma"}
ONE_ULP = {"add_int8", "add_npx"}


def _saturating_dot(x, w):
    shift = 128 if x.dtype == onp.int8 else 0
    x, w = x.astype(onp.int64) + shift, w.astype(onp.int64)
    acc = 0
    for j in range(0, x.shape[-1], 2):
        acc = acc + onp.clip(x[..., j:j + 2] @ w[:, j:j + 2].T, -32768, 32767)
    return acc - shift * w.sum(1)


# the functions the fixtures call, by namespace: every quantization function of both namespaces
FIXTURE_FUNCTIONS = {
    "nd": {"quantized_reshape", "quantized_transpose"},
    "nd.contrib": {"calibrate_entropy", "dequantize", "intgemm_maxabsolute", "intgemm_prepare_data", "quantize",
                   "quantize_v2", "quantized_act", "quantized_batch_norm", "quantized_concat", "quantized_conv",
                   "quantized_elemwise_add", "quantized_elemwise_mul", "quantized_embedding", "quantized_flatten",
                   "quantized_fully_connected", "quantized_pooling", "quantized_reshape", "quantized_transpose",
                   "requantize"},
    "npx": {"contrib_calibrate_entropy", "contrib_quantize", "contrib_quantize_v2", "intgemm_maxabsolute",
            "intgemm_prepare_data", "quantized_act", "quantized_conv", "quantized_elemwise_add",
            "quantized_elemwise_mul", "quantized_embedding", "quantized_flatten", "quantized_fully_connected",
            "quantized_pooling", "quantized_reshape", "quantized_transpose", "requantize"},
}


def test_fixtures_cover_every_function():
    covered = {}
    for name in CASES:
        ns, op = _load(name)[:2]
        covered.setdefault(ns, set()).add(op)
    assert covered == FIXTURE_FUNCTIONS


@pytest.mark.parametrize("name", CASES)
def test_values_match_mxnet(name):
    if name == "add_uint8_int8":
        pytest.xfail("MXNet 2.0.0b1's CPU sum of uint8 and int8 without a calibrated range gives values its "
                     "source's scales do not explain; mxjax follows the source")
    ns, op, inputs, kwargs, outs = _load(name)
    got = _call(ns, op, inputs, kwargs)
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(outs)
    for i, (g, want) in enumerate(zip(got, outs)):
        g = g.asnumpy()
        assert g.shape == want.shape and g.dtype == want.dtype, (g.shape, g.dtype, want.shape, want.dtype)
        if i == 0 and name in SATURATING:
            x = inputs["data"] if kwargs.get("flatten") is False else inputs["data"].reshape(len(want), -1)
            exact = x.astype(onp.int64) @ inputs["weight"].T.astype(onp.int64)
            bias = g.astype(onp.int64) - exact  # mxjax's rescaled bias (zero without one)
            onp.testing.assert_array_equal(_saturating_dot(x, inputs["weight"]) + bias, want)
            assert "bias" not in inputs or not (bias == 0).all()
        elif i == 0 and name in ONE_STEP:
            assert onp.abs(g.astype(onp.int64) - want).max() <= 1
            assert (g == want).mean() > 0.75
        elif i == 0 and name in ONE_ULP:
            # one float32 ulp of the summed terms, which reach 2**31
            onp.testing.assert_allclose(g.astype(onp.float64), want, rtol=0, atol=2.0 ** 31 * 2.0 ** -23)
        elif want.dtype.kind in "iu" or op in ("quantize", "quantize_v2", "contrib_quantize", "contrib_quantize_v2",
                                               "requantize"):
            onp.testing.assert_array_equal(g, want)
        elif "calibrate" in op:  # the threshold is an edge of the histogram; the divergence a float sum
            onp.testing.assert_allclose(g, want, rtol=1e-4)
        else:
            onp.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-7)


def _intgemm_chain():
    return onp.load(FIXTURES / "intgemm_chain.npz")


def test_intgemm_chain_matches_mxnet():
    """The prepared weight's layout is CPU-specific (MXNet says opaque): compare what the fully
    connected op makes of it, for float and int8 data, int32 output and a taken subset of rows."""
    f = _intgemm_chain()
    nd = mx.nd.contrib
    wmax, dmax = float(f["wmax"]), float(f["dmax"])
    prepared = nd.intgemm_prepare_weight(mx.nd.array(f["weight"]), mx.nd.array([wmax]))
    quantized = nd.intgemm_prepare_data(mx.nd.array(f["weight"]), mx.nd.array([wmax]))
    onp.testing.assert_array_equal(quantized.asnumpy(), f["quantized_weight"])
    onp.testing.assert_array_equal(nd.intgemm_prepare_weight(quantized, already_quantized=True).asnumpy(),
                                   prepared.asnumpy())
    qdata = nd.intgemm_prepare_data(mx.nd.array(f["data"]), mx.nd.array([dmax]))
    onp.testing.assert_array_equal(qdata.asnumpy(), f["qdata"])
    # products: mxjax's are exact int32 sums (a NumPy oracle); the reference CPU's intgemm kernel differs
    # from exact in a few entries (2 of 32 here), so MXNet is compared where it is exact
    exact = f["qdata"].astype(onp.int64) @ f["quantized_weight"].T.astype(onp.int64)
    agree = f["out_int32"] == exact
    assert agree.mean() > 0.9
    out = nd.intgemm_fully_connected(qdata, prepared, num_hidden=8, out_type="int32", no_bias=True)
    assert out.dtype == onp.int32
    onp.testing.assert_array_equal(out.asnumpy(), exact)
    out = nd.intgemm_fully_connected(qdata, prepared, mx.nd.array([dmax / 127 * wmax / 127]), num_hidden=8,
                                     no_bias=True)
    onp.testing.assert_allclose(out.asnumpy()[agree], f["out_scaled"][agree], rtol=1e-6, atol=1e-6)
    # float data is quantized by its own max|data|, here the same dmax
    out = nd.intgemm_fully_connected(mx.nd.array(f["data"]), prepared, mx.nd.array([wmax / 127]),
                                     mx.nd.array(f["bias"]), num_hidden=8)
    onp.testing.assert_allclose(out.asnumpy()[agree], f["out_float"][agree], rtol=1e-6, atol=1e-6)
    taken = nd.intgemm_take_weight(prepared, mx.nd.array(f["take"], dtype="int32"))
    out = nd.intgemm_fully_connected(mx.nd.array(f["data"]), taken, mx.nd.array([wmax / 127]), no_bias=True,
                                     num_hidden=8)
    ok = agree[:, f["take"]]
    onp.testing.assert_allclose(out.asnumpy()[ok], f["out_take"][ok], rtol=1e-6, atol=1e-6)


def test_intgemm_npx_chain():
    f = _intgemm_chain()
    wmax = float(f["wmax"])
    prepared = mx.npx.intgemm_prepare_weight(mx.np.array(f["weight"]), mx.np.array([wmax]))
    taken = mx.npx.intgemm_take_weight(prepared, mx.np.array(f["take"], dtype="int32"))
    out = mx.npx.intgemm_fully_connected(mx.np.array(f["data"]), taken, mx.np.array([wmax / 127]), no_bias=True,
                                         num_hidden=8)
    assert isinstance(out, mx.np.ndarray)
    ok = (f["out_int32"] == f["qdata"].astype(onp.int64) @ f["quantized_weight"].T.astype(onp.int64))[:, f["take"]]
    onp.testing.assert_allclose(out.asnumpy()[ok], f["out_take"][ok], rtol=1e-6, atol=1e-6)


def test_quantize_dequantize_round_trip():
    x = mx.nd.array(onp.linspace(-2, 2, 17, dtype="float32"))
    q, lo, hi = mx.nd.contrib.quantize_v2(x)
    back = mx.nd.contrib.dequantize(q, lo, hi)
    onp.testing.assert_allclose(back.asnumpy(), x.asnumpy(), atol=2 / 127.5)


def test_symbol_namespaces_write_mxnet_op_names():
    data = mx.sym.var("data")
    out = mx.sym.contrib.quantize_v2(data, out_type="int8", name="q")
    assert json.loads(out.tojson())["nodes"][-1]["op"] == "_contrib_quantize_v2"
    r = mx.sym.quantized_reshape(out[0], out[1], out[2], shape=(-1,))
    # mx.sym writes the 1.x name the caller used; MXNet registers it as an alias of the same op
    assert json.loads(r.tojson())["nodes"][-1]["op"] in ("_contrib_quantized_reshape", "quantized_reshape")
    assert hasattr(mx.sym.contrib, "quantized_transpose") and hasattr(mx.sym.npx, "quantized_conv")
    ex = r[0].bind(mx.cpu(), {"data": mx.nd.array([[1.0, -2.0], [0.5, 0.0]])})
    onp.testing.assert_array_equal(ex.forward()[0].asnumpy(), [64, -128, 32, 0])  # -127.5 rounds to even


@pytest.mark.parametrize("call, match", [
    (lambda: mx.nd.contrib.quantized_conv(
        mx.nd.ones((1, 1, 3, 3)), mx.nd.ones((1, 1, 1, 1), dtype="int8"), None, *([mx.nd.array([1.0])] * 4),
        kernel=(1, 1), num_filter=1, no_bias=True),
     r"quantized_conv: data has dtype float32 \(shape \(1, 1, 3, 3\)\) but int8 or uint8 is expected"),
    (lambda: mx.nd.contrib.dequantize(mx.nd.ones((2,), dtype="int32"), mx.nd.array([0.0]), mx.nd.array([1.0])),
     r"dequantize: data has dtype int32 .* but int8 or uint8 is expected"),
    (lambda: mx.nd.contrib.quantize(mx.nd.ones((2,)), mx.nd.array([0.0, 1.0]), mx.nd.array([1.0])),
     r"quantize: min_range has shape \(2,\) but a range value of shape \(1,\) is expected"),
    (lambda: mx.nd.contrib.quantized_elemwise_add(
        mx.nd.ones((2, 3), dtype="int8"), mx.nd.ones((3, 2), dtype="int8"), *([mx.nd.array([1.0])] * 4)),
     r"quantized_elemwise_add: lhs \(2, 3\) and rhs \(3, 2\) must have the same shape"),
    (lambda: mx.nd.contrib.quantized_pooling(mx.nd.ones((1, 1, 4, 4), dtype="int8"), mx.nd.array([0.0]),
                                             mx.nd.array([1.0]), kernel=(2, 2), layout="NHWC"),
     r"quantized_pooling: data \(1, 1, 4, 4\) with layout NHWC is not supported; 4-D NCHW"),
    (lambda: mx.nd.contrib.quantize_v2(mx.nd.ones((2,)), out_type="int16"),
     r"quantize_v2: out_type='int16' is not supported"),
    (lambda: mx.nd.contrib.intgemm_prepare_weight(mx.nd.ones((8, 10)), mx.nd.array([1.0])),
     r"intgemm_prepare_weight: weight has shape \(8, 10\); intgemm needs the last dimension a multiple of 64"),
])
def test_bad_input_raises(call, match):
    with pytest.raises(MXNetError, match=match):
        call()
