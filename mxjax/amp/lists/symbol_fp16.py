"""AMP op tables for float16: float16 has 5 exponent bits, so anything that can overflow stays
float32 and the recurrent ``RNN`` op joins the products (cuDNN-style float16 RNNs)."""
from ._common import CONDITIONAL, MATMUL_LIKE, NEUTRAL, SAME_DTYPE_INPUTS, SENSITIVE

__all__ = ["FP16_FUNCS", "FP16_FP32_FUNCS", "FP32_FUNCS", "CONDITIONAL_FP32_FUNCS", "WIDEST_TYPE_CASTS",
           "LOSS_OUTPUT_FUNCTIONS"]

FP16_FUNCS = MATMUL_LIKE + ["RNN"]
FP16_FP32_FUNCS = list(NEUTRAL)
FP32_FUNCS = list(SENSITIVE)
CONDITIONAL_FP32_FUNCS = list(CONDITIONAL)
WIDEST_TYPE_CASTS = list(SAME_DTYPE_INPUTS)
# output layers whose gradient carries ``grad_scale``: imperative calls get the loss scale there
LOSS_OUTPUT_FUNCTIONS = ["SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
                         "MAERegressionOutput"]
