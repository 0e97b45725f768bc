"""The default AMP op tables: which mxjax ops run in the low-precision dtype, which stay in float32.

``symbol_fp16`` holds the tables for float16 (GPUs), ``symbol_bf16`` those for bfloat16 (CPUs, TPUs).
Names are mxjax operator names (any registered name or alias of an op selects that op).
"""
from . import symbol_bf16, symbol_fp16

__all__ = ["symbol_fp16", "symbol_bf16"]
