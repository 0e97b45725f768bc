"""A bulk segment as one program: its recorded ops as a function of its leaves, compiled.

Recorded nodes are ``(op, fn, params, args, multi)`` (see ``graph.bulk``): each arg refers to an
earlier output (>= 0), a leaf (< 0) or is a constant ``(type, value[, text])``.
"""
from __future__ import annotations

from typing import Any, Callable

import jax

from .._onednn import packing

__all__ = ["compiled", "inputs", "program"]


def compiled(nodes: list, wanted: tuple) -> Any:
    """The segment's program: ``jax.jit`` of it, or, where convolutions run on oneDNN, a
    ``packing.PackedProgram`` that hands them their weights packed once (not per call)."""
    run = program(nodes, wanted)
    weights = sorted({-1 - args[1] for op, _, _, args, _ in nodes
                      if op.name == "Convolution" and len(args) > 1 and type(args[1]) is int and args[1] < 0})
    if weights and packing.applies():
        on_tuple = lambda leaves, _: run(*leaves)  # noqa: E731 -- the calling convention packing takes
        return packing.PackedProgram(on_tuple, jax.jit(on_tuple), weights)
    return jax.jit(run)


def program(nodes: list, wanted: tuple) -> Callable[..., list]:
    """The segment as one function of its leaves, returning the wanted outputs."""
    steps = [(fn.pure, args, multi) for _, fn, _, args, multi in nodes]

    def run(*leaves: Any) -> list:
        values: list = []
        for pure, args, multi in steps:
            out = pure(*inputs(args, values, leaves))
            if multi:
                values.extend(out)
            else:
                values.append(out)
        return [values[i] for i in wanted]
    return run


def inputs(args: tuple, values: list, leaves: list) -> list:
    """A node's inputs: ``args`` are refs to earlier outputs (>= 0), to leaves (< 0), or constants."""
    return [(values[a] if a >= 0 else leaves[-1 - a]) if type(a) is int else a[1] for a in args]
