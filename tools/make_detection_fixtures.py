"""Write tests/fixtures/detection/*.npz: MXNet 2.0's detection-side ``mx.nd.contrib`` ops, its
``backward_*`` ops and Gluon's deformable convolution layers on small random inputs.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_detection_fixtures.py``).  Each case
stores its inputs (``in_0``...), parameters (``params``, JSON), outputs (``out_0``...) and, for
differentiable ops, the input gradients of ``sum(out_0 * head)`` (``head``, ``grad_0``...).

Not here: PSROIPooling and DeformablePSROIPooling, whose CPU kernels in MXNet are empty stubs
(``// NOT_IMPLEMENTED``; the output is uninitialised memory), so the tests check them against a
NumPy transcription of MXNet's CUDA kernels instead.  The ``backward_*`` ops cannot receive arrays
through MXNet 2.0's Python wrappers (their generated signature declares no inputs), so they are
called here through the C API with preallocated outputs.
"""
from __future__ import annotations

import ctypes
import json
import pathlib

import mxnet as mx
import numpy as np
from mxnet.base import _LIB, OpHandle, c_str, check_call
from mxnet.ndarray._internal import _imperative_invoke

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "detection"
RNG = np.random.default_rng(7)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype("float32")


def save(name, op, inputs, params=None, grad=True, extra=None, grad_inputs=None):
    params = params or {}
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    grad_inputs = range(len(arrays)) if grad_inputs is None else grad_inputs
    if grad:
        for i in grad_inputs:
            arrays[i].attach_grad()
        with mx.autograd.record():
            outs = getattr(mx.nd.contrib, op)(*arrays, **params)
            first = outs[0] if isinstance(outs, (list, tuple)) else outs
            head = mx.nd.array(rand(*first.shape), dtype=first.dtype)
            loss = (first * head).sum()
        loss.backward()
    else:
        outs = getattr(mx.nd.contrib, op)(*arrays, **params)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    record = {"params": np.array(json.dumps({"op": op, **params}))}
    record.update({f"in_{i}": a for i, a in enumerate(inputs)})
    record.update({f"out_{i}": o.asnumpy() for i, o in enumerate(outs)})
    if grad:
        record["head"] = head.asnumpy()
        record.update({f"grad_{i}": arrays[i].grad.asnumpy() for i in grad_inputs})
    record.update(extra or {})
    np.savez_compressed(OUT / f"{name}.npz", **record)


def raw(name, inputs, out_shapes, out_dtypes=None, **params):
    """Call a registered op through the C API (for ops MXNet's Python wrappers cannot feed)."""
    handle = OpHandle()
    check_call(_LIB.NNGetOpHandle(c_str(name), ctypes.byref(handle)))
    out_dtypes = out_dtypes or ["float32"] * len(out_shapes)
    outs = [mx.nd.zeros(s, dtype=d) for s, d in zip(out_shapes, out_dtypes)]
    _imperative_invoke(handle.value, [mx.nd.array(a, dtype=a.dtype) for a in inputs], list(params),
                       [str(v) for v in params.values()], outs, False, True)
    return [o.asnumpy() for o in outs]


def save_raw(name, op, inputs, out_shapes, params, out_dtypes=None):
    outs = raw(op, inputs, out_shapes, out_dtypes, **params)
    record = {"params": np.array(json.dumps({"op": op, **params}))}
    record.update({f"in_{i}": a for i, a in enumerate(inputs)})
    record.update({f"out_{i}": o for i, o in enumerate(outs)})
    np.savez_compressed(OUT / f"{name}.npz", **record)


def rpn_inputs(batch, anchors, height, width, stride):
    cls_prob = RNG.uniform(0, 1, (batch, 2 * anchors, height, width)).astype("float32")
    bbox_pred = rand(batch, 4 * anchors, height, width, low=-0.3, high=0.3)
    im_info = np.array([[height * stride, width * stride, 1.0]] * batch, "float32")
    return cls_prob, bbox_pred, im_info


def hawkes_inputs(n, t, k):
    mu = RNG.uniform(0.5, 1.5, (n, k)).astype("float32")
    alpha = RNG.uniform(0.1, 0.6, (k,)).astype("float32")
    beta = RNG.uniform(0.5, 2.0, (k,)).astype("float32")
    state = RNG.uniform(0.0, 1.0, (n, k)).astype("float32")
    lags = RNG.uniform(0.05, 1.0, (n, t)).astype("float32")
    marks = RNG.integers(0, k, (n, t)).astype("int32")
    valid = np.array([t, t - 2, 1][:n], "float32")
    max_time = (lags.sum(1) + RNG.uniform(0.1, 1.0, (n,))).astype("float32")
    return [mu, alpha, beta, state, lags, marks, valid, max_time]


def deformable_layer(name, cls, x, **kwargs):
    mx.random.seed(3)
    layer = getattr(mx.gluon.nn, cls)(**kwargs)
    layer.initialize(mx.init.Uniform(0.3))
    xs = mx.np.array(x)
    layer(xs)  # deferred init
    params = layer.collect_params()
    values = {k: RNG.uniform(-0.3, 0.3, p.shape).astype("float32") for k, p in params.items()}
    for k, p in params.items():
        p.set_data(mx.np.array(values[k]))
    xs.attach_grad()
    with mx.autograd.record():
        out = layer(xs)
        head = mx.np.array(rand(*out.shape))
        loss = (out * head).sum()
    loss.backward()
    record = {"params": np.array(json.dumps({"cls": cls, **kwargs})), "in_0": x, "out_0": out.asnumpy(),
              "head": head.asnumpy(), "grad_0": xs.grad.asnumpy(),
              "names": np.array(json.dumps({k: list(p.shape) for k, p in params.items()}))}
    record.update({f"param:{k}": v for k, v in values.items()})
    record.update({f"pgrad:{k}": p.grad().asnumpy() for k, p in params.items()})
    np.savez_compressed(OUT / f"{name}.npz", **record)


def main():
    OUT.mkdir(parents=True, exist_ok=True)

    # Proposal / MultiProposal (gradients are zero in MXNet)
    prop = {"rpn_pre_nms_top_n": 30, "rpn_post_nms_top_n": 8, "threshold": 0.6, "rpn_min_size": 4,
            "scales": (2.0, 4.0), "ratios": (0.5, 1.0, 2.0), "feature_stride": 8}
    save("proposal", "Proposal", list(rpn_inputs(1, 6, 5, 6, 8)), {**prop, "output_score": True})
    save("proposal_noscore", "Proposal", list(rpn_inputs(1, 6, 4, 4, 8)),
         {**prop, "rpn_post_nms_top_n": 40, "rpn_pre_nms_top_n": 200, "threshold": 0.3}, grad=False)
    save("proposal_iou", "Proposal", list(rpn_inputs(1, 6, 4, 5, 8)), {**prop, "iou_loss": True}, grad=False)
    save("multi_proposal", "MultiProposal", list(rpn_inputs(2, 6, 4, 5, 8)), {**prop, "output_score": True})

    # RROIAlign (no gradient in MXNet)
    data = rand(2, 3, 9, 10)
    rois = np.array([[0, 4.0, 4.0, 5.0, 3.0, 30.0], [1, 5.5, 3.2, 6.0, 4.5, -60.0],
                     [0, 1.0, 8.0, 7.0, 3.0, 135.0], [1, 9.0, 1.0, 2.0, 2.0, 0.0]], "float32")
    save("rroi_align", "RROIAlign", [data, rois], {"pooled_size": (2, 3), "spatial_scale": 1.0}, grad=False)
    save("rroi_align_ratio", "RROIAlign", [data, rois * np.array([1, 2, 2, 2, 2, 1], "float32")],
         {"pooled_size": (3, 2), "spatial_scale": 0.5, "sampling_ratio": 2}, grad=False)

    # hawkesll: forward, and gradients (MXNet's backward uses only the log-likelihood's head)
    save("hawkesll", "hawkesll", hawkes_inputs(3, 6, 3), grad_inputs=range(4))

    # BatchNormWithReLU
    x = rand(2, 3, 4, 4)
    save("bn_relu", "BatchNormWithReLU",
         [x, rand(3, low=0.5, high=1.5), rand(3), rand(3), rand(3, low=0.5, high=1.5)],
         {"fix_gamma": False, "use_global_stats": True})

    # backward ops, through the C API
    x = rand(3, 4) * 3
    g = rand(3, 4)
    save_raw("backward_quadratic", "_contrib_backward_quadratic", [g, x], [(3, 4)], {"a": 0.5, "b": -2.0, "c": 1.5})
    save_raw("backward_gradientmultiplier", "_contrib_backward_gradientmultiplier", [g], [(3, 4)],
             {"scalar": -0.5})
    old, new = rand(5, 3), rand(2, 3)
    save_raw("backward_index_copy", "_contrib_backward_index_copy",
             [rand(5, 3), old, np.array([3, 1], "int64"), new], [(5, 3), (2,), (2, 3)], {},
             out_dtypes=["float32", "float32", "float32"])
    # _contrib_backward_hawkesll refuses a write request for its non-differentiable inputs, so it
    # cannot run alone; the 'hawkesll' case's autograd gradients are its outputs.

    # rand_zipfian's deterministic part: the expected counts for fixed classes
    true = np.array([0, 1, 5, 9, 3], "float32")
    mx.random.seed(11)
    samples, count_true, count_sampled = mx.nd.contrib.rand_zipfian(mx.nd.array(true), 64, 10)
    np.savez_compressed(OUT / "rand_zipfian.npz", true=true, samples=samples.asnumpy(),
                        count_true=count_true.asnumpy(), count_sampled=count_sampled.asnumpy())

    # Gluon layers (MXNet 2 layers run in NumPy mode)
    mx.npx.set_np()
    x = rand(2, 4, 7, 6)
    deformable_layer("deformable_conv", "DeformableConvolution", x, channels=6, kernel_size=(3, 3), padding=(1, 1),
                     offset_use_bias=True)
    deformable_layer("deformable_conv_groups", "DeformableConvolution", x, channels=4, kernel_size=(3, 2),
                     strides=(2, 1), num_deformable_group=2, use_bias=False, activation="relu")
    # ModulatedDeformableConvolution cannot run on MXNet's CPU ("only implemented in GPU"; its forward
    # also calls npx.slice_axis, which MXNet 2.0's npx lacks): record its parameter names and shapes
    layer = mx.gluon.nn.ModulatedDeformableConvolution(channels=4, kernel_size=(3, 3), padding=(1, 1),
                                                       num_deformable_group=2)
    layer.infer_shape(mx.np.array(x))
    np.savez_compressed(OUT / "modulated_deformable_conv_params.npz", names=np.array(json.dumps(
        {k: list(p.shape) for k, p in layer.collect_params().items()})))


if __name__ == "__main__":
    main()
