"""``mx.contrib.nd``/``ndarray`` and ``mx.contrib.sym``/``symbol`` are mxjax's ``nd.contrib``/``sym.contrib``."""
import importlib

import mxjax as mx

# MXNet 2.0.0b1's dir(mx.contrib.nd) (== dir(mx.contrib.sym)) less the CSR-only DGL graph ops mxjax does not
# have, and less BatchNormWithReLU/SyncBatchNorm on the symbol side (see MISSING_SYM).
MISSING_ND = {"dgl_csr_neighbor_non_uniform_sample", "dgl_csr_neighbor_uniform_sample", "dgl_graph_compact",
              "dgl_subgraph"}
MISSING_SYM = MISSING_ND | {"BatchNormWithReLU", "SyncBatchNorm"}
MXNET_NAMES = [
    "AdaptiveAvgPooling2D", "BatchNormWithReLU", "BilinearResize2D", "CTCLoss", "DeformablePSROIPooling",
    "MultiBoxDetection", "MultiBoxPrior", "MultiBoxTarget", "MultiProposal", "PSROIPooling", "Proposal", "ROIAlign",
    "RROIAlign", "SyncBatchNorm", "allclose", "arange_like", "backward_gradientmultiplier", "backward_hawkesll",
    "backward_index_copy", "backward_quadratic", "bipartite_matching", "boolean_mask", "box_decode", "box_encode",
    "box_iou", "box_nms", "box_non_maximum_suppression", "calibrate_entropy", "count_sketch", "ctc_loss",
    "dequantize", "dgl_adjacency", "dgl_csr_neighbor_non_uniform_sample", "dgl_csr_neighbor_uniform_sample",
    "dgl_graph_compact", "dgl_subgraph", "div_sqrt_dim", "dynamic_reshape", "edge_id", "fft", "getnnz",
    "gradientmultiplier", "group_adagrad_update", "hawkesll", "index_array", "index_copy",
    "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt", "interleaved_matmul_selfatt_qk",
    "interleaved_matmul_selfatt_valatt", "intgemm_fully_connected", "intgemm_maxabsolute", "intgemm_prepare_data",
    "intgemm_prepare_weight", "intgemm_take_weight", "quadratic", "quantize", "quantize_v2", "quantized_act",
    "quantized_batch_norm", "quantized_concat", "quantized_conv", "quantized_elemwise_add",
    "quantized_elemwise_mul", "quantized_embedding", "quantized_flatten", "quantized_fully_connected",
    "quantized_pooling", "quantized_reshape", "quantized_transpose", "requantize", "round_ste", "sign_ste",
    "sldwin_atten_context", "sldwin_atten_mask_like", "sldwin_atten_score",
]


def test_aliases_are_the_same_modules():
    assert mx.contrib.nd is mx.contrib.ndarray is mx.nd.contrib
    assert mx.contrib.sym is mx.contrib.symbol is mx.sym.contrib
    assert mx.contrib.nd.box_nms is mx.nd.contrib.box_nms
    assert importlib.import_module("mxjax.contrib.ndarray") is mx.nd.contrib
    assert importlib.import_module("mxjax.contrib.symbol") is mx.sym.contrib
    from mxjax.contrib import text
    assert text is mx.contrib.text and "contrib" in mx.__all__


def test_names_match_mxnet():
    nd_names, sym_names = set(dir(mx.contrib.nd)), set(dir(mx.contrib.sym))
    assert sorted(n for n in MXNET_NAMES if n not in nd_names) == sorted(MISSING_ND)
    assert sorted(n for n in MXNET_NAMES if n not in sym_names) == sorted(MISSING_SYM)
    assert all(hasattr(mx.contrib.nd, n) for n in MXNET_NAMES if n not in MISSING_ND)


def test_ops_run_through_both_namespaces():
    x = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    out = mx.contrib.nd.quadratic(x, a=1.0, b=0.0, c=1.0)
    assert (out.asnumpy() == x.asnumpy() ** 2 + 1).all()
    s = mx.contrib.sym.quadratic(mx.sym.var("x"), a=1.0, b=0.0, c=1.0)
    assert "quadratic" in s.tojson()
