"""Rows selected by a mask without a shape that changes per batch: in place, or padded to a size bucket.

A segment after ``boolean_mask`` sees a new row count with every batch; compiled per
count it would compile without bound.  :func:`plan` checks, per segment, that rows
cannot leak into each other: every node fed by the selected rows must keep rows apart
(:mod:`.rows` reads its jaxpr), except reductions over the row axis (``sum``,
``mean``, ``max``, ``min``, ``prod``, ``all``, ``any``), which are rewritten to skip
the rows that are not real (``_mask_rows`` first, and ``mean`` rescaled).  Then:

* *in place*: when every output of the segment is free of rows (it ends in such
  reductions), the rows are not selected at all -- the segment runs on the whole
  data with the mask itself telling the reductions which rows are real.  Nothing
  waits for the mask's values, and the program has one shape: the "static rewrite"
  a JAX user would write by hand, found automatically.
* *bucketed*: otherwise the mask's positions are read and the rows gathered *padded*
  -- the selected positions followed by copies of the last one, up to the next power
  of two (padded rows hold real, finite data; their gradients are exact zeros) --
  inside the segment's program, compiled once per bucket with the valid count as a
  traced input.  Outputs that still carry rows are cut back to the count after it.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as onp

from ..graph.ir import Entry, Node, copy_graph, topo_order
from .._ndarray import NDArray
from .._invoke import invoke
from ..operator.dynamic import check_mask, mask_rows
from ..operator.registry import get_op
from ..graph.interpret import CONSTANTS, call_params, node_op
from .rows import NotRowWise, row_axes

__all__ = ["VALID", "MIN_BUCKET", "bucket_size", "Padded", "selection", "plan", "input_names"]

VALID = "__valid_rows__"  # the graph variable holding the valid row count of a bucketed segment
MIN_BUCKET = 2            # a row axis of size 1 would broadcast, so buckets start at 2

# reduction op -> the value padded rows are replaced with before it runs
_ROW_REDUCTIONS = {"sum": "zero", "nansum": "zero", "mean": "zero", "prod": "one", "max": "lowest",
                   "min": "highest", "all": "one", "any": "zero"}


def bucket_size(n: int, length: int) -> int:
    """The padded size for ``n`` valid rows out of ``length``: the next power of two, at least
    ``MIN_BUCKET``, at most ``length`` (a full selection is not padded past the data)."""
    size = max(MIN_BUCKET, 1 << max(n - 1, 0).bit_length())
    return max(min(size, length), n)


class Padded:
    """``valid`` real rows along ``axis`` followed by padding (``array``: a bucketed segment's output), or a
    mask's selection not made yet: the ``data`` and the 1-D ``index`` (its values are read, and the padded
    positions computed, only when a segment needs the rows bucketed or cut)."""

    __slots__ = ("array", "data", "index", "axis", "_valid", "_positions", "_cut")

    def __init__(self, axis: int, array: NDArray | None = None, valid: int | None = None,
                 data: NDArray | None = None, index: NDArray | None = None) -> None:
        self.array, self.data, self.index, self.axis = array, data, index, axis
        self._valid, self._positions, self._cut = valid, None, None

    @property
    def valid(self) -> int:
        if self._valid is None:
            self._select()
        return self._valid

    @property
    def positions(self) -> onp.ndarray:
        """The selected positions padded to a bucket with copies of the last one (host int32)."""
        if self._positions is None:
            self._select()
        return self._positions

    def _select(self) -> None:
        _, rows = mask_rows(tuple(self.data.shape), self.index.to_jax(), self.axis)
        n = len(rows)
        positions = onp.empty(bucket_size(n, self.data.shape[self.axis]), onp.int32)
        positions[:n] = rows
        positions[n:] = rows[-1] if n else 0
        self._valid, self._positions = n, positions

    def cut(self) -> NDArray:
        """The valid rows only (recorded on the tape like any op); computed once."""
        if self._cut is None:
            if self.data is not None:  # the selection itself, as the op would have made it
                self._cut = invoke(get_op("_contrib_boolean_mask"), [self.data, self.index], {"axis": self.axis})
            elif self.array.shape[self.axis] == self.valid:
                self._cut = self.array
            else:
                self._cut = self.array[(slice(None),) * self.axis + (slice(0, self.valid),)]
        return self._cut


def selection(data: NDArray, index: NDArray, axis: int) -> Padded | None:
    """``boolean_mask(data, index, axis)`` as a selection not made yet (shapes checked now), or ``None``
    when the data is too short to pad (fewer than ``MIN_BUCKET`` rows)."""
    axis = check_mask(tuple(data.shape), tuple(index.shape), axis)
    if data.shape[axis] < MIN_BUCKET:
        return None
    return Padded(axis, data=data, index=index)


def _op_avals(op: Any, params: dict, constants: tuple, avals: list, key_needed: bool) -> Any:
    """The jaxpr of one node's compute at these input avals (constants inserted, a key when random)."""
    def fn(*args: Any) -> Any:
        args = list(args)
        for slot, value in constants:
            args.insert(slot + (1 if key_needed else 0), value)
        return op.compute(*args, **params)
    if key_needed:
        avals = [jax.ShapeDtypeStruct((2,), onp.uint32)] + list(avals)
    return jax.make_jaxpr(fn)(*avals)


def _covers(params: dict, ndim: int, axis: int) -> bool:
    """Whether a reduction with these parameters reduces over ``axis``."""
    reduced = params.get("axis")
    if reduced is None:
        return True
    reduced = reduced if isinstance(reduced, (tuple, list)) else (reduced,)
    return axis in {int(a) % ndim for a in reduced}


def plan(outputs: list[Entry], in_axes: dict[str, int], selections: set[str], avals: dict[str, Any],
         train: bool) -> tuple[list[Entry], list[int | None]] | None:
    """Rewrite a segment's graph (a copy is made) to run on rows that are not all real.

    ``in_axes`` gives the row axis of each such input; those named in ``selections``
    become a gather (``take``) of variables ``NAME/data`` by ``NAME/positions``; the
    others are used as they are.  ``avals`` holds the shape/dtype of every variable,
    :data:`VALID` included (a count, or a mask over the rows).  Returns (new outputs,
    whose graph reads :data:`VALID` when a reduction needs it; the row axis of each
    output, ``None`` for row-free ones), or ``None`` when some node mixes rows.
    """
    outputs = copy_graph(outputs)
    valid = Node("null", VALID)
    entry_axes: dict[tuple, int | None] = {}
    entry_avals: dict[tuple, Any] = {}
    for node in topo_order(outputs):
        if node.is_variable and node.name in selections:
            name = node.name
            node.op, node.params = "take", {"axis": in_axes[name], "mode": "clip"}
            node.inputs = [(Node("null", name + "/data"), 0), (Node("null", name + "/positions"), 0)]
            for source, _ in node.inputs:
                entry_avals[(id(source), 0)], entry_axes[(id(source), 0)] = avals[source.name], None
            entry_avals[(id(node), 0)] = jax.eval_shape(
                lambda d, p: get_op("take").compute(d, p, axis=in_axes[name], mode="clip"),
                avals[name + "/data"], avals[name + "/positions"])
            entry_axes[(id(node), 0)] = in_axes[name]
            continue
        if node.is_variable:
            entry_avals[(id(node), 0)] = avals[node.name]
            entry_axes[(id(node), 0)] = in_axes.get(node.name)
            continue
        op = node_op(node)
        params = call_params(node, op, train)
        constants = params.pop(CONSTANTS, ())
        tags = [entry_axes[(id(n), i)] for n, i in node.inputs]
        in_avals = [entry_avals[(id(n), i)] for n, i in node.inputs]
        fill = _ROW_REDUCTIONS.get(op.name)
        row = tags[0] if tags else None
        if (fill is not None and row is not None and not any(t is not None for t in tags[1:])
                and not constants and _covers(params, len(in_avals[0].shape), row)):
            out_avals = _rewrite_reduction(node, op.name, fill, row, in_avals[0], valid)
            out_tags = [None]
        else:
            closed = _op_avals(op, params, constants, in_avals, op.needs_key)
            if any(t is not None for t in tags):
                try:
                    out_tags = row_axes(closed.jaxpr, ([None] if op.needs_key else []) + tags)
                except NotRowWise:
                    return None
            else:
                out_tags = [None] * len(closed.out_avals)
            out_avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals]
        for i, (tag, aval) in enumerate(zip(out_tags, out_avals)):
            entry_axes[(id(node), i)] = tag
            entry_avals[(id(node), i)] = aval
    return outputs, [entry_axes[(id(n), i)] for n, i in outputs]


def input_names(names: list[str], selections: set[str]) -> list[str]:
    """A planned segment's variables: each gathered selection's data and positions in place of its name,
    then :data:`VALID`."""
    out = []
    for name in names:
        out.extend((name + "/data", name + "/positions") if name in selections else (name,))
    return out + [VALID]


def _rewrite_reduction(node: Node, name: str, fill: str, row: int, aval: Any, valid: Node) -> list:
    """Turn ``node`` (a reduction over the row axis) into one that skips padded rows, in place."""
    source = node.inputs[0]
    masked = Node("_mask_rows", f"{node.name}_mask_rows", {"axis": row, "fill": fill}, {},
                  [source, (valid, 0)])
    node.inputs = [(masked, 0)] + node.inputs[1:]
    out = jax.eval_shape(lambda x: node_op(node).compute(x, **{k: v for k, v in node.params.items()
                                                             if k != CONSTANTS}),
                         jax.ShapeDtypeStruct(aval.shape, aval.dtype))
    if name == "mean":
        inner = Node(node.op, node.name + "_padded", dict(node.params), dict(node.attrs), node.inputs)
        node.op, node.params, node.attrs = "_rescale_mean_rows", {"axis": row}, {}
        node.inputs = [(inner, 0), (valid, 0), inner.inputs[0]]
    return [out]
