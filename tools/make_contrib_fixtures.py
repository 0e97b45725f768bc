"""Write tests/fixtures/contrib/*.npz: MXNet 2.0's ``mx.nd.contrib`` ops on small random inputs.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_contrib_fixtures.py``).  Each case
stores its inputs (``in_0``...), parameters (``params``, JSON), outputs (``out_0``...) and, for
differentiable ops, the input gradients of ``sum(out_0 * head)`` (``head``, ``grad_0``...).
"""
from __future__ import annotations

import json
import pathlib

import mxnet as mx
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "contrib"
RNG = np.random.default_rng(20)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype("float32")


def boxes(*lead, scale=1.0):
    """Random valid corner boxes (xmin, ymin, xmax, ymax) in [0, scale]."""
    lo = RNG.uniform(0, 0.6, (*lead, 2))
    size = RNG.uniform(0.1, 0.4, (*lead, 2))
    return (np.concatenate([lo, lo + size], -1) * scale).astype("float32")


def save(name, op, inputs, params=None, grad=True):
    params = params or {}
    arrays = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    if grad:
        for a in arrays:
            a.attach_grad()
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
        record.update({f"grad_{i}": a.grad.asnumpy() for i, a in enumerate(arrays)})
    np.savez_compressed(OUT / f"{name}.npz", **record)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    x = rand(3, 4) * 3
    save("quadratic", "quadratic", [x], {"a": 0.5, "b": -2.0, "c": 1.5})
    save("gradientmultiplier", "gradientmultiplier", [x], {"scalar": -0.5})
    save("div_sqrt_dim", "div_sqrt_dim", [rand(2, 3, 5)])
    save("round_ste", "round_ste", [np.array([[1.5, -2.5, 0.4], [-0.6, 2.49, 7.0]], "float32")])
    save("sign_ste", "sign_ste", [np.array([[1.5, -2.5, 0.0], [-0.6, 2.49, 7.0]], "float32")])
    a = rand(2, 3)
    b = a + np.array([[0, 1e-6, 0], [0, 0, 1e-3]], "float32")
    save("allclose_false", "allclose", [a, b], grad=False)
    save("allclose_true", "allclose", [a, b], {"rtol": 1e-2, "atol": 1e-3}, grad=False)
    nan = np.array([1.0, np.nan], "float32")
    save("allclose_nan", "allclose", [nan, nan], {"equal_nan": False}, grad=False)
    save("index_copy", "index_copy", [rand(5, 3), np.array([3, 0], "int64"), rand(2, 3)])
    heads, hd, seq, kseq, batch = 2, 3, 4, 5, 2
    qkv = rand(seq, batch, heads * 3 * hd)
    save("selfatt_qk", "interleaved_matmul_selfatt_qk", [qkv], {"heads": heads})
    save("selfatt_valatt", "interleaved_matmul_selfatt_valatt",
         [qkv, rand(batch * heads, seq, seq)], {"heads": heads})
    q, kv = rand(seq, batch, heads * hd), rand(kseq, batch, heads * 2 * hd)
    save("encdec_qk", "interleaved_matmul_encdec_qk", [q, kv], {"heads": heads})
    save("encdec_valatt", "interleaved_matmul_encdec_valatt",
         [kv, rand(batch * heads, seq, kseq)], {"heads": heads})
    save("adaptive_avg_pool", "AdaptiveAvgPooling2D", [rand(2, 2, 5, 7)], {"output_size": (3, 2)})
    save("adaptive_avg_pool_int", "AdaptiveAvgPooling2D", [rand(1, 2, 4, 6)], {"output_size": 3})
    # boxes
    save("box_iou_corner", "box_iou", [boxes(2, 3), boxes(4)])
    centers = np.abs(rand(3, 4)) + 0.1
    save("box_iou_center", "box_iou", [centers, np.abs(rand(2, 2, 4)) + 0.1], {"format": "center"})
    samples = np.array([[1, -1, 0, 1], [1, 1, 0, -1]], "float32")
    matches = np.array([[0, 1, 2, 2], [1, 0, 0, 2]], "float32")
    save("box_encode", "box_encode", [samples, matches, boxes(2, 4), boxes(2, 3),
                                      np.array([0.1, -0.1, 0.0, 0.2], "float32"),
                                      np.array([0.1, 0.2, 0.3, 0.4], "float32")], grad=False)
    save("box_decode_center", "box_decode", [rand(2, 3, 4), np.abs(rand(1, 3, 4)) + 0.1],
         {"std0": 0.1, "std1": 0.2, "std2": 0.3, "std3": 0.4})
    save("box_decode_corner", "box_decode", [rand(1, 4, 4) * 3, boxes(1, 4)], {"format": "corner", "clip": 0.5})
    save("bipartite_desc", "bipartite_matching", [rand(2, 4, 3)], {"threshold": -0.3}, grad=False)
    save("bipartite_asc", "bipartite_matching", [rand(5, 4)], {"threshold": 0.5, "is_ascend": True, "topk": 3},
         grad=False)
    save("multibox_prior", "MultiBoxPrior", [rand(1, 2, 3, 4)], {"sizes": (0.5, 0.25), "ratios": (1, 2, 0.5)},
         grad=False)
    save("multibox_prior_clip", "MultiBoxPrior", [rand(2, 1, 2, 2)],
         {"sizes": (0.9,), "ratios": (1.0, 3.0), "clip": True, "steps": (0.4, 0.3), "offsets": (0.2, 0.7)},
         grad=False)
    nms = np.concatenate([RNG.integers(0, 2, (2, 8, 1)), rand(2, 8, 1, low=0, high=1), boxes(2, 8)],
                         -1).astype("float32")
    save("box_nms", "box_nms", [nms], {"overlap_thresh": 0.1, "valid_thresh": 0.15})
    save("box_nms_ids", "box_nms", [nms], {"overlap_thresh": 0.1, "id_index": 0, "background_id": 1, "topk": 3})
    save("box_nms_center", "box_nms", [nms[0]], {"overlap_thresh": 0.2, "id_index": 0, "in_format": "center",
                                                  "force_suppress": True}, grad=False)
    rec = np.concatenate([boxes(6), rand(6, 1, low=0, high=1)], -1).astype("float32")
    save("box_nms_layout", "box_nms", [rec], {"coord_start": 0, "score_index": 4, "out_format": "center"},
         grad=False)
    save("isfinite", "isfinite", [np.array([1, np.inf, -np.inf, np.nan, 0], "float32")], grad=False)
    save("isinf", "isinf", [np.array([1, np.inf, -np.inf, np.nan, 0], "float32")], grad=False)
    save("isnan", "isnan", [np.array([[1, np.inf], [np.nan, 0]], "float32")], grad=False)
    save("isnan_int", "isnan", [np.array([1, 2], "int32")], grad=False)
    feat = rand(2, 4, 6, 5)
    rois = np.concatenate([np.array([[0], [1], [1]], "float32"), boxes(3, scale=8.0)], -1)
    rois[2, 3:] += 4.0  # a region reaching past the image
    save("roi_align", "ROIAlign", [feat, rois], {"pooled_size": (2, 3), "spatial_scale": 0.5, "sample_ratio": 2})
    save("roi_align_adaptive", "ROIAlign", [feat, rois], {"pooled_size": (2, 2), "spatial_scale": 1.0})
    save("roi_align_aligned_ps", "ROIAlign", [feat, rois],
         {"pooled_size": (2, 1), "spatial_scale": 0.7, "sample_ratio": 3, "aligned": True,
          "position_sensitive": True})
    qry, key, dil = rand(2, 6, 2, 3), rand(2, 6, 2, 3), np.array([1, 2], "int32")
    save("sldwin_score_sym", "sldwin_atten_score", [qry, key, dil], {"w": 2, "symmetric": True})
    save("sldwin_score_causal", "sldwin_atten_score", [qry, key, dil], {"w": 1, "symmetric": False})
    valid = np.array([4, 6], "int32")
    save("sldwin_mask_sym", "sldwin_atten_mask_like", [rand(2, 6, 2, 5), dil, valid], {"w": 2, "symmetric": True},
         grad=False)
    save("sldwin_mask_causal", "sldwin_atten_mask_like", [rand(2, 6, 2, 3), dil, valid],
         {"w": 2, "symmetric": False}, grad=False)
    save("sldwin_context", "sldwin_atten_context", [rand(2, 6, 2, 5), rand(2, 6, 2, 3), dil],
         {"w": 2, "symmetric": True})
    cls = rand(2, 3, 8, low=0.0, high=1.0)
    cls /= cls.sum(1, keepdims=True)
    loc, anchors = rand(2, 32) * 0.3, boxes(1, 8)
    save("multibox_detection", "MultiBoxDetection", [cls, loc, anchors], {"nms_threshold": 0.3}, grad=False)
    save("multibox_detection_force", "MultiBoxDetection", [cls, loc, anchors],
         {"force_suppress": True, "threshold": 0.3, "clip": False, "variances": (0.2, 0.1, 0.3, 0.1)}, grad=False)
    grid = np.array([[x, y] for y in np.linspace(0, 0.75, 4) for x in np.linspace(0, 0.75, 4)])
    anc = np.concatenate([grid, grid + 0.3], -1)[None].astype("float32")          # 16 anchors
    lab = -np.ones((2, 4, 5), "float32")
    lab[0, :3] = np.concatenate([[[0], [2], [1]], boxes(3)], -1)
    lab[1, :1] = np.concatenate([[[1]], boxes(1)], -1)
    pred = rand(2, 4, 16) * 3
    save("multibox_target", "MultiBoxTarget", [anc, lab, pred], grad=False)
    save("multibox_target_mining", "MultiBoxTarget", [anc, lab, pred],
         {"negative_mining_ratio": 2.0, "negative_mining_thresh": 0.4, "overlap_threshold": 0.3,
          "ignore_label": -2.0, "variances": (0.2, 0.2, 0.3, 0.3)}, grad=False)
    save("multibox_target_min_neg", "MultiBoxTarget", [anc, lab, pred],
         {"negative_mining_ratio": 3.0, "minimum_negative_samples": 10}, grad=False)
    save("multibox_target_half", "MultiBoxTarget", [anc, lab, pred], {"negative_mining_ratio": 0.5}, grad=False)


if __name__ == "__main__":
    main()
