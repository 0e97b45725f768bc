"""``mx.npx`` bindings of the contrib ops MXNet 2's npx exposes: box utilities, SSD anchors,
interleaved attention matmuls and the straight-through estimators (one line each)."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from ..numpy.multiarray import ndarray
from ._nn import batch_norm

_MODULE = "mxjax.numpy_extension"


def _npx(op: str, name: str) -> Callable[..., Any]:
    return make_function(op, name=name, out_cls=ndarray, module=_MODULE, legacy=True, keywords={})


box_iou = _npx("_contrib_box_iou", "box_iou")
box_encode = _npx("_contrib_box_encode", "box_encode")
box_decode = _npx("_contrib_box_decode", "box_decode")
box_nms = _npx("_contrib_box_nms", "box_nms")
bipartite_matching = _npx("_contrib_bipartite_matching", "bipartite_matching")
multibox_target = _npx("_contrib_MultiBoxTarget", "multibox_target")
multibox_detection = _npx("_contrib_MultiBoxDetection", "multibox_detection")
multibox_prior = _npx("_contrib_MultiBoxPrior", "multibox_prior")
interleaved_matmul_selfatt_qk = _npx("_contrib_interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_qk")
interleaved_matmul_selfatt_valatt = _npx("_contrib_interleaved_matmul_selfatt_valatt",
                                         "interleaved_matmul_selfatt_valatt")
interleaved_matmul_encdec_qk = _npx("_contrib_interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_qk")
interleaved_matmul_encdec_valatt = _npx("_contrib_interleaved_matmul_encdec_valatt",
                                        "interleaved_matmul_encdec_valatt")
sldwin_atten_score = _npx("_contrib_sldwin_atten_score", "sldwin_atten_score")
sldwin_atten_mask_like = _npx("_contrib_sldwin_atten_mask_like", "sldwin_atten_mask_like")
sldwin_atten_context = _npx("_contrib_sldwin_atten_context", "sldwin_atten_context")
round_ste = _npx("_contrib_round_ste", "round_ste")
sign_ste = _npx("_contrib_sign_ste", "sign_ste")


def sync_batch_norm(data, gamma, beta, moving_mean, moving_var, eps=1e-3, momentum=0.9, fix_gamma=True,
                    use_global_stats=False, output_mean_var=False, ndev=1, key=None, out=None, **kwargs):
    """Cross-device batch normalization on one device: plain ``batch_norm`` over channel axis 1.  With a
    single process there are no other devices to pool statistics with, so ``ndev`` and ``key`` (MXNet's
    device count and synchronization key) change nothing."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"sync_batch_norm() got unexpected keyword arguments {sorted(kwargs)}")
    if int(ndev) < 1:
        raise ValueError(f"sync_batch_norm: ndev must be a positive device count, got {ndev!r}")
    return batch_norm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum, fix_gamma=fix_gamma,
                      use_global_stats=use_global_stats, output_mean_var=output_mean_var, axis=1, out=out)


sync_batch_norm.op = batch_norm.op  # type: ignore[attr-defined]
sync_batch_norm.__module__ = _MODULE

__all__ = ["sync_batch_norm", "box_nms", "box_iou", "box_encode", "box_decode", "bipartite_matching", "multibox_prior",
           "multibox_detection", "multibox_target",
           "interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk",
           "interleaved_matmul_encdec_valatt", "sldwin_atten_score", "sldwin_atten_mask_like",
           "sldwin_atten_context", "round_ste", "sign_ste"]
