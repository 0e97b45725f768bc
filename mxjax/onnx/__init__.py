"""``mx.onnx``: export a symbolic MXNet model (Symbol + parameters) to an ONNX file.

The ``onnx`` package is an optional extra (``pip install mxjax[onnx]``); it is imported
only when a function here is called, so ``import mxjax.onnx`` always works.
"""
from .mx2onnx import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
