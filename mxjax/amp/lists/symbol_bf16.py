"""AMP op tables for bfloat16: float32's exponent range, so nothing overflows, but only 8 mantissa
bits; recurrent cells (long accumulations through time) stay float32, and BatchNorm keeps its scale,
shift and statistics in float32 when it is asked to run in bfloat16."""
from ._common import CONDITIONAL, MATMUL_LIKE, NEUTRAL, SAME_DTYPE_INPUTS, SENSITIVE

__all__ = ["BF16_FUNCS", "BF16_FP32_FUNCS", "BF16_USE_FP32_PARAMS", "FP32_FUNCS", "CONDITIONAL_FP32_FUNCS",
           "WIDEST_TYPE_CASTS", "LOSS_OUTPUT_FUNCTIONS"]

BF16_FUNCS = list(MATMUL_LIKE)
BF16_FP32_FUNCS = list(NEUTRAL)
# op -> one entry per input: "" casts that input, a name keeps it in its own dtype
BF16_USE_FP32_PARAMS = {
    "BatchNorm": ["", "gamma", "beta", "moving_mean", "moving_var"],
}
FP32_FUNCS = SENSITIVE + ["RNN"]
CONDITIONAL_FP32_FUNCS = list(CONDITIONAL)
WIDEST_TYPE_CASTS = list(SAME_DTYPE_INPUTS)
LOSS_OUTPUT_FUNCTIONS: list = []  # bfloat16 needs no loss scaling: its range is float32's
