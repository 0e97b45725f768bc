"""MXNet's graph-structure contrib ops (``getnnz``, ``edge_id``, ``dgl_adjacency``) on dense matrices.

MXNet defines them for CSR adjacency matrices; mxjax has no sparse storage, so a graph is its
dense adjacency matrix and the edges are the nonzero entries (an edge stored with value 0 in a
CSR matrix has no dense counterpart).  On the dense form of a CSR input the results equal
MXNet's: ``getnnz`` counts edges (int64), ``edge_id`` reads the value stored for each (u, v)
pair or -1, ``dgl_adjacency`` gives float32 ones where edges are.
"""
from __future__ import annotations

import jax.numpy as jnp

from .nn_util import fail
from .registry import defop


def _check_matrix(op: str, data) -> None:
    if data.ndim != 2:
        fail(op, f"expects a 2-D adjacency matrix, got shape {tuple(data.shape)}")


@defop("_contrib_getnnz", aliases=("getnnz",))
def getnnz(data, *, axis: int | None = None):
    """Number of nonzero entries: all of them as shape (1,), or per row (``axis=1``) / column (``axis=0``)."""
    _check_matrix("getnnz", data)
    present = data != 0
    if axis is None:
        return jnp.sum(present, dtype=jnp.int64).reshape(1)
    if axis not in (0, 1, -1, -2):
        fail("getnnz", f"axis must be None, 0 or 1 for a 2-D matrix, got {axis}")
    return jnp.sum(present, axis=axis, dtype=jnp.int64)


@defop("_contrib_edge_id", aliases=("edge_id",))
def edge_id(data, u, v):
    """``data[u[i], v[i]]`` where that entry is an edge (nonzero), else -1; in ``data``'s dtype."""
    _check_matrix("edge_id", data)
    if u.shape != v.shape or u.ndim != 1:
        fail("edge_id", f"u and v must be 1-D of the same length, got shapes {tuple(u.shape)} and {tuple(v.shape)}")
    rows, cols = u.astype(jnp.int64), v.astype(jnp.int64)
    inside = (rows >= 0) & (rows < data.shape[0]) & (cols >= 0) & (cols < data.shape[1])
    values = data[jnp.clip(rows, 0, data.shape[0] - 1), jnp.clip(cols, 0, data.shape[1] - 1)]
    return jnp.where(inside & (values != 0), values, jnp.asarray(-1, data.dtype))


@defop("_contrib_dgl_adjacency", aliases=("dgl_adjacency",))
def dgl_adjacency(data):
    """The adjacency matrix of a graph whose entries are edge ids: float32 1 where an edge is, else 0."""
    _check_matrix("dgl_adjacency", data)
    return (data != 0).astype(jnp.float32)
