"""Converters for MXNet ops that move or regroup elements: Flatten, the reshape family
(with MXNet's special shape codes), transpose, concat/stack/split, slicing,
expand_dims/squeeze, tile/broadcast_to and repeat-free indexing.

A reshape's target is known from shape inference; with a static batch it is written
as a constant.  With ``dynamic=True`` the MXNet codes are turned into ONNX's own
(0 = keep, -1 = infer) where they line up, and into a Shape/Gather computation where
they do not, so that the dynamic input dimensions stay free.
"""
from __future__ import annotations

from typing import Any

from ._registry import OpNode, register

INT64_MAX = 2 ** 63 - 1


@register("Flatten", "flatten")
def _flatten(node: OpNode) -> None:
    node.emit("Flatten", node.inputs[:1], node.out(), axis=1)


# -- reshape: each output dim as a recipe over the input dims ------------------------------
# ("const", v)  a fixed size; ("copy", i)  input dim i; ("prod", (i, j))  dims i*j;
# ("infer",)  the one dim ONNX infers (-1)

# what the special codes mean: Reshape's ``shape`` (legacy) and npx.reshape's ``newshape``;
# any other non-negative code is a fixed size
_LEGACY_CODES = {0: "copy", -1: "infer", -2: "rest", -3: "prod", -4: "split"}
_NPX_CODES = {-1: "infer", -2: "copy", -3: "skip", -4: "rest", -5: "prod", -6: "split"}


def _recipe(codes: list[int], rank: int, meaning: dict) -> list[tuple]:
    recipe, src, k = [], 0, 0
    while k < len(codes):
        code = codes[k]
        action = meaning.get(code, "const" if code >= 0 else None)
        if action == "const":
            recipe.append(("const", code))
            src += 1
        elif action in ("infer", "copy"):
            recipe.append(("infer",) if action == "infer" else ("copy", src))
            src += 1
        elif action == "skip":
            src += 1
        elif action == "rest":
            recipe.extend(("copy", i) for i in range(src, rank))
            src = rank
        elif action == "prod":
            recipe.append(("prod", (src, src + 1)))
            src += 2
        elif action == "split":
            recipe.extend(("infer",) if d == -1 else ("const", d) for d in codes[k + 1:k + 3])
            src += 1
            k += 2
        else:
            raise ValueError(f"unknown reshape code {code}")
        k += 1
    return recipe


def _legacy_recipe(codes: list[int], rank: int) -> list[tuple]:
    return _recipe(codes, rank, _LEGACY_CODES)


def _npx_recipe(codes: list[int], rank: int) -> list[tuple]:
    return _recipe(codes, rank, _NPX_CODES)


def _reversed_recipe(build: Any, codes: list[int], rank: int) -> list[tuple]:
    """MXNet's ``reverse=True``: read codes and dims right to left."""
    recipe = []
    for kind, *arg in reversed(build(codes[::-1], rank)):
        if kind == "copy":
            recipe.append(("copy", rank - 1 - arg[0]))
        elif kind == "prod":
            recipe.append(("prod", (rank - 1 - arg[0][1], rank - 1 - arg[0][0])))
        else:
            recipe.append((kind, *arg))
    return recipe


def _emit_reshape(node: OpNode, recipe: list[tuple]) -> None:
    """Reshape to the inferred shape: a constant, or (dynamic models) built from ``recipe``."""
    x = node.inputs[0]
    if not node.graph.dynamic:
        node.emit("Reshape", [x, node.ints(node.out_shapes[0], "shape")], node.out())
        return
    simple = []
    for pos, (kind, *arg) in enumerate(recipe):
        if kind == "const":
            simple.append(arg[0] if arg[0] != 0 else None)
        elif kind == "infer":
            simple.append(-1)
        elif kind == "copy" and arg[0] == pos:
            simple.append(0)
        else:
            simple.append(None)
    if None not in simple:
        node.emit("Reshape", [x, node.ints(simple, "shape")], node.out())
        return
    dims = node.emit("Shape", [x])
    parts = []
    for kind, *arg in recipe:
        if kind == "const":
            parts.append(node.ints([arg[0]], "dim"))
        elif kind == "infer":
            parts.append(node.ints([-1], "dim"))
        elif kind == "copy":
            parts.append(node.emit("Gather", [dims, node.ints([arg[0]], "index")], axis=0))
        else:
            i, j = arg[0]
            parts.append(node.emit("Mul", [node.emit("Gather", [dims, node.ints([i], "index")], axis=0),
                                           node.emit("Gather", [dims, node.ints([j], "index")], axis=0)]))
    node.emit("Reshape", [x, node.emit("Concat", parts, axis=0)], node.out())


def _coded_reshape(node: OpNode, key: str, build: Any) -> None:
    codes = list(node.tuple_attr(key, ()))
    if not codes:
        raise node.error(f"no {key} given (the target_shape form of Reshape is not supported)")
    try:
        if node.bool_attr("reverse"):
            recipe = _reversed_recipe(build, codes, node.rank())
        else:
            recipe = build(codes, node.rank())
    except ValueError as err:
        raise node.error(f"{key}={tuple(codes)}: {err}") from None
    _emit_reshape(node, recipe)


@register("Reshape", "reshape")
def _reshape(node: OpNode) -> None:
    _coded_reshape(node, "shape", _legacy_recipe)


@register("_npx_reshape")
def _npx_reshape(node: OpNode) -> None:
    _coded_reshape(node, "newshape", _npx_recipe)


@register("_np_reshape", "_npi_reshape")
def _np_reshape(node: OpNode) -> None:
    if node.attr("order", "C") != "C":
        raise node.error("only order='C' is supported")
    codes = list(node.tuple_attr("newshape", ()))
    _emit_reshape(node, [("infer",) if c == -1 else ("const", c) for c in codes])


@register("reshape_like")
def _reshape_like(node: OpNode) -> None:
    if any(node.attr(k) is not None for k in ("lhs_begin", "lhs_end", "rhs_begin", "rhs_end")):
        raise node.error("partial reshape_like (lhs_begin/lhs_end/rhs_begin/rhs_end) is not supported")
    node.emit("Reshape", [node.inputs[0], node.emit("Shape", [node.inputs[1]])], node.out())


@register("transpose", "_npi_transpose", "_np_transpose")
def _transpose(node: OpNode) -> None:
    axes = node.tuple_attr("axes", ())
    perm = [a % node.rank() for a in axes] if axes else list(range(node.rank()))[::-1]
    node.emit("Transpose", node.inputs[:1], node.out(), perm=perm)


@register("SwapAxis", "swapaxes", "_np_swapaxes")
def _swapaxes(node: OpNode) -> None:
    perm = list(range(node.rank()))
    first, second = ("dim1", "dim2") if "dim1" in node.attrs or "dim2" in node.attrs else ("axis1", "axis2")
    a, b = (int(node.attr(k, 0)) % node.rank() for k in (first, second))
    perm[a], perm[b] = perm[b], perm[a]
    node.emit("Transpose", node.inputs[:1], node.out(), perm=perm)


@register("Concat", "concat")
def _concat(node: OpNode) -> None:
    node.emit("Concat", node.inputs, node.out(), axis=int(node.attr("dim", 1)))


@register("_npi_concatenate")
def _np_concatenate(node: OpNode) -> None:
    if "axis" in node.attrs and node.attr("axis") is None:  # axis=None joins the flattened arrays
        flat = [node.emit("Reshape", [x, node.ints([-1], "flat")]) for x in node.inputs]
        node.emit("Concat", flat, node.out(), axis=0)
        return
    node.emit("Concat", node.inputs, node.out(), axis=int(node.attr("axis", 0)))


@register("stack", "_npi_stack")
def _stack(node: OpNode) -> None:
    axis = int(node.attr("axis", 0)) % (node.rank() + 1)
    axes = node.ints([axis], "axes")
    node.emit("Concat", [node.emit("Unsqueeze", [x, axes]) for x in node.inputs], node.out(), axis=axis)


@register("SliceChannel", "split")
def _split(node: OpNode) -> None:
    axis = int(node.attr("axis", 1)) % node.rank()
    pieces = node.emit("Split", node.inputs[:1], len(node.outputs), axis=axis)
    pieces = [pieces] if isinstance(pieces, str) else pieces
    for piece, name in zip(pieces, node.outputs):
        if node.bool_attr("squeeze_axis"):
            node.emit("Squeeze", [piece, node.ints([axis], "axes")], [name])
        else:
            node.emit("Identity", [piece], [name])


def _slice_bounds(begin: Any, end: Any, step: Any, size: int) -> tuple[int, int, int]:
    step = 1 if step is None else int(step)
    if begin is None:
        begin = 0 if step > 0 else -1
    if end is None:
        end = INT64_MAX if step > 0 else -INT64_MAX
    return int(begin), int(end), step


def _emit_slice(node: OpNode, axes: list[int], bounds: list[tuple[int, int, int]]) -> None:
    starts, ends, steps = zip(*bounds) if bounds else ((), (), ())
    node.emit("Slice", [node.inputs[0], node.ints(starts, "starts"), node.ints(ends, "ends"),
                        node.ints(axes, "axes"), node.ints(steps, "steps")], node.out())


@register("slice", "crop")
def _slice(node: OpNode) -> None:
    begin, end = node.tuple_attr("begin"), node.tuple_attr("end")
    step = node.tuple_attr("step", ()) or (None,) * len(begin)
    shape = node.in_shapes[0]
    bounds = [_slice_bounds(b, e, s, shape[i]) for i, (b, e, s) in enumerate(zip(begin, end, step))]
    _emit_slice(node, list(range(len(bounds))), bounds)


@register("slice_axis")
def _slice_axis(node: OpNode) -> None:
    axis = int(node.attr("axis")) % node.rank()
    bounds = _slice_bounds(node.attr("begin"), node.attr("end"), 1, node.in_shapes[0][axis])
    _emit_slice(node, [axis], [bounds])


@register("slice_like")
def _slice_like(node: OpNode) -> None:
    axes = node.tuple_attr("axes", ()) or tuple(range(node.rank()))
    axes = [a % node.rank() for a in axes]
    like = node.emit("Gather", [node.emit("Shape", [node.inputs[1]]), node.ints(axes, "axes")], axis=0)
    node.emit("Slice", [node.inputs[0], node.ints([0] * len(axes), "starts"), like, node.ints(axes, "axes")],
              node.out())


@register("expand_dims", "_npi_expand_dims")
def _expand_dims(node: OpNode) -> None:
    axis = int(node.attr("axis")) % (node.rank() + 1)
    node.emit("Unsqueeze", [node.inputs[0], node.ints([axis], "axes")], node.out())


@register("squeeze", "_npi_squeeze", "_np_squeeze")
def _squeeze(node: OpNode) -> None:
    axes = node.tuple_attr("axis", ())
    if not axes:
        axes = [i for i, d in enumerate(node.in_shapes[0]) if d == 1]
    axes = [a % node.rank() for a in axes]
    if not axes:
        node.emit("Identity", node.inputs[:1], node.out())
        return
    squeezed = node.out() if len(axes) < node.rank() else None
    result = node.emit("Squeeze", [node.inputs[0], node.ints(axes, "axes")], squeezed)
    if squeezed is None:  # MXNet's legacy squeeze keeps a 1-element array 1-d
        node.emit("Reshape", [result, node.ints(node.out_shapes[0], "shape")], node.out())


@register("tile", "_npi_tile")
def _tile(node: OpNode) -> None:
    reps = list(node.tuple_attr("reps"))
    x, rank = node.inputs[0], node.rank()
    if len(reps) > rank:  # tiling adds leading axes first
        x = node.emit("Reshape", [x, node.ints([1] * (len(reps) - rank) + list(node.in_shapes[0]), "shape")])
    reps = [1] * max(0, rank - len(reps)) + reps
    node.emit("Tile", [x, node.ints(reps, "reps")], node.out())


@register("broadcast_to", "_npi_broadcast_to", "broadcast_like", "broadcast_axis", "broadcast_axes")
def _broadcast_to(node: OpNode) -> None:
    if node.graph.dynamic and node.op == "broadcast_like":
        shape = node.emit("Shape", [node.inputs[1]])
    else:
        # Expand broadcasts both ways: a 1 keeps the input's own size, so axes that do not
        # grow stay free in a dynamic model
        ins = (1,) * (len(node.out_shapes[0]) - node.rank()) + tuple(node.in_shapes[0])
        shape = node.ints([1 if i == o else o for i, o in zip(ins, node.out_shapes[0])], "shape")
    node.emit("Expand", [node.inputs[0], shape], node.out())


@register("zeros_like", "ones_like", "_np_zeros_like", "_np_ones_like")
def _fill_like(node: OpNode) -> None:
    value = 1 if "ones" in node.op else 0
    zero = node.emit("Mul", [node.inputs[0], node.scalar_like(0)])
    node.emit("Add", [zero, node.scalar_like(value)], node.out())


@register("shape_array", "size_array")
def _shape_array(node: OpNode) -> None:
    dims = node.emit("Shape", node.inputs[:1])
    if node.op == "size_array":
        dims = node.emit("Reshape", [node.emit("ReduceProd", [dims], keepdims=0), node.ints([1], "one")])
    node.emit("Identity", [dims], node.out())

