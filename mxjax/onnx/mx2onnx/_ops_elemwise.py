"""Converters for element-wise MXNet ops: unary math, binary arithmetic and comparisons
(elemwise_*, broadcast_*, _npi_*), and the ops with a scalar operand (_*_scalar).

Legacy comparison ops return 0/1 in the input's dtype while the ``_npi_`` ones return
bool, so the legacy forms cast the ONNX boolean result back.
"""
from __future__ import annotations

import numpy as onp

from ._registry import OpNode, register

# -- unary ops that map one to one ------------------------------------------------------
_UNARY = {
    "Relu": ("relu", "_npx_relu"),
    "Sigmoid": ("sigmoid", "_npx_sigmoid"),
    "Tanh": ("tanh", "_npi_tanh"),
    "Exp": ("exp", "_npi_exp"),
    "Log": ("log", "_npi_log"),
    "Sqrt": ("sqrt", "_npi_sqrt"),
    "Abs": ("abs", "_npi_absolute"),
    "Neg": ("negative", "_npi_negative"),
    "Reciprocal": ("reciprocal", "_npi_reciprocal"),
    "Floor": ("floor", "_npi_floor"),
    "Ceil": ("ceil", "_npi_ceil"),
    "Sin": ("sin", "_npi_sin"),
    "Cos": ("cos", "_npi_cos"),
    "Tan": ("tan", "_npi_tan"),
    "Asin": ("arcsin", "_npi_arcsin"),
    "Acos": ("arccos", "_npi_arccos"),
    "Atan": ("arctan", "_npi_arctan"),
    "Sinh": ("sinh", "_npi_sinh"),
    "Cosh": ("cosh", "_npi_cosh"),
    "Erf": ("erf", "_npx_erf"),
    "Sign": ("sign", "_npi_sign"),
    "Softsign": ("softsign", "_npx_softsign"),
    "Identity": ("_copy", "identity", "BlockGrad", "stop_gradient", "_npx_stop_gradient", "MakeLoss", "make_loss",
                 "_npi_copy"),
}


def _unary(onnx_op: str):
    def convert(node: OpNode) -> None:
        node.emit(onnx_op, node.inputs[:1], node.out())
    return convert


for _onnx_op, _names in _UNARY.items():
    register(*_names)(_unary(_onnx_op))


@register("square", "_npi_square")
def _square(node: OpNode) -> None:
    node.emit("Mul", [node.inputs[0], node.inputs[0]], node.out())


@register("rsqrt")
def _rsqrt(node: OpNode) -> None:
    node.emit("Reciprocal", [node.emit("Sqrt", node.inputs[:1])], node.out())


@register("log2", "_npi_log2", "log10", "_npi_log10")
def _log_base(node: OpNode) -> None:
    base = 2.0 if "2" in node.op else 10.0
    ln = node.emit("Log", node.inputs[:1])
    node.emit("Div", [ln, node.scalar_like(onp.log(base))], node.out())


@register("round", "_npi_around")
def _round(node: OpNode) -> None:
    if node.attr("decimals", 0) != 0:
        raise node.error(f"decimals={node.attrs['decimals']} is not supported (only 0)")
    node.emit("Round", node.inputs[:1], node.out())


# -- binary ops ---------------------------------------------------------------------------
_BINARY = {
    "Add": ("elemwise_add", "_plus", "_Plus", "_add", "broadcast_add", "broadcast_plus", "_npi_add"),
    "Sub": ("elemwise_sub", "_minus", "_Minus", "_sub", "broadcast_sub", "broadcast_minus", "_npi_subtract"),
    "Mul": ("elemwise_mul", "_mul", "_Mul", "broadcast_mul", "_npi_multiply"),
    "Div": ("elemwise_div", "_div", "_Div", "broadcast_div", "_npi_true_divide"),
    "Pow": ("_power", "_Power", "broadcast_power", "_npi_power"),
    "Max": ("_maximum", "_Maximum", "broadcast_maximum", "_npi_maximum"),
    "Min": ("_minimum", "_Minimum", "broadcast_minimum", "_npi_minimum"),
    "Mod": ("broadcast_mod", "_mod", "_npi_mod"),
}


def _binary(onnx_op: str):
    def convert(node: OpNode) -> None:
        if onnx_op != "Mod":
            node.emit(onnx_op, node.inputs[:2], node.out())
        elif onp.issubdtype(node.out_dtypes[0], onp.floating):
            _float_mod(node, node.inputs[0], node.inputs[1])
        else:
            node.emit("Mod", node.inputs[:2], node.out(), fmod=0)
    return convert


def _float_mod(node: OpNode, a: str, b: str) -> None:
    """Python-style modulo for floats (the result takes the sign of the divisor)."""
    quotient = node.emit("Floor", [node.emit("Div", [a, b])])
    node.emit("Sub", [a, node.emit("Mul", [quotient, b])], node.out())


for _onnx_op, _names in _BINARY.items():
    register(*_names)(_binary(_onnx_op))


@register("add_n", "ElementWiseSum")
def _add_n(node: OpNode) -> None:
    node.emit("Sum", node.inputs, node.out())


# -- comparisons and logic ---------------------------------------------------------------
_COMPARE = {
    "Equal": ("broadcast_equal", "_equal", "_npi_equal"),
    "Greater": ("broadcast_greater", "_greater", "_npi_greater"),
    "GreaterOrEqual": ("broadcast_greater_equal", "_greater_equal", "_npi_greater_equal"),
    "Less": ("broadcast_lesser", "_lesser", "_npi_less"),
    "LessOrEqual": ("broadcast_lesser_equal", "_lesser_equal", "_npi_less_equal"),
    "NotEqual": ("broadcast_not_equal", "_not_equal", "_npi_not_equal"),
    "And": ("broadcast_logical_and", "_npi_logical_and"),
    "Or": ("broadcast_logical_or", "_npi_logical_or"),
    "Xor": ("broadcast_logical_xor", "_npi_logical_xor"),
}


def _finish_bool(node: OpNode, onnx_op: str, inputs: list[str]) -> None:
    """Emit a boolean-valued op, cast to the output dtype MXNet gives it."""
    if onnx_op in ("And", "Or", "Xor"):
        inputs = [node.emit("Cast", [x], to=_onnx_type(onp.dtype(bool))) for x in inputs]
    if onnx_op == "NotEqual":
        onnx_op, negate = "Equal", True
    else:
        negate = False
    result = node.emit(onnx_op, inputs)
    if negate:
        result = node.emit("Not", [result])
    node.emit("Cast", [result], node.out(), to=_onnx_type(node.out_dtypes[0]))


def _onnx_type(dtype: onp.dtype) -> int:
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(onp.dtype(dtype))


def _compare(onnx_op: str):
    def convert(node: OpNode) -> None:
        _finish_bool(node, onnx_op, node.inputs[:2])
    return convert


for _onnx_op, _names in _COMPARE.items():
    register(*_names)(_compare(_onnx_op))


@register("logical_not", "_npi_logical_not")
def _logical_not(node: OpNode) -> None:
    as_bool = node.emit("Cast", node.inputs[:1], to=_onnx_type(onp.dtype(bool)))
    node.emit("Cast", [node.emit("Not", [as_bool])], node.out(), to=_onnx_type(node.out_dtypes[0]))


# -- ops with a scalar operand -----------------------------------------------------------
# ONNX op ("/r": the scalar is the left operand) -> (MXNet ops, scalar goes first)
_SCALAR = {
    "Add": (("_plus_scalar", "_npi_add_scalar"), False),
    "Sub": (("_minus_scalar", "_npi_subtract_scalar"), False),
    "Sub/r": (("_rminus_scalar", "_npi_rsubtract_scalar"), True),
    "Mul": (("_mul_scalar", "_npi_multiply_scalar"), False),
    "Div": (("_div_scalar", "_npi_true_divide_scalar"), False),
    "Div/r": (("_rdiv_scalar", "_npi_rtrue_divide_scalar"), True),
    "Pow": (("_power_scalar", "_npi_power_scalar"), False),
    "Pow/r": (("_rpower_scalar", "_npi_rpower_scalar"), True),
    "Max": (("_maximum_scalar", "_npi_maximum_scalar"), False),
    "Min": (("_minimum_scalar", "_npi_minimum_scalar"), False),
    "Mod": (("_mod_scalar", "_npi_mod_scalar"), False),
    "Mod/r": (("_rmod_scalar", "_npi_rmod_scalar"), True),
}


def _scalar_operand(node: OpNode) -> str:
    """The op's ``scalar`` as a constant of the output dtype (``_npi_`` int scalars on a
    float array give a float result, as MXNet's type rule does)."""
    value = node.attr("scalar", 0.0)
    return node.const(value, node.out_dtypes[0], "scalar")


def _with_scalar(onnx_op: str, scalar_first: bool):
    def convert(node: OpNode) -> None:
        x = node.inputs[0]
        if onp.dtype(node.in_dtypes[0]) != onp.dtype(node.out_dtypes[0]):
            x = node.emit("Cast", [x], to=_onnx_type(node.out_dtypes[0]))
        s = _scalar_operand(node)
        pair = [s, x] if scalar_first else [x, s]
        if onnx_op == "Mod":
            if onp.issubdtype(node.out_dtypes[0], onp.floating):
                _float_mod(node, *pair)
            else:
                node.emit("Mod", pair, node.out(), fmod=0)
            return
        node.emit(onnx_op, pair, node.out())
    return convert


for _key, (_names, _first) in _SCALAR.items():
    register(*_names)(_with_scalar(_key.split("/")[0], _first))


_SCALAR_COMPARE = {
    "Equal": ("_equal_scalar", "_npi_equal_scalar"),
    "NotEqual": ("_not_equal_scalar", "_npi_not_equal_scalar"),
    "Greater": ("_greater_scalar", "_npi_greater_scalar"),
    "GreaterOrEqual": ("_greater_equal_scalar", "_npi_greater_equal_scalar"),
    "Less": ("_lesser_scalar", "_npi_less_scalar"),
    "LessOrEqual": ("_lesser_equal_scalar", "_npi_less_equal_scalar"),
}


def _compare_scalar(onnx_op: str):
    def convert(node: OpNode) -> None:
        _finish_bool(node, onnx_op, [node.inputs[0], node.const(node.attr("scalar", 0.0), node.in_dtypes[0])])
    return convert


for _onnx_op, _names in _SCALAR_COMPARE.items():
    register(*_names)(_compare_scalar(_onnx_op))


@register("clip", "_npi_clip")
def _clip(node: OpNode) -> None:
    low, high = node.attr("a_min"), node.attr("a_max")
    inputs = [node.inputs[0],
              "" if low is None else node.scalar_like(low, hint="min"),
              "" if high is None else node.scalar_like(high, hint="max")]
    while inputs[-1] == "":
        inputs.pop()
    node.emit("Clip", inputs, node.out())


@register("where", "_npi_where")
def _where(node: OpNode) -> None:
    cond = node.emit("Cast", node.inputs[:1], to=_onnx_type(onp.dtype(bool)))
    c_shape, x_shape = node.in_shapes[0], node.in_shapes[1]
    if node.op == "where" and len(c_shape) == 1 and len(x_shape) > 1:
        # legacy where with a vector condition picks whole rows of x / y
        cond = node.emit("Unsqueeze", [cond, node.ints(range(1, len(x_shape)), "axes")])
    node.emit("Where", [cond, node.inputs[1], node.inputs[2]], node.out())


@register("Cast", "cast", "amp_cast")
def _cast(node: OpNode) -> None:
    node.emit("Cast", node.inputs[:1], node.out(), to=_onnx_type(node.out_dtypes[0]))
