"""``mx.nd.contrib``: MXNet's contrib operators with their 1.x names and argument names."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function, store_out
from .._ndarray import NDArray
from .._invoke import invoke
from ..operator import get_op
from ._layers import as_legacy
from ._updates import (adamw_update, mp_adamw_update, multi_adamw_update, multi_mp_adamw_update,  # noqa: F401
                       adabelief_update, mp_adabelief_update, multi_adabelief_update,
                       multi_mp_adabelief_update, multi_lamb_update, multi_mp_lamb_update,
                       multi_lans_update, multi_mp_lans_update)
from ._updates import CONTRIB as _updates_contrib
from ..numpy_extension._contrib import sync_batch_norm as _sync_batch_norm
from ..numpy_extension.control_flow import cond, foreach, while_loop  # 1.x's contrib names for them
from ._quantized import *  # noqa: F401,F403  (quantization and intgemm)
from ._quantized import __all__ as _quantized_all
from ._contrib_detection import *  # noqa: F401,F403
from ._contrib_detection import __all__ as _detection_all

_MODULE = "mxjax.ndarray.contrib"


def _nd(op: str, name: str) -> Callable[..., Any]:
    return make_function(op, name=name, out_cls=NDArray, legacy=True, module=_MODULE)


BilinearResize2D = _nd("BilinearResize2D", "BilinearResize2D")
arange_like = _nd("arange_like", "arange_like")
CTCLoss = _nd("CTCLoss", "CTCLoss")
ctc_loss = _nd("CTCLoss", "ctc_loss")
# dynamic shape: the rows of data where index is non-zero (any index dtype, as MXNet)
boolean_mask = _nd("_contrib_boolean_mask", "boolean_mask")
index_array = _nd("_contrib_index_array", "index_array")
dynamic_reshape = _nd("_contrib_dynamic_reshape", "dynamic_reshape")  # dynamic shape, as boolean_mask
# graph ops on dense adjacency matrices (MXNet takes CSR ones; contrib_graph)
getnnz = _nd("_contrib_getnnz", "getnnz")
edge_id = _nd("_contrib_edge_id", "edge_id")
dgl_adjacency = _nd("_contrib_dgl_adjacency", "dgl_adjacency")

# elementwise and small utilities (contrib_math)
quadratic = _nd("_contrib_quadratic", "quadratic")
gradientmultiplier = _nd("_contrib_gradientmultiplier", "gradientmultiplier")
div_sqrt_dim = _nd("_contrib_div_sqrt_dim", "div_sqrt_dim")
round_ste = _nd("_contrib_round_ste", "round_ste")
sign_ste = _nd("_contrib_sign_ste", "sign_ste")
allclose = _nd("_contrib_allclose", "allclose")
index_copy = _nd("_contrib_index_copy", "index_copy")
isfinite = _nd("_contrib_isfinite", "isfinite")
isinf = _nd("_contrib_isinf", "isinf")
isnan = _nd("_contrib_isnan", "isnan")
fft = _nd("_contrib_fft", "fft")
count_sketch = _nd("_contrib_count_sketch", "count_sketch")
AdaptiveAvgPooling2D = _nd("_contrib_AdaptiveAvgPooling2D", "AdaptiveAvgPooling2D")

# interleaved multi-head attention (contrib_attention)
interleaved_matmul_selfatt_qk = _nd("_contrib_interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_qk")
interleaved_matmul_selfatt_valatt = _nd("_contrib_interleaved_matmul_selfatt_valatt",
                                        "interleaved_matmul_selfatt_valatt")
interleaved_matmul_encdec_qk = _nd("_contrib_interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_qk")
interleaved_matmul_encdec_valatt = _nd("_contrib_interleaved_matmul_encdec_valatt",
                                       "interleaved_matmul_encdec_valatt")
sldwin_atten_score = _nd("_contrib_sldwin_atten_score", "sldwin_atten_score")
sldwin_atten_mask_like = _nd("_contrib_sldwin_atten_mask_like", "sldwin_atten_mask_like")
sldwin_atten_context = _nd("_contrib_sldwin_atten_context", "sldwin_atten_context")

# bounding boxes and SSD anchors (contrib_box)
box_iou = _nd("_contrib_box_iou", "box_iou")
box_encode = _nd("_contrib_box_encode", "box_encode")
box_decode = _nd("_contrib_box_decode", "box_decode")
bipartite_matching = _nd("_contrib_bipartite_matching", "bipartite_matching")
MultiBoxPrior = _nd("_contrib_MultiBoxPrior", "MultiBoxPrior")
MultiBoxTarget = _nd("_contrib_MultiBoxTarget", "MultiBoxTarget")
MultiBoxDetection = _nd("_contrib_MultiBoxDetection", "MultiBoxDetection")
ROIAlign = _nd("_contrib_ROIAlign", "ROIAlign")
box_nms = _nd("_contrib_box_nms", "box_nms")
box_non_maximum_suppression = _nd("_contrib_box_nms", "box_non_maximum_suppression")

_GROUP_ADAGRAD = get_op("_contrib_group_adagrad_update")


def group_adagrad_update(weight=None, grad=None, history=None, lr=None, rescale_grad=1.0, clip_gradient=-1.0,
                         epsilon=1e-5, out=None, **kwargs):
    """Group AdaGrad step: returns the new weight (into ``out`` when given, usually ``weight``) and
    updates ``history`` (one accumulated mean squared gradient per row) in place."""
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"group_adagrad_update() got unexpected keyword arguments {sorted(kwargs)}")
    params = {"lr": lr, "rescale_grad": float(rescale_grad), "clip_gradient": float(clip_gradient),
              "epsilon": float(epsilon)}
    new_weight, new_history = invoke(_GROUP_ADAGRAD, [weight, grad, history], params, NDArray)
    history._assign(new_history, "group_adagrad_update")
    return store_out(out, new_weight, "group_adagrad_update") if out is not None else new_weight


group_adagrad_update.op = _GROUP_ADAGRAD  # type: ignore[attr-defined]
group_adagrad_update.__module__ = _MODULE


def SyncBatchNorm(data=None, gamma=None, beta=None, moving_mean=None, moving_var=None, eps=1e-3, momentum=0.9,
                  fix_gamma=True, use_global_stats=False, output_mean_var=False, ndev=1, key=None, out=None,
                  **kwargs):
    """BatchNorm over channel axis 1 on this one device (``ndev``/``key`` change nothing): batch
    statistics in training, moving statistics updated in place; moving statistics otherwise."""
    result = _sync_batch_norm(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                              fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                              output_mean_var=output_mean_var, ndev=ndev, key=key, out=out, **kwargs)
    return result if out is not None else as_legacy(result)


SyncBatchNorm.op = _sync_batch_norm.op  # type: ignore[attr-defined]
SyncBatchNorm.__module__ = _MODULE

__all__ = ["SyncBatchNorm", "BilinearResize2D", "arange_like", "CTCLoss", "ctc_loss", "boolean_mask", "index_array", "foreach",
           "while_loop", "cond", "quadratic", "gradientmultiplier", "div_sqrt_dim", "round_ste", "sign_ste",
           "allclose", "index_copy", "AdaptiveAvgPooling2D", "interleaved_matmul_selfatt_qk",
           "interleaved_matmul_selfatt_valatt", "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt",
           "box_iou", "box_encode", "box_decode", "bipartite_matching", "MultiBoxPrior",
           "box_nms", "box_non_maximum_suppression", "isfinite", "isinf", "isnan", "dynamic_reshape",
           "ROIAlign", "group_adagrad_update", "fft", "count_sketch", "getnnz", "edge_id", "dgl_adjacency",
           "sldwin_atten_score", "sldwin_atten_mask_like", "sldwin_atten_context", "MultiBoxDetection", "MultiBoxTarget",
           *_updates_contrib, *_detection_all, *_quantized_all]
