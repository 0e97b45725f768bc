"""Legacy (MXNet 1.x) slicing, joining, reshaping and broadcasting ops with their 1.x parameters."""
from __future__ import annotations

from math import prod

import jax.numpy as jnp

from ..base import MXNetIndexError, MXNetValueError
from ._checked import guard
from .legacy_reduce import norm_axis
from .registry import defop


def _shape(x) -> tuple:
    return tuple(x.shape)


# ----------------------------------------------------------------------------- slicing

@defop("slice", aliases=("crop",))
def legacy_slice(data, *, begin: tuple = (), end: tuple = (), step: tuple = ()):
    """Slice the leading axes: ``data[begin[0]:end[0]:step[0], ...]`` (None entries mean the default)."""
    begin, end, step = tuple(begin), tuple(end), tuple(step or ())
    if len(begin) != len(end) or (step and len(step) != len(begin)):
        raise MXNetValueError(f"slice: begin {begin}, end {end} and step {step} must have the same length")
    if len(begin) > data.ndim:
        raise MXNetValueError(f"slice: {len(begin)} axes given for an input of shape {_shape(data)}")
    steps = step or (None,) * len(begin)
    if any(s == 0 for s in steps):
        raise MXNetValueError(f"slice: step cannot be 0 (step={step})")
    return data[tuple(slice(b, e, s) for b, e, s in zip(begin, end, steps))]


@defop("slice_axis")
def slice_axis(data, *, axis: int = 0, begin: int = 0, end: int | None = None):
    """Slice along one axis: ``data[..., begin:end, ...]`` (end None: to the end)."""
    ax = norm_axis(axis, data.ndim, "slice_axis")
    n = data.shape[ax]
    b = begin + n if begin < 0 else begin
    e = n if end is None else (end + n if end < 0 else end)
    if not 0 <= b < e <= n:
        raise MXNetValueError(f"slice_axis: invalid slice [{begin}, {end}) of axis {axis} with size {n}")
    return data[(slice(None),) * ax + (slice(b, e),)]


@defop("slice_like")
def slice_like(data, shape_like, *, axes: shape = ()):
    """Slice ``data`` to the shape of ``shape_like`` along ``axes`` (all axes if empty)."""
    if not axes:
        if data.ndim != shape_like.ndim:
            raise MXNetValueError(f"slice_like: shapes {_shape(data)} and {_shape(shape_like)} "
                                  "must have the same number of dimensions when axes is empty")
        axes = tuple(range(data.ndim))
    key = [slice(None)] * data.ndim
    for a in axes:
        a_data = norm_axis(a, data.ndim, "slice_like")
        size = shape_like.shape[norm_axis(a, shape_like.ndim, "slice_like")]
        if size > data.shape[a_data]:
            raise MXNetValueError(f"slice_like: cannot slice axis {a} of {_shape(data)} to size {size}")
        key[a_data] = slice(0, size)
    return data[tuple(key)]


@defop("SliceChannel", num_outputs=lambda params: params.get("num_outputs", 1))
def slice_channel(data, *, num_outputs: int = 1, axis: int = 1, squeeze_axis: bool = False):
    """Split into ``num_outputs`` equal parts along ``axis`` (1.x ``split``); a single part is returned as is."""
    ax = norm_axis(axis, data.ndim, "SliceChannel")
    n = data.shape[ax]
    if num_outputs < 1 or n % num_outputs:
        raise MXNetValueError(f"SliceChannel: axis {axis} of shape {_shape(data)} cannot be split "
                              f"into {num_outputs} equal parts")
    if squeeze_axis and n != num_outputs:
        raise MXNetValueError(f"SliceChannel: squeeze_axis needs num_outputs == the axis size "
                              f"({num_outputs} vs {n})")
    parts = jnp.split(data, num_outputs, axis=ax)
    if squeeze_axis:
        parts = [jnp.squeeze(p, axis=ax) for p in parts]
    return parts[0] if num_outputs == 1 else tuple(parts)


@defop("_split_v2", num_outputs=lambda params: len(params.get("indices") or ()) or params.get("sections", 1))
def split_v2(data, *, indices: tuple = (), axis: int = 0, squeeze_axis: bool = False, sections: int = 0):
    """MXNet 2's ``split_v2``: ``sections`` equal parts, or parts starting at ``indices`` (the first is 0)."""
    ax = norm_axis(axis, data.ndim, "_split_v2")
    if not indices and (sections < 1 or data.shape[ax] % sections):
        raise MXNetValueError(f"_split_v2: axis {axis} of shape {_shape(data)} cannot be split "
                              f"into {sections} equal sections")
    parts = jnp.split(data, list(indices)[1:] if indices else sections, axis=ax)
    if squeeze_axis:
        if any(p.shape[ax] != 1 for p in parts):
            raise MXNetValueError(f"_split_v2: squeeze_axis needs parts of size 1 along axis {axis}; "
                                  f"got sizes {[p.shape[ax] for p in parts]}")
        parts = [jnp.squeeze(p, axis=ax) for p in parts]
    return parts[0] if len(parts) == 1 else tuple(parts)


# ----------------------------------------------------------------------------- joining

def _check_joinable(arrays, op: str) -> None:
    if not arrays:
        raise MXNetValueError(f"{op}: needs at least one input array")


@defop("Concat", aliases=("_rnn_param_concat",))
def legacy_concat(*data, dim: int = 1, num_args: int | None = None):
    """Join arrays along an existing axis ``dim`` (1.x ``concat``; MXNet 1.x's exported RNN layers join
    their parameters with ``_rnn_param_concat``, the same computation)."""
    _check_joinable(data, "Concat")
    norm_axis(dim, data[0].ndim, "Concat")
    return jnp.concatenate([jnp.asarray(d) for d in data], axis=dim)


@defop("_legacy_stack")
def legacy_stack(*data, axis: int = 0, num_args: int | None = None):
    """Join same-shape arrays along a new axis ``axis`` (1.x ``stack``)."""
    _check_joinable(data, "stack")
    shapes = {_shape(d) for d in data}
    if len(shapes) != 1:
        raise MXNetValueError(f"stack: all inputs must have the same shape, got {sorted(shapes)}")
    return jnp.stack(data, axis=norm_axis(axis, data[0].ndim + 1, "stack"))


# ----------------------------------------------------------------------------- reshaping

@defop("Flatten")
def flatten(data):
    """Collapse every axis after the first: shape ``(d0, d1*d2*...)``."""
    if data.ndim == 0:
        raise MXNetValueError("Flatten: expected an input of at least 1 dimension, got a 0-d array")
    return data.reshape(data.shape[0], prod(data.shape[1:]))


@defop("reshape_like")
def reshape_like(lhs, rhs, *, lhs_begin: int | None = None, lhs_end: int | None = None,
                 rhs_begin: int | None = None, rhs_end: int | None = None):
    """Reshape ``lhs[lhs_begin:lhs_end]``'s dims to ``rhs``'s dims ``[rhs_begin:rhs_end]`` (all by default)."""
    ls, rs = _shape(lhs), _shape(rhs)
    lb, le, _ = slice(lhs_begin, lhs_end).indices(len(ls))
    rb, re, _ = slice(rhs_begin, rhs_end).indices(len(rs))
    new = ls[:lb] + rs[rb:re] + ls[max(le, lb):]
    if prod(new) != prod(ls):
        raise MXNetValueError(f"reshape_like: cannot reshape {ls} to {new} (from {rs})")
    return lhs.reshape(new)


@defop("SwapAxis")
def swap_axis(data, *, dim1: int = 0, dim2: int = 0):
    """Interchange axes ``dim1`` and ``dim2`` (1.x ``swapaxes``)."""
    return jnp.swapaxes(data, norm_axis(dim1, data.ndim, "SwapAxis"), norm_axis(dim2, data.ndim, "SwapAxis"))


@defop("reverse")
def reverse(data, *, axis: axis = ()):
    """Reverse the order of elements along ``axis`` (1.x ``flip``)."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return jnp.flip(data, tuple(norm_axis(a, data.ndim, "reverse") for a in axes))


def _check_nchw(data, op: str, block_size: int) -> None:
    if data.ndim != 4:
        raise MXNetValueError(f"{op}: expected a 4-D NCHW input, got shape {_shape(data)}")
    if block_size < 1:
        raise MXNetValueError(f"{op}: block_size must be positive, got {block_size}")


@defop("depth_to_space")
def depth_to_space(data, *, block_size: int = 1):
    """Move channel blocks into spatial blocks: (N, C*b*b, H, W) -> (N, C, H*b, W*b)."""
    _check_nchw(data, "depth_to_space", block_size)
    n, c, h, w = data.shape
    b = block_size
    if c % (b * b):
        raise MXNetValueError(f"depth_to_space: channels {c} not divisible by block_size**2 = {b * b}")
    x = data.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return x.reshape(n, c // (b * b), h * b, w * b)


@defop("space_to_depth")
def space_to_depth(data, *, block_size: int = 1):
    """Move spatial blocks into channels: (N, C, H*b, W*b) -> (N, C*b*b, H, W)."""
    _check_nchw(data, "space_to_depth", block_size)
    n, c, h, w = data.shape
    b = block_size
    if h % b or w % b:
        raise MXNetValueError(f"space_to_depth: spatial dims {(h, w)} not divisible by block_size {b}")
    x = data.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return x.reshape(n, c * b * b, h // b, w // b)


@defop("Pad")
def legacy_pad(data, *, mode: str = "constant", pad_width: shape = (), constant_value: float = 0.0):
    """Pad with ``pad_width`` = (before_0, after_0, before_1, after_1, ...); modes constant, edge, reflect."""
    if len(pad_width) != 2 * data.ndim:
        raise MXNetValueError(f"Pad: pad_width {tuple(pad_width)} must have 2 entries per axis of {_shape(data)}")
    if mode not in ("constant", "edge", "reflect"):
        raise MXNetValueError(f"Pad: mode must be 'constant', 'edge' or 'reflect', got {mode!r}")
    widths = [(pad_width[2 * i], pad_width[2 * i + 1]) for i in range(data.ndim)]
    if mode == "constant":
        return jnp.pad(data, widths, constant_values=jnp.asarray(constant_value).astype(data.dtype))
    return jnp.pad(data, widths, mode=mode)


# ----------------------------------------------------------------------------- indexing

@defop("_legacy_take")
def legacy_take(a, indices, *, axis: int = 0, mode: str = "clip"):
    """Legacy ``take``: gather along ``axis``; out-of-range indices are clipped (mode='clip'), wrapped
    ('wrap') or raise IndexError ('raise'; inside a compiled graph, at the first read of the result)."""
    if mode not in ("clip", "wrap", "raise"):
        raise MXNetValueError(f"take: mode must be 'clip', 'wrap' or 'raise', got {mode!r}")
    ax = norm_axis(axis, a.ndim, "take")
    n = a.shape[ax]
    if n == 0:
        raise MXNetIndexError(f"take: cannot take from an empty axis {axis} of shape {_shape(a)}")
    idx = jnp.asarray(indices)
    idx = (jnp.trunc(idx) if jnp.issubdtype(idx.dtype, jnp.inexact) else idx).astype(jnp.int64)
    if mode == "raise":  # mx.nd.take checks concrete indices; this covers compiled graphs
        context = f"array shape {_shape(a)}, indices shape {tuple(idx.shape)}"
        (idx,) = guard("take", [(idx, n, ax)], [idx], context)
        idx = jnp.where(idx < 0, idx + n, idx)
    idx = jnp.mod(idx, n) if mode == "wrap" else jnp.clip(idx, 0, n - 1)
    return jnp.take(a, idx, axis=ax)


@defop("_legacy_where")
def legacy_where(condition, x, y):
    """Legacy ``where``: x where condition is nonzero else y; condition has x's shape or is 1-D over axis 0."""
    cs, xs = _shape(condition), _shape(x)
    if xs != _shape(y):
        raise MXNetValueError(f"where: x and y must have the same shape, got {xs} and {_shape(y)}")
    if cs != xs:
        if not (len(cs) == 1 and xs and cs[0] == xs[0]):
            raise MXNetValueError(f"where: condition of shape {cs} must have x's shape {xs} "
                                  f"or be 1-D of length {xs[0] if xs else 0}")
        condition = condition.reshape(cs + (1,) * (len(xs) - 1))
    return jnp.where(condition != 0, x, y).astype(x.dtype)


@defop("_legacy_diag")
def legacy_diag(data, *, k: int = 0, axis1: int = 0, axis2: int = 1):
    """Legacy ``diag``: a 1-D input makes a diagonal matrix; otherwise the k-th diagonal over axis1/axis2."""
    if data.ndim == 0:
        raise MXNetValueError("diag: expected an input of at least 1 dimension, got a 0-d array")
    if data.ndim == 1:
        return jnp.diag(data, k)
    return jnp.diagonal(data, k, norm_axis(axis1, data.ndim, "diag"), norm_axis(axis2, data.ndim, "diag"))


# ----------------------------------------------------------------------------- broadcasting

def _broadcast_check(src: tuple, target: tuple, op: str) -> None:
    for s, t in zip(src, target):
        if s != t and s != 1:
            raise MXNetValueError(f"{op}: cannot broadcast shape {src} to {target}")


@defop("_legacy_broadcast_to")
def legacy_broadcast_to(data, *, shape: shape = ()):
    """Legacy ``broadcast_to``: a 0 in ``shape`` keeps that input dimension."""
    src = _shape(data)
    if len(shape) != len(src):
        raise MXNetValueError(f"broadcast_to: shape {tuple(shape)} must have as many dims as the input {src}")
    target = tuple(s if t == 0 else t for s, t in zip(src, shape))
    _broadcast_check(src, target, "broadcast_to")
    return jnp.broadcast_to(data, target)


@defop("broadcast_axis", aliases=("broadcast_axes",))
def broadcast_axis(data, *, axis: axis = (), size: shape = ()):
    """Broadcast the size-1 dims ``axis`` to ``size``."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    sizes = (size,) if isinstance(size, int) else tuple(size)
    if len(axes) != len(sizes):
        raise MXNetValueError(f"broadcast_axis: axis {axis} and size {size} must have the same length")
    target = list(data.shape)
    for a, s in zip(axes, sizes):
        a = norm_axis(a, data.ndim, "broadcast_axis")
        if data.shape[a] != 1:
            raise MXNetValueError(f"broadcast_axis: axis {a} of shape {_shape(data)} must have size 1")
        target[a] = s
    return jnp.broadcast_to(data, tuple(target))


@defop("broadcast_like")
def broadcast_like(lhs, rhs, *, lhs_axes: shape | None = None, rhs_axes: shape | None = None):
    """Broadcast ``lhs`` to ``rhs``'s shape (or only ``lhs_axes`` to the sizes of ``rhs_axes``)."""
    if lhs_axes is None and rhs_axes is None:
        target = _shape(rhs)
        if len(target) != lhs.ndim:
            raise MXNetValueError(f"broadcast_like: {_shape(lhs)} and {target} differ in dimensions")
    else:
        la, ra = tuple(lhs_axes or ()), tuple(rhs_axes or ())
        if len(la) != len(ra):
            raise MXNetValueError(f"broadcast_like: lhs_axes {la} and rhs_axes {ra} must have the same length")
        target = list(lhs.shape)
        for a, b in zip(la, ra):
            target[norm_axis(a, lhs.ndim, "broadcast_like")] = rhs.shape[norm_axis(b, rhs.ndim, "broadcast_like")]
        target = tuple(target)
    _broadcast_check(_shape(lhs), target, "broadcast_like")
    return jnp.broadcast_to(lhs, target)


# ----------------------------------------------------------------------------- shape queries

@defop("shape_array")
def shape_array(data):
    """The input's shape as a 1-D int64 array."""
    return jnp.asarray(data.shape, dtype=jnp.int64).reshape(data.ndim)


@defop("size_array")
def size_array(data):
    """The input's number of elements as an int64 array of shape (1,)."""
    return jnp.asarray([data.size], dtype=jnp.int64)


@defop("_contrib_index_array")
def index_array(data, *, axes: shape | None = None):
    """The index of every element: int64 of shape ``data.shape + (n,)`` with ``out[i, j, ..., :] =
    (i, j, ...)``; ``axes`` keeps only those coordinates, in that order (MXNet's contrib op)."""
    ndim = data.ndim
    picked = tuple(range(ndim)) if axes is None else tuple(norm_axis(a, ndim, "index_array") for a in axes)
    grid = jnp.indices(data.shape, dtype=jnp.int64)
    return jnp.stack([grid[a] for a in picked], axis=-1) if picked else jnp.zeros((*data.shape, 0), jnp.int64)
