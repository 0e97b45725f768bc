"""Write tests/fixtures/quantization/*.npz: MXNet 2.0's quantization and intgemm operators.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_quantization_fixtures.py``); a CPU
build with oneDNN writes what MXNet computes on CPU.  Each case stores its named array inputs
(``in_<name>``), the front end and parameters (``params``, JSON: ``ns``, ``op``, ``inputs``, ``kwargs``)
and the outputs (``out_0``...).  Inputs are passed by keyword, so optional ones (a bias) may be absent;
``quantized_concat`` takes its arrays positionally.
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "quantization"
RNG = np.random.default_rng(7)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype("float32")


def ints(dtype, *shape, low=None, high=None):
    info = np.iinfo(dtype)
    low = info.min + (dtype == "int8") if low is None else low
    high = info.max if high is None else high
    return RNG.integers(low, high + 1, shape).astype(dtype)


def rng_(value):
    return np.array([value], "float32")


def _call(ns, op, inputs, kwargs):
    if ns == "npx":
        mx.npx.set_np()
        try:
            arrays = {k: mx.np.array(v, dtype=v.dtype) for k, v in inputs.items()}
            outs = getattr(mx.npx, op)(**arrays, **kwargs)
            return [o.asnumpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
        finally:
            mx.npx.reset_np()
    module = {"nd.contrib": mx.nd.contrib, "nd": mx.nd}[ns]
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in inputs.items()}
    if op == "quantized_concat":
        outs = module.quantized_concat(*arrays.values(), **kwargs)
    else:
        outs = getattr(module, op)(**arrays, **kwargs)
    return [o.asnumpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]


def save(name, op, inputs, ns="nd.contrib", **kwargs):
    outs = _call(ns, op, inputs, kwargs)
    record = {"params": np.array(json.dumps({"ns": ns, "op": op, "inputs": list(inputs), "kwargs": kwargs}))}
    record.update({f"in_{k}": v for k, v in inputs.items()})
    record.update({f"out_{i}": o for i, o in enumerate(outs)})
    np.savez_compressed(OUT / f"{name}.npz", **record)
    return outs


def quantize_cases():
    ties = (np.arange(-12, 12, dtype="float32") + 0.5).reshape(4, 6) * 10.5
    save("quantize_int8", "quantize", {"data": rand(3, 5, low=-2, high=3), "min_range": rng_(-2),
                                       "max_range": rng_(3)}, out_type="int8")
    save("quantize_uint8", "quantize", {"data": rand(3, 5, low=-1, high=3), "min_range": rng_(-1),
                                        "max_range": rng_(3)})
    save("quantize_ties_int8", "quantize", {"data": ties, "min_range": rng_(-127), "max_range": rng_(127)},
         out_type="int8")
    save("quantize_ties_uint8", "quantize", {"data": ties + 130, "min_range": rng_(0), "max_range": rng_(255)},
         out_type="uint8")
    save("quantize_npx", "contrib_quantize", {"data": rand(2, 4), "min_range": rng_(-1), "max_range": rng_(1)},
         ns="npx", out_type="int8")
    x = rand(2, 3, 4, 5, low=-2, high=3)
    save("quantize_v2_default", "quantize_v2", {"data": x})
    save("quantize_v2_uint8", "quantize_v2", {"data": x}, out_type="uint8")
    save("quantize_v2_uint8_pos", "quantize_v2", {"data": np.abs(x)}, out_type="uint8")
    save("quantize_v2_auto", "quantize_v2", {"data": x}, out_type="auto")
    save("quantize_v2_auto_calib_pos", "quantize_v2", {"data": x}, out_type="auto", min_calib_range=0.0,
         max_calib_range=1.5)
    save("quantize_v2_auto_calib_neg", "quantize_v2", {"data": x}, out_type="auto", min_calib_range=-0.5,
         max_calib_range=1.5)
    save("quantize_v2_int8_calib", "quantize_v2", {"data": x}, out_type="int8", min_calib_range=-1.0,
         max_calib_range=0.25)
    save("quantize_v2_ties", "quantize_v2", {"data": ties}, out_type="int8", min_calib_range=-127.0,
         max_calib_range=127.0)
    save("quantize_v2_ties_3d", "quantize_v2", {"data": ties.reshape(2, 3, 4)}, out_type="uint8",
         min_calib_range=0.0, max_calib_range=255.0)
    exact = np.concatenate([np.arange(-127, 127), -np.arange(-127, 127)]).astype("float32") + 0.5
    save("quantize_v2_exact_ties", "quantize_v2", {"data": exact}, min_calib_range=-127.5, max_calib_range=127.5)
    save("quantize_v2_exact_ties_uint8", "quantize_v2", {"data": np.abs(exact) * 2}, out_type="uint8",
         min_calib_range=0.0, max_calib_range=255.5)
    save("quantize_exact_ties", "quantize", {"data": exact * 2, "min_range": rng_(-254.0),
                                             "max_range": rng_(254.0)}, out_type="int8")
    save("quantize_v2_pass_int8", "quantize_v2", {"data": ints("int8", 3, 4)})
    save("quantize_v2_pass_uint8", "quantize_v2", {"data": ints("uint8", 3, 4)})
    save("quantize_v2_pass_calib", "quantize_v2", {"data": ints("int8", 3, 4)}, min_calib_range=-2.0,
         max_calib_range=3.0)
    save("quantize_v2_npx", "contrib_quantize_v2", {"data": x}, ns="npx", out_type="auto",
         min_calib_range=0.0, max_calib_range=2.0)
    save("dequantize_int8", "dequantize", {"data": ints("int8", 3, 4), "min_range": rng_(-0.5),
                                           "max_range": rng_(2.0)})
    save("dequantize_uint8", "dequantize", {"data": ints("uint8", 3, 4), "min_range": rng_(-0.5),
                                            "max_range": rng_(2.0)})
    save("dequantize_int8_4d", "dequantize", {"data": ints("int8", 2, 3, 2, 2), "min_range": rng_(-3.0),
                                              "max_range": rng_(1.0)})
    i32 = ints("int32", 3, 4, low=-40000, high=40000)
    lim = {"min_range": rng_(-100.0), "max_range": rng_(100.0)}
    save("requantize", "requantize", {"data": i32, **lim})
    save("requantize_calib", "requantize", {"data": i32, **lim}, min_calib_range=-0.3, max_calib_range=0.4)
    save("requantize_auto_calib", "requantize", {"data": i32, **lim}, out_type="auto", min_calib_range=0.0,
         max_calib_range=0.4)
    save("requantize_auto_nocalib", "requantize", {"data": i32, **lim}, out_type="auto")
    save("requantize_npx", "requantize", {"data": i32, **lim}, ns="npx", min_calib_range=-1e-3,
         max_calib_range=1e-3)
    samples = np.concatenate([RNG.normal(0, 1, 5000), RNG.normal(0, 0.1, 2000)]).astype("float32")
    hist, edges = np.histogram(samples, bins=601, range=(-4, 4))
    save("calibrate_entropy", "calibrate_entropy", {"hist": hist.astype("float32"),
                                                    "hist_edges": edges.astype("float32")})
    hist, edges = np.histogram(samples, bins=81, range=(-3, 3))
    save("calibrate_entropy_npx", "contrib_calibrate_entropy", {"hist": hist.astype("float32"),
                                                                "hist_edges": edges.astype("float32")},
         ns="npx", num_quantized_bins=31)


def layout_cases():
    q8, qu = ints("int8", 2, 3, 4, 5), ints("uint8", 2, 3, 4, 5)
    r8 = {"min_data": rng_(-1.5), "max_data": rng_(2.0)}
    ru = {"min_data": rng_(0.0), "max_data": rng_(2.0)}
    save("act_relu_int8", "quantized_act", {"data": q8, **r8}, act_type="relu")
    save("act_relu_uint8", "quantized_act", {"data": qu, **ru}, act_type="relu")
    save("act_npx", "quantized_act", {"data": q8, **r8}, ns="npx", act_type="relu")
    save("flatten", "quantized_flatten", {"data": q8, **r8})
    save("flatten_npx", "quantized_flatten", {"data": qu, **ru}, ns="npx")
    save("reshape", "quantized_reshape", {"data": q8, **r8}, shape=(0, -1, 5))
    save("reshape_nd", "quantized_reshape", {"data": qu, **ru}, ns="nd", shape=(-3, -2), reverse=False)
    save("reshape_npx", "quantized_reshape", {"data": q8, **r8}, ns="npx", newshape=(-1, 20))
    save("transpose", "quantized_transpose", {"data": q8, **r8}, axes=(0, 2, 3, 1))
    save("transpose_default", "quantized_transpose", {"data": qu, **ru}, ns="nd")
    save("transpose_npx", "quantized_transpose", {"data": q8, **r8}, ns="npx", axes=(3, 1, 0, 2))
    q8 = ints("int8", 2, 3, 6, 7)
    qu = ints("uint8", 2, 3, 6, 7)
    save("pool_max_int8", "quantized_pooling", {"data": q8, **r8}, kernel=(3, 3), pool_type="max",
         stride=(2, 2), pad=(1, 1))
    save("pool_avg_int8", "quantized_pooling", {"data": q8, **r8}, kernel=(2, 3), pool_type="avg")
    save("pool_avg_uint8", "quantized_pooling", {"data": qu, **ru}, kernel=(3, 3), pool_type="avg",
         stride=(2, 2), pad=(1, 1))
    save("pool_avg_nopadcount", "quantized_pooling", {"data": qu, **ru}, kernel=(3, 3), pool_type="avg",
         stride=(2, 2), pad=(1, 1), count_include_pad=False)
    save("pool_max_full", "quantized_pooling", {"data": qu, **ru}, kernel=(2, 2), pool_type="max",
         stride=(2, 2), pooling_convention="full")
    save("pool_global", "quantized_pooling", {"data": q8, **r8}, kernel=(1, 1), pool_type="avg",
         global_pool=True)
    save("pool_npx", "quantized_pooling", {"data": q8, **r8}, ns="npx", kernel=(2, 2), pool_type="max")
    a, b = ints("int8", 2, 3, 4), ints("int8", 2, 5, 4)
    save("concat_int8", "quantized_concat", {"a": a, "b": b, "min_a": rng_(-1.0), "max_a": rng_(1.0),
                                             "min_b": rng_(-3.0), "max_b": rng_(2.0)}, num_args=2, dim=1)
    save("concat_mixed", "quantized_concat", {"a": a, "b": ints("uint8", 2, 2, 4), "min_a": rng_(-1.0),
                                              "max_a": rng_(1.0), "min_b": rng_(0.0), "max_b": rng_(0.5)},
         num_args=2, dim=1)
    c = ints("uint8", 2, 3, 4)
    save("concat_uint8", "quantized_concat", {"a": c, "b": ints("uint8", 2, 3, 4), "min_a": rng_(0.0),
                                              "max_a": rng_(1.0), "min_b": rng_(0.0), "max_b": rng_(4.0)},
         num_args=2, dim=2)


def arith_cases():
    a, b = ints("int8", 3, 4), ints("int8", 3, 4)
    ua = ints("uint8", 3, 4)
    ra = {"lhs_min": rng_(-1.0), "lhs_max": rng_(1.5), "rhs_min": rng_(-2.0), "rhs_max": rng_(0.5)}
    save("add_int8", "quantized_elemwise_add", {"lhs": a, "rhs": b, **ra})
    save("add_uint8_int8", "quantized_elemwise_add", {"lhs": ua, "rhs": b, **{**ra, "lhs_min": rng_(0.0)}})
    save("add_calib", "quantized_elemwise_add", {"lhs": a, "rhs": b, **ra}, min_calib_range=-2.0,
         max_calib_range=2.5)
    save("add_calib_pos", "quantized_elemwise_add", {"lhs": ua, "rhs": ints("uint8", 3, 4),
                                                     **{**ra, "lhs_min": rng_(0.0), "rhs_min": rng_(0.0)}},
         min_calib_range=0.0, max_calib_range=3.0)
    save("add_npx", "quantized_elemwise_add", {"lhs": a, "rhs": b, **ra}, ns="npx")
    save("mul_int8", "quantized_elemwise_mul", {"lhs": a, "rhs": b, **ra})
    save("mul_calib", "quantized_elemwise_mul", {"lhs": a, "rhs": b, **ra}, min_calib_range=-0.5,
         max_calib_range=0.5)
    save("mul_float", "quantized_elemwise_mul", {"lhs": a, "rhs": b, **ra}, enable_float_output=True)
    save("mul_npx", "quantized_elemwise_mul", {"lhs": a, "rhs": b, **ra}, ns="npx")
    w = ints("int8", 7, 5)
    save("embedding", "quantized_embedding", {"data": np.array([[0, 6, 2], [3, 3, 1]], "float32"), "weight": w,
                                              "min_weight": rng_(-0.7), "max_weight": rng_(0.9)},
         input_dim=7, output_dim=5)
    save("embedding_npx", "quantized_embedding", {"data": np.array([4, 0, 5], "float32"), "weight": w,
                                                  "min_weight": rng_(-0.7), "max_weight": rng_(0.9)},
         ns="npx", input_dim=7, output_dim=5)
    x = ints("int8", 2, 3, 4, 4)
    bn = {"gamma": rand(3, low=0.5, high=1.5), "beta": rand(3), "moving_mean": rand(3),
          "moving_var": rand(3, low=0.5, high=2.0), "min_data": rng_(-2.0), "max_data": rng_(2.0)}
    save("batch_norm", "quantized_batch_norm", {"data": x, **bn}, min_calib_range=-3.0, max_calib_range=3.0)
    save("batch_norm_fix_gamma", "quantized_batch_norm", {"data": x, **bn}, eps=0.01, fix_gamma=True,
         min_calib_range=-2.0, max_calib_range=4.0)
    save("batch_norm_gamma", "quantized_batch_norm", {"data": x, **bn}, fix_gamma=False,
         min_calib_range=-2.0, max_calib_range=4.0)


def matmul_cases():
    x8, xu = ints("int8", 2, 3, 6, 6), ints("uint8", 2, 3, 6, 6)
    w, b = ints("int8", 4, 3, 3, 3), ints("int8", 4)
    rw = {"min_weight": rng_(-0.5), "max_weight": rng_(0.4), "min_bias": rng_(-0.2), "max_bias": rng_(0.3)}
    r8 = {"min_data": rng_(-1.5), "max_data": rng_(2.0)}
    ru = {"min_data": rng_(0.0), "max_data": rng_(2.0)}
    save("conv_int8", "quantized_conv", {"data": x8, "weight": w, "bias": b, **r8, **rw}, kernel=(3, 3),
         num_filter=4)
    save("conv_uint8", "quantized_conv", {"data": xu, "weight": w, "bias": b, **ru, **rw}, kernel=(3, 3),
         num_filter=4, stride=(2, 2), pad=(1, 1))
    rw_nb = {k: v for k, v in rw.items() if "bias" not in k}
    save("conv_nobias", "quantized_conv", {"data": x8, "weight": w, **r8, **rw_nb}, kernel=(3, 3),
         num_filter=4, no_bias=True, dilate=(2, 1), pad=(1, 0))
    save("conv_npx", "quantized_conv", {"data": xu, "weight": w, **ru, **rw_nb}, ns="npx", kernel=(3, 3),
         num_filter=4, no_bias=True)
    fw, fb = ints("int8", 5, 108), ints("int8", 5)
    save("fc_int8", "quantized_fully_connected", {"data": x8, "weight": fw, "bias": fb, **r8, **rw},
         num_hidden=5)
    save("fc_uint8", "quantized_fully_connected", {"data": xu, "weight": fw, "bias": fb, **ru, **rw},
         num_hidden=5)
    fw6 = ints("int8", 5, 6)
    save("fc_noflatten", "quantized_fully_connected", {"data": x8, "weight": fw6, **r8, **rw_nb},
         num_hidden=5, no_bias=True, flatten=False)
    save("fc_npx", "quantized_fully_connected", {"data": xu, "weight": fw, "bias": fb, **ru, **rw}, ns="npx",
         num_hidden=5)


def intgemm_cases():
    data, weight = rand(4, 64, low=-2, high=2), rand(8, 64, low=-0.5, high=0.5)
    bias = rand(8)
    save("intgemm_maxabs", "intgemm_maxabsolute", {"data": data})
    save("intgemm_maxabs_npx", "intgemm_maxabsolute", {"data": weight}, ns="npx")
    save("intgemm_prepare_data", "intgemm_prepare_data", {"data": data, "maxabs": rng_(1.5)})
    save("intgemm_prepare_data_npx", "intgemm_prepare_data", {"data": data, "maxabs": rng_(2.0)}, ns="npx")
    # the prepared weight's layout is CPU-specific: cases compare what intgemm_fully_connected makes of it
    wmax = float(np.abs(weight).max())
    dmax = float(np.abs(data).max())
    prepared = mx.nd.contrib.intgemm_prepare_weight(mx.nd.array(weight), mx.nd.array([wmax]))
    quantized = mx.nd.contrib.intgemm_prepare_data(mx.nd.array(weight), mx.nd.array([wmax]))
    prepared_q = mx.nd.contrib.intgemm_prepare_weight(quantized, already_quantized=True)
    assert (prepared.asnumpy() == prepared_q.asnumpy()).all()
    qdata = mx.nd.contrib.intgemm_prepare_data(mx.nd.array(data), mx.nd.array([dmax]))
    out_f = mx.nd.contrib.intgemm_fully_connected(mx.nd.array(data), prepared, mx.nd.array([wmax / 127]),
                                                  mx.nd.array(bias), num_hidden=8)
    out_i = mx.nd.contrib.intgemm_fully_connected(qdata, prepared, num_hidden=8, out_type="int32",
                                                  no_bias=True)
    out_s = mx.nd.contrib.intgemm_fully_connected(qdata, prepared, mx.nd.array([dmax / 127 * wmax / 127]),
                                                  num_hidden=8, no_bias=True)
    taken = mx.nd.contrib.intgemm_take_weight(prepared, mx.nd.array([5, 0, 2, 7, 1, 3, 4, 6], dtype="int32"))
    out_t = mx.nd.contrib.intgemm_fully_connected(mx.nd.array(data), taken, mx.nd.array([wmax / 127]),
                                                  no_bias=True, num_hidden=8)
    np.savez_compressed(OUT / "intgemm_chain.npz", data=data, weight=weight, bias=bias, wmax=np.float32(wmax),
                        dmax=np.float32(dmax), quantized_weight=quantized.asnumpy(), qdata=qdata.asnumpy(),
                        out_float=out_f.asnumpy(), out_int32=out_i.asnumpy(), out_scaled=out_s.asnumpy(),
                        take=np.array([5, 0, 2, 7, 1, 3, 4, 6], "int32"), out_take=out_t.asnumpy())


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    quantize_cases()
    layout_cases()
    arith_cases()
    matmul_cases()
    intgemm_cases()


if __name__ == "__main__":
    main()
