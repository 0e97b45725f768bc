"""Row-wise analysis of a traced function: does row ``i`` of each output depend only on row ``i`` of the inputs?

A segment downstream of a mask sees a new row count with every batch.  Padding the
rows up to a size bucket compiles once per bucket instead of once per count, but is
only correct when the padded rows cannot leak into the valid ones.  This module
decides that from the jaxpr: each value carries the axis that indexes rows (or
``None`` when it does not depend on the padded inputs), propagated through the
primitives that keep rows apart -- elementwise math, broadcasts, matrix products
over other axes, reductions over other axes, convolutions over the batch axis.
Anything else that touches a row axis (a reduction over rows, a gather by row, a
loop) raises :class:`NotRowWise`; the caller then compiles per exact shape.

Reductions *over* rows are not handled here: the segment planner rewrites the
graph's ``sum``/``mean``/``max``... nodes to skip padded rows before tracing.
"""
from __future__ import annotations

from typing import Any, Sequence

from jax.extend import core

__all__ = ["NotRowWise", "row_axes"]


class NotRowWise(Exception):
    """A primitive mixes rows (or moves the row axis in a way the analysis does not follow)."""


# primitives whose output element depends on the same element of every operand
_ELEMENTWISE = frozenset("""
abs acos acosh add and asin asinh atan atan2 atanh cbrt ceil clamp conj convert_element_type copy copy_p
cos cosh digamma div eq erf erf_inv erfc exp exp2 expm1 floor ge gt igamma igammac imag integer_pow
is_finite le lgamma log log1p logistic lt max min mul ne neg nextafter not or population_count pow real
reduce_precision rem round rsqrt select_n shift_left shift_right_arithmetic shift_right_logical sign sin
sinh sqrt square stop_gradient sub tan tanh xor bessel_i0e bessel_i1e polygamma zeta random_wrap
random_unwrap
""".split())
_REDUCTIONS = frozenset("reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor "
                        "argmax argmin".split())
_CUMULATIVE = frozenset("cumsum cumprod cummax cummin cumlogsumexp".split())
_CALL_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")  # jit/pjit, custom_jvp_call, custom_vjp_call


def row_axes(jaxpr: core.Jaxpr, in_axes: Sequence[int | None]) -> list[int | None]:
    """The row axis of each output of ``jaxpr`` given the row axis of each input (``None``: row-free);
    raises :class:`NotRowWise` when rows can mix."""
    axes: dict[Any, int | None] = {}
    for var, axis in zip(jaxpr.invars, in_axes):
        axes[var] = axis

    def axis_of(atom: Any) -> int | None:
        return None if isinstance(atom, core.Literal) else axes.get(atom)

    for eqn in jaxpr.eqns:
        in_tags = [axis_of(v) for v in eqn.invars]
        if all(t is None for t in in_tags):
            outs = [None] * len(eqn.outvars)
        else:
            outs = _rule(eqn, in_tags)
        for var, axis in zip(eqn.outvars, outs):
            axes[var] = axis
    return [axis_of(v) for v in jaxpr.outvars]


def _shape(atom: Any) -> tuple:
    return tuple(getattr(atom.aval, "shape", ()))


def _single(eqn: Any, tags: list) -> tuple[int, tuple]:
    """The row axis of the only row-carrying operand (a primitive with one data operand)."""
    found = [(t, _shape(v)) for t, v in zip(tags, eqn.invars) if t is not None]
    if len(found) != 1:
        raise NotRowWise(eqn.primitive.name)
    return found[0]


def _rule(eqn: Any, tags: list) -> list[int | None]:
    name, params = eqn.primitive.name, eqn.params
    n_out = len(eqn.outvars)
    if name in _ELEMENTWISE:
        axis = _common(eqn, tags)
        return [axis] * n_out
    for key in _CALL_PARAMS:
        inner = params.get(key)
        if inner is not None and name not in ("scan", "while", "cond"):
            inner = getattr(inner, "jaxpr", inner)
            return row_axes(inner, tags)
    if name == "broadcast_in_dim":
        axis, shape = _single(eqn, tags)
        out = params["broadcast_dimensions"][axis]
        if _shape(eqn.outvars[0])[out] != shape[axis]:
            raise NotRowWise(name)
        return [out]
    if name == "reshape":
        axis, shape = _single(eqn, tags)
        if axis != 0 or params.get("dimensions") is not None or tuple(params["new_sizes"])[:1] != shape[:1]:
            raise NotRowWise(name)
        return [0]
    if name == "transpose":
        axis, _ = _single(eqn, tags)
        return [list(params["permutation"]).index(axis)]
    if name == "squeeze":
        axis, _ = _single(eqn, tags)
        dims = params["dimensions"]
        if axis in dims:
            raise NotRowWise(name)
        return [axis - sum(1 for d in dims if d < axis)]
    if name in _REDUCTIONS:
        axis, _ = _single(eqn, tags)
        dims = params["axes"]
        if axis in dims:
            raise NotRowWise(name)
        return [axis - sum(1 for d in dims if d < axis)] * n_out
    if name in _CUMULATIVE:  # a running total along rows only looks backwards: padding comes last
        axis, _ = _single(eqn, tags)
        if params["axis"] == axis and params.get("reverse"):
            raise NotRowWise(name)
        return [axis]
    if name in ("slice", "pad", "rev", "tile"):
        axis, shape = _single(eqn, tags)
        if name == "slice":
            strides = params.get("strides") or (1,) * len(shape)
            untouched = (params["start_indices"][axis] == 0 and params["limit_indices"][axis] == shape[axis]
                         and strides[axis] == 1)
        elif name == "pad":
            untouched = tuple(params["padding_config"][axis]) == (0, 0, 0)
        elif name == "tile":
            untouched = params["reps"][axis] == 1
        else:
            untouched = axis not in params["dimensions"]
        if not untouched:
            raise NotRowWise(name)
        return [axis]
    if name in ("concatenate", "split", "sort"):
        axis = _common(eqn, tags)
        if params.get("dimension", params.get("axis")) == axis:
            raise NotRowWise(name)
        return [axis] * n_out
    if name == "dot_general":
        return [_dot_general(eqn, tags)]
    if name == "conv_general_dilated":
        lhs, rhs = tags
        numbers = params["dimension_numbers"]
        if rhs is not None or lhs != numbers.lhs_spec[0] or params["batch_group_count"] != 1:
            raise NotRowWise(name)
        return [numbers.out_spec[0]]
    if name == "gather":
        return [_gather(eqn, tags)]
    raise NotRowWise(name)


def _common(eqn: Any, tags: list) -> int:
    """The row axis shared by all row-carrying operands of an elementwise-like primitive."""
    found = {t for t in tags if t is not None}
    if len(found) != 1:
        raise NotRowWise(eqn.primitive.name)
    return found.pop()


def _dot_general(eqn: Any, tags: list) -> int:
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = tags
    l_rank, r_rank = len(_shape(eqn.invars[0])), len(_shape(eqn.invars[1]))
    l_free = [d for d in range(l_rank) if d not in lc and d not in lb]
    r_free = [d for d in range(r_rank) if d not in rc and d not in rb]
    if lhs is not None and rhs is not None:  # rows meet rows: only a shared batch axis keeps them apart
        if lhs in lb and rhs in rb and list(lb).index(lhs) == list(rb).index(rhs):
            return list(lb).index(lhs)
        raise NotRowWise("dot_general")
    if lhs is not None:
        if lhs in lc or lhs in lb:
            raise NotRowWise("dot_general")
        return len(lb) + l_free.index(lhs)
    if rhs in rc or rhs in rb:
        raise NotRowWise("dot_general")
    return len(lb) + len(l_free) + r_free.index(rhs)


def _gather(eqn: Any, tags: list) -> int:
    """Rows of indices gather rows of output (``take`` along another axis, ``Embedding``)."""
    operand, indices = tags
    numbers = eqn.params["dimension_numbers"]
    index_rank = len(_shape(eqn.invars[1]))
    if operand is not None or indices is None or indices == index_rank - 1 or numbers.operand_batching_dims:
        raise NotRowWise("gather")
    out_rank = len(_shape(eqn.outvars[0]))
    batch_positions = [d for d in range(out_rank) if d not in numbers.offset_dims]
    return batch_positions[indices]
