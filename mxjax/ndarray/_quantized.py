"""``mx.nd.contrib``'s quantization and intgemm functions, plus ``mx.nd.quantized_reshape`` and
``mx.nd.quantized_transpose`` (one binding each; the ops are in ``operator/quantization.py`` and
``operator/intgemm.py``)."""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from .._ndarray import NDArray

_MODULE = "mxjax.ndarray.contrib"


def _nd(op: str, name: str, module: str = _MODULE, **options: Any) -> Callable[..., Any]:
    return make_function(op, name=name, out_cls=NDArray, legacy=True, module=module, **options)


quantize = _nd("_contrib_quantize", "quantize")
quantize_v2 = _nd("_contrib_quantize_v2", "quantize_v2")
dequantize = _nd("_contrib_dequantize", "dequantize")
requantize = _nd("_contrib_requantize", "requantize")
calibrate_entropy = _nd("_contrib_calibrate_entropy", "calibrate_entropy")
quantized_act = _nd("_contrib_quantized_act", "quantized_act")
quantized_batch_norm = _nd("_contrib_quantized_batch_norm", "quantized_batch_norm")
quantized_concat = _nd("_contrib_quantized_concat", "quantized_concat", sequence_input=False)
quantized_conv = _nd("_contrib_quantized_conv", "quantized_conv")
quantized_elemwise_add = _nd("_contrib_quantized_elemwise_add", "quantized_elemwise_add")
quantized_elemwise_mul = _nd("_contrib_quantized_elemwise_mul", "quantized_elemwise_mul")
quantized_embedding = _nd("_contrib_quantized_embedding", "quantized_embedding")
quantized_flatten = _nd("_contrib_quantized_flatten", "quantized_flatten")
quantized_fully_connected = _nd("_contrib_quantized_fully_connected", "quantized_fully_connected")
quantized_pooling = _nd("_contrib_quantized_pooling", "quantized_pooling")
quantized_reshape = _nd("_contrib_quantized_reshape", "quantized_reshape")
quantized_transpose = _nd("_contrib_quantized_transpose", "quantized_transpose")
intgemm_fully_connected = _nd("_contrib_intgemm_fully_connected", "intgemm_fully_connected")
intgemm_maxabsolute = _nd("_contrib_intgemm_maxabsolute", "intgemm_maxabsolute")
intgemm_prepare_data = _nd("_contrib_intgemm_prepare_data", "intgemm_prepare_data")
intgemm_prepare_weight = _nd("_contrib_intgemm_prepare_weight", "intgemm_prepare_weight")
intgemm_take_weight = _nd("_contrib_intgemm_take_weight", "intgemm_take_weight")

# mx.nd's own names (MXNet registers the two ops under these aliases too)
nd_quantized_reshape = _nd("_contrib_quantized_reshape", "quantized_reshape", "mxjax.ndarray")
nd_quantized_transpose = _nd("_contrib_quantized_transpose", "quantized_transpose", "mxjax.ndarray")

__all__ = ["quantize", "quantize_v2", "dequantize", "requantize", "calibrate_entropy", "quantized_act",
           "quantized_batch_norm", "quantized_concat", "quantized_conv", "quantized_elemwise_add",
           "quantized_elemwise_mul", "quantized_embedding", "quantized_flatten", "quantized_fully_connected",
           "quantized_pooling", "quantized_reshape", "quantized_transpose", "intgemm_fully_connected",
           "intgemm_maxabsolute", "intgemm_prepare_data", "intgemm_prepare_weight", "intgemm_take_weight"]
