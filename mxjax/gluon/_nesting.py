"""Nested inputs and outputs of a hybridized block (an RNN cell's list of states): the cached
op's graph takes and gives flat lists of arrays, the block's ``forward`` (or 1.x
``hybrid_forward``) sees the nesting the caller gave, as MXNet's ``_flatten``/``_regroup`` do."""
from __future__ import annotations

from typing import Any, Sequence

from .._ndarray import NDArray
from ._arguments import has_array

__all__ = ["as_class", "flat_inputs", "flat_outputs", "flatten", "regroup"]


def flatten(values: Any) -> tuple[list, Any]:
    """The leaves of ``values`` in order, and the format :func:`regroup` rebuilds them from (0: a
    leaf; a tuple: a list of the formats of its items).  The format is part of the cache key: a new
    nesting traces anew."""
    if not isinstance(values, (list, tuple)):
        return [values], 0
    flat, formats = [], []
    for value in values:
        leaves, form = flatten(value)
        flat.extend(leaves)
        formats.append(form)
    return flat, tuple(formats)


def regroup(flat: list, form: Any) -> Any:
    """The nesting :func:`flatten` took apart, with lists as MXNet's hybridized blocks give them."""
    leaves = iter(flat)

    def build(f: Any) -> Any:
        return next(leaves) if f == 0 else [build(g) for g in f]
    return build(form)


def as_class(values: Any, cls: type) -> Any:
    """``values`` (an array, or lists and tuples of them) with every array as ``cls`` (a view where it
    is another class: ``NDArray._as_class``); anything else as it is."""
    if isinstance(values, (list, tuple)):
        return type(values)(as_class(v, cls) for v in values)
    return values._as_class(cls) if isinstance(values, NDArray) else values


def flat_inputs(args: Sequence) -> tuple[list, Any]:
    """A call's positional inputs with the arrays of its lists of arrays (an LSTM's states) taken
    out as inputs of their own, and the format :func:`regroup` rebuilds the call from (None: no
    list of arrays among them)."""
    if any(isinstance(a, (list, tuple)) and has_array(a, (NDArray,)) for a in args):
        return flatten(args)
    return list(args), None


def flat_outputs(out: Any) -> tuple[list, Any]:
    """A traced forward's outputs as a flat list, and how the cached op gives them back: False (one
    output), True (a list of them) or the format of nested ones (the new states beside the output)."""
    if not isinstance(out, (tuple, list)):
        return [out], False
    if any(isinstance(o, (tuple, list)) for o in out):
        return flatten(out)
    return list(out), True
