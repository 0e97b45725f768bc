"""MXNet's interleaved multi-head attention matmuls (``interleaved_matmul_*``).

The projections arrive packed, sequence-major: self-attention's ``queries_keys_values``
is (seq, batch, heads * 3 * head_dim) laid out as (heads, 3, head_dim) on the last
axis, encoder-decoder's ``keys_values`` (seq, batch, heads * 2 * head_dim) as
(heads, 2, head_dim).  Scores come out (batch * heads, q_seq, k_seq) with the
queries pre-scaled by ``1/sqrt(head_dim)``; attention outputs go back to
(q_seq, batch, heads * head_dim).
"""
from __future__ import annotations

import math

import jax.numpy as jnp

from .nn_util import fail
from .registry import defop


def _split(op: str, what: str, x, heads: int, parts: int):
    """(seq, batch, heads*parts*dim) -> (batch, heads, parts, seq, dim)."""
    if x.ndim != 3:
        fail(op, f"{what} must be 3-D (seq_length, batch_size, features), got shape {tuple(x.shape)}")
    if heads is None or heads < 1:
        fail(op, f"heads must be a positive integer, got {heads!r}")
    if x.shape[2] % (heads * parts):
        fail(op, f"{what} has {x.shape[2]} features on its last axis, not a multiple of heads * {parts} = "
                 f"{heads * parts}")
    seq, batch, feat = x.shape
    return x.reshape(seq, batch, heads, parts, feat // (heads * parts)).transpose(1, 2, 3, 0, 4)


def _scores(q, k):
    """(batch, heads, seq, dim) queries and keys -> (batch*heads, q_seq, k_seq) scaled scores."""
    batch, heads, _, dim = q.shape
    q = q / jnp.asarray(math.sqrt(dim), q.dtype)
    return jnp.einsum("bhqd,bhkd->bhqk", q, k).reshape(batch * heads, q.shape[2], k.shape[2])


def _attend(op: str, attention, v):
    """(batch*heads, q_seq, k_seq) weights x (batch, heads, k_seq, dim) values -> (q_seq, batch, heads*dim)."""
    batch, heads, k_seq, dim = v.shape
    if attention.ndim != 3 or attention.shape[0] != batch * heads or attention.shape[2] != k_seq:
        fail(op, f"attention has shape {tuple(attention.shape)} but (batch*heads={batch * heads}, q_seq, "
                 f"k_seq={k_seq}) is expected")
    att = attention.reshape(batch, heads, attention.shape[1], k_seq)
    out = jnp.einsum("bhqk,bhkd->qbhd", att, v)
    return out.reshape(out.shape[0], batch, heads * dim)


@defop("_contrib_interleaved_matmul_selfatt_qk", aliases=("interleaved_matmul_selfatt_qk",
                                                          "_npx_interleaved_matmul_selfatt_qk"))
def selfatt_qk(queries_keys_values, *, heads: int | None = None):
    """Self-attention scores ``q k^T / sqrt(head_dim)`` from the packed projections."""
    qkv = _split("interleaved_matmul_selfatt_qk", "queries_keys_values", queries_keys_values, heads, 3)
    return _scores(qkv[:, :, 0], qkv[:, :, 1])


@defop("_contrib_interleaved_matmul_selfatt_valatt", aliases=("interleaved_matmul_selfatt_valatt",
                                                              "_npx_interleaved_matmul_selfatt_valatt"))
def selfatt_valatt(queries_keys_values, attention, *, heads: int | None = None):
    """Self-attention output: the attention weights applied to the packed values."""
    op = "interleaved_matmul_selfatt_valatt"
    qkv = _split(op, "queries_keys_values", queries_keys_values, heads, 3)
    return _attend(op, attention, qkv[:, :, 2])


@defop("_contrib_interleaved_matmul_encdec_qk", aliases=("interleaved_matmul_encdec_qk",
                                                         "_npx_interleaved_matmul_encdec_qk"))
def encdec_qk(queries, keys_values, *, heads: int | None = None):
    """Encoder-decoder scores: decoder ``queries`` against the packed encoder keys."""
    op = "interleaved_matmul_encdec_qk"
    q = _split(op, "queries", queries, heads, 1)[:, :, 0]
    kv = _split(op, "keys_values", keys_values, heads, 2)
    if kv.shape[0] != q.shape[0] or kv.shape[-1] != q.shape[-1]:
        fail(op, f"queries {tuple(queries.shape)} and keys_values {tuple(keys_values.shape)} disagree: "
                 "expected the same batch size and keys_values features = 2 * queries features")
    return _scores(q, kv[:, :, 0])


@defop("_contrib_interleaved_matmul_encdec_valatt", aliases=("interleaved_matmul_encdec_valatt",
                                                             "_npx_interleaved_matmul_encdec_valatt"))
def encdec_valatt(keys_values, attention, *, heads: int | None = None):
    """Encoder-decoder output: the attention weights applied to the packed encoder values."""
    op = "interleaved_matmul_encdec_valatt"
    kv = _split(op, "keys_values", keys_values, heads, 2)
    return _attend(op, attention, kv[:, :, 1])
