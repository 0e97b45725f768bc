"""Dynamic shapes: graphs with data-dependent ops run as compiled static segments and eager ops."""
from .segments import DynamicShapeProperty, SegmentedGraph, dynamic_ops, has_dynamic_ops

__all__ = ["DynamicShapeProperty", "SegmentedGraph", "dynamic_ops", "has_dynamic_ops"]
