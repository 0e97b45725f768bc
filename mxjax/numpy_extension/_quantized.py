"""``mx.npx``'s quantization and intgemm functions (one binding each; the ops are in
``operator/quantization.py`` and ``operator/intgemm.py``)."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from ..numpy.multiarray import ndarray

_MODULE = "mxjax.numpy_extension"


def _npx(op: str, name: str) -> Callable[..., Any]:
    return make_function(op, name=name, out_cls=ndarray, module=_MODULE, legacy=True, keywords={})


contrib_quantize = _npx("_npx_contrib_quantize", "contrib_quantize")
contrib_quantize_v2 = _npx("_npx_contrib_quantize_v2", "contrib_quantize_v2")
contrib_calibrate_entropy = _npx("_npx_contrib_calibrate_entropy", "contrib_calibrate_entropy")
requantize = _npx("_npx_requantize", "requantize")
quantized_act = _npx("_npx_quantized_act", "quantized_act")
quantized_conv = _npx("_npx_quantized_conv", "quantized_conv")
quantized_elemwise_add = _npx("_npx_quantized_elemwise_add", "quantized_elemwise_add")
quantized_elemwise_mul = _npx("_npx_quantized_elemwise_mul", "quantized_elemwise_mul")
quantized_embedding = _npx("_npx_quantized_embedding", "quantized_embedding")
quantized_flatten = _npx("_npx_quantized_flatten", "quantized_flatten")
quantized_fully_connected = _npx("_npx_quantized_fully_connected", "quantized_fully_connected")
quantized_pooling = _npx("_npx_quantized_pooling", "quantized_pooling")
quantized_reshape = _npx("_npx_quantized_reshape", "quantized_reshape")
quantized_transpose = _npx("_npx_quantized_transpose", "quantized_transpose")
intgemm_fully_connected = _npx("_npx_intgemm_fully_connected", "intgemm_fully_connected")
intgemm_maxabsolute = _npx("_npx_intgemm_maxabsolute", "intgemm_maxabsolute")
intgemm_prepare_data = _npx("_npx_intgemm_prepare_data", "intgemm_prepare_data")
intgemm_prepare_weight = _npx("_npx_intgemm_prepare_weight", "intgemm_prepare_weight")
intgemm_take_weight = _npx("_npx_intgemm_take_weight", "intgemm_take_weight")

__all__ = ["contrib_quantize", "contrib_quantize_v2", "contrib_calibrate_entropy", "requantize", "quantized_act",
           "quantized_conv", "quantized_elemwise_add", "quantized_elemwise_mul", "quantized_embedding",
           "quantized_flatten", "quantized_fully_connected", "quantized_pooling", "quantized_reshape",
           "quantized_transpose", "intgemm_fully_connected", "intgemm_maxabsolute", "intgemm_prepare_data",
           "intgemm_prepare_weight", "intgemm_take_weight"]
