"""Converters for reductions (sum/mean/max/min/prod, argmax/argmin, norm) and products
(dot, batch_dot, matmul, linalg_gemm2).

ONNX opset 13 takes ReduceSum's axes as an input but the other reductions' as an
attribute.  MXNet's legacy reductions never return a 0-d array (a full reduction
gives shape (1,)), so results are reshaped to the inferred shape where ranks differ.
"""
from __future__ import annotations

import numpy as onp

from ._ops_elemwise import _onnx_type
from ._registry import OpNode, register

_REDUCE = {
    "ReduceSum": ("sum", "sum_axis", "_npi_sum", "_np_sum"),
    "ReduceMean": ("mean", "_npi_mean"),
    "ReduceMax": ("max", "max_axis", "_npi_max", "_np_max"),
    "ReduceMin": ("min", "min_axis", "_npi_min", "_np_min"),
    "ReduceProd": ("prod", "_npi_prod", "_np_prod"),
}


def _reduce_axes(node: OpNode) -> list[int]:
    rank = node.rank()
    axes = node.tuple_attr("axis", ())
    axes = sorted({a % rank for a in axes}) if axes else list(range(rank))
    if node.bool_attr("exclude"):
        axes = [a for a in range(rank) if a not in axes]
    return axes


def _finish_shape(node: OpNode, result: str) -> None:
    """Write ``result`` as the node's output, reshaped when ONNX gave another rank."""
    node.emit("Reshape", [result, node.ints(node.out_shapes[0], "shape")], node.out())


def _reduce(onnx_op: str):
    def convert(node: OpNode) -> None:
        x = node.inputs[0]
        if onp.dtype(node.in_dtypes[0]) != onp.dtype(node.out_dtypes[0]):
            x = node.emit("Cast", [x], to=_onnx_type(node.out_dtypes[0]))
        axes = _reduce_axes(node)
        keep = int(node.bool_attr("keepdims"))
        if not axes:  # nothing to reduce (exclude over every axis)
            node.emit("Identity", [x], node.out())
            return
        expected_rank = len(node.out_shapes[0])
        got_rank = node.rank() if keep else node.rank() - len(axes)
        direct = node.out() if expected_rank == got_rank else None
        if onnx_op == "ReduceSum":
            result = node.emit(onnx_op, [x, node.ints(axes, "axes")], direct, keepdims=keep)
        else:
            result = node.emit(onnx_op, [x], direct, axes=axes, keepdims=keep)
        if direct is None:
            _finish_shape(node, result)
    return convert


for _onnx_op, _names in _REDUCE.items():
    register(*_names)(_reduce(_onnx_op))


@register("argmax", "argmin", "_npi_argmax", "_npi_argmin")
def _arg_reduce(node: OpNode) -> None:
    onnx_op = "ArgMax" if "max" in node.op else "ArgMin"
    axis, x = node.attr("axis"), node.inputs[0]
    if axis is None:  # over the flattened array
        x, axis = node.emit("Reshape", [x, node.ints([-1], "flat")]), 0
    keep = int(node.bool_attr("keepdims"))
    index = node.emit(onnx_op, [x], axis=int(axis), keepdims=keep)
    cast_out = node.out() if len(node.out_shapes[0]) == (node.rank() if keep else node.rank() - 1) else None
    result = node.emit("Cast", [index], cast_out, to=_onnx_type(node.out_dtypes[0]))
    if cast_out is None:
        _finish_shape(node, result)


@register("norm")
def _norm(node: OpNode) -> None:
    order = int(node.attr("ord", 2))
    if order not in (1, 2):
        raise node.error(f"ord={order} is not supported (1 or 2)")
    axes = _reduce_axes(node)
    keep = int(node.bool_attr("keepdims"))
    got_rank = node.rank() if keep else node.rank() - len(axes)
    direct = node.out() if len(node.out_shapes[0]) == got_rank else None
    result = node.emit(f"ReduceL{order}", node.inputs[:1], direct, axes=axes, keepdims=keep)
    if direct is None:
        _finish_shape(node, result)


def _swap_last(node: OpNode, x: str, rank: int) -> str:
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return node.emit("Transpose", [x], perm=perm)


@register("dot")
def _dot(node: OpNode) -> None:
    a, b = node.inputs[:2]
    ra, rb = node.rank(0), node.rank(1)
    ta, tb = node.bool_attr("transpose_a"), node.bool_attr("transpose_b")
    if (ta and ra != 2) or (tb and rb != 2):
        raise node.error("transpose_a/transpose_b are supported for 2-d operands only")
    if ta:
        a = _swap_last(node, a, 2)
    if tb:
        b = _swap_last(node, b, 2)
    if rb <= 2:
        node.emit("MatMul", [a, b], node.out())
        return
    # MXNet's dot contracts a's last axis with b's first: fold b's trailing axes into one
    k = node.in_shapes[1][0]
    b2 = node.emit("Reshape", [b, node.ints([k, -1], "bshape")])
    product = node.emit("MatMul", [a, b2])
    if node.graph.dynamic:  # a.shape[:-1] + b.shape[1:], read at run time
        lead = node.emit("Slice", [node.emit("Shape", [a]), node.ints([0], "start"), node.ints([-1], "end")])
        trail = node.ints(node.in_shapes[1][1:], "trail")
        target = node.emit("Concat", [lead, trail], axis=0)
    else:
        target = node.ints(node.out_shapes[0], "shape")
    node.emit("Reshape", [product, target], node.out())


@register("batch_dot", "_npx_batch_dot", "_linalg_gemm2")
def _batch_dot(node: OpNode) -> None:
    a, b = node.inputs[:2]
    if node.bool_attr("transpose_a"):
        a = _swap_last(node, a, node.rank(0))
    if node.bool_attr("transpose_b"):
        b = _swap_last(node, b, node.rank(1))
    alpha = float(node.attr("alpha", 1.0))
    if alpha == 1.0:
        node.emit("MatMul", [a, b], node.out())
    else:
        node.emit("Mul", [node.emit("MatMul", [a, b]), node.scalar_like(alpha)], node.out())


@register("_npi_matmul")
def _matmul(node: OpNode) -> None:
    node.emit("MatMul", node.inputs[:2], node.out())


@register("_np_dot")
def _np_dot(node: OpNode) -> None:
    """NumPy's dot: a matrix product while b has at most two axes (ONNX MatMul's case)."""
    if node.rank(0) == 0 or node.rank(1) == 0:
        node.emit("Mul", node.inputs[:2], node.out())
    elif node.rank(1) <= 2:
        node.emit("MatMul", node.inputs[:2], node.out())
    else:
        raise node.error(f"dot with a {node.rank(1)}-d second operand is not supported (at most 2-d)")
