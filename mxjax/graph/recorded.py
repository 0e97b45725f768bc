"""Straight-line graphs of recorded ops, and a bulk segment as one program.

Every graph mxjax runs is run in this form: steps ``(op, fn, params, args, multi)`` whose args
refer to an earlier output by its position among all outputs (>= 0), to a leaf, a value from
outside (< 0: leaf ``-1 - a``), or are constants ``(type, value[, text])``.  Both recorders of
imperative work -- bulk segments (``graph.bulk``) and the autograd tape's deferred regions
(``_tape.plan``) -- record it directly; a graph of the IR (a hybridized block, a Symbol, a
control-flow body, a graph cut around dynamic-shape ops) is lowered to it by
``graph.interpret.lower``.  :func:`evaluate` is the one interpreter: inside ``jax.jit`` (a
segment's program, a region's forward under ``jax.vjp``, a compiled graph) and op by op (a
segment's first run, the segments of a dynamic-shape graph).
"""
from __future__ import annotations

from typing import Any, Callable

import jax

from .._onednn import packing

__all__ = ["Straight", "compiled", "evaluate", "inputs", "program"]


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
    graph = Straight(nodes)

    def run(*leaves: Any) -> list:
        values = graph(*leaves)
        return [values[i] for i in wanted]
    return run


class Straight:
    """Recorded steps ``(op, fn, params, args, multi)`` (``fn`` compiled, ``fn.pure`` traceable) as one
    function of their leaves returning every output.  Called, it is traced, as a program runs it;
    :meth:`replay` runs the ops one by one with their own compiled functions, as a segment's first
    sightings do (nothing is compiled for a structure seen once).  ``key``: its structure."""

    __slots__ = ("nodes", "steps", "key")

    def __init__(self, nodes: list) -> None:
        self.nodes = nodes
        self.steps = [(op, fn.pure, params, args, multi) for op, fn, params, args, multi in nodes]
        self.key = tuple([(fn, args) for _, fn, _, args, _ in nodes])

    @classmethod
    def lifted(cls, nodes: list, leaves: list) -> tuple["Straight", list]:
        """A bulk segment as a step of another graph (an autograd region: ``_tape.plan.Plan.adopt``),
        and its leaves: its Python scalars become leaves too, as that graph takes them, so a scalar
        that changes at every step (a learning rate, a random scale) leaves the structure as it is."""
        leaves, steps = list(leaves), []
        for op, fn, params, args, multi in nodes:
            moved = []
            for a in args:
                if type(a) is not int and a[0] is not None:  # (a None stays a constant)
                    moved.append(-1 - len(leaves))
                    leaves.append(a[1])
                else:
                    moved.append(a)
            steps.append((op, fn, params, tuple(moved), multi))
        return cls(steps), leaves

    def __call__(self, *leaves: Any) -> list:
        return evaluate(self.steps, leaves)

    def replay(self, *leaves: Any) -> list:
        return evaluate(self.nodes, leaves)


def evaluate(steps: list, leaves: Any, values: list | None = None,
             adjust: Callable[[int, list], list] | None = None,
             failed: Callable[[int, list, Exception], Exception] | None = None) -> list:
    """Run ``steps`` (``(op, fn, params, args, multi)``: ``fn`` runs, ``op`` and ``params`` only
    name it) on ``leaves``; returns every output, in order.  The
    outputs go into ``values`` (given: what ran before a failure stays readable there);
    ``adjust(k, ins)``, if given, may change step ``k``'s inputs before it runs; when step ``k``
    raises, ``failed(k, ins, err)``, if given, makes the error raised instead."""
    values = [] if values is None else values
    for k, (_, fn, _, args, multi) in enumerate(steps):
        ins = inputs(args, values, leaves)
        if adjust is not None:
            ins = adjust(k, ins)
        try:
            out = fn(*ins)
        except Exception as err:
            if failed is None:
                raise
            raise failed(k, ins, err) from None
        if multi:
            values.extend(out)
        else:
            values.append(out)
    return values


def inputs(args: tuple, values: list, leaves: list) -> list:
    """A node's inputs: ``args`` are refs to earlier outputs (>= 0), to leaves (< 0), or constants."""
    return [(values[a] if a >= 0 else leaves[-1 - a]) if type(a) is int else a[1] for a in args]
