"""MXNet-to-ONNX conversion: the exporter and its table of per-op converters.

Importing this package fills the table (one module per family of ops); the
``onnx`` package itself is imported lazily by the exporter.
"""
from . import _ops_elemwise, _ops_nn, _ops_shape, _ops_reduce  # noqa: F401  (they register converters)
from ._export import export_model, get_operator_support

__all__ = ["export_model", "get_operator_support"]
