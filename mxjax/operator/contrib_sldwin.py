"""MXNet's sliding-window (Longformer) attention ops: ``sldwin_atten_score``, ``sldwin_atten_mask_like``
and ``sldwin_atten_context``.

Token i of head h looks at the keys ``i + (j - w) * dilation[h]`` for ``j`` in
``[0, 2w]`` (symmetric) or ``[0, w]`` (causal).  Scores live in (batch, seq, heads,
window) arrays; window slots past either end of the sequence hold 0 and add nothing.
"""
from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from ..base import MXNetTypeError
from .nn_index import _as_index
from .nn_util import fail
from .registry import defop


def _window(op: str, seq: int, heads: int, dilation, w, symmetric):
    """(seq, heads, window) key positions and whether each lies inside the sequence."""
    if w is None or w < 0 or symmetric is None:
        fail(op, f"w (a non-negative int) and symmetric are required, got w={w!r}, symmetric={symmetric!r}")
    if not jnp.issubdtype(dilation.dtype, jnp.integer):
        raise MXNetTypeError(f"{op}: dilation must be an integer array (MXNet's int32), got {dilation.dtype}")
    if tuple(dilation.shape) != (heads,):
        fail(op, f"dilation has shape {tuple(dilation.shape)} but ({heads},) is expected (one per head)")
    width = 2 * w + 1 if symmetric else w + 1
    offsets = jnp.arange(width) - w
    dil = _as_index(lax.stop_gradient(dilation))
    pos = jnp.arange(seq)[:, None, None] + offsets[None, None, :] * dil[None, :, None]
    return pos, (pos >= 0) & (pos < seq)


def _check4(op: str, **arrays):
    ref = None
    for name, x in arrays.items():
        if x.ndim != 4:
            fail(op, f"{name} must be 4-D (batch, seq_length, heads, units), got shape {tuple(x.shape)}")
        if ref is not None and tuple(x.shape[:3]) != ref:
            fail(op, f"{name} has shape {tuple(x.shape)}, expected leading axes {ref}")
        ref = tuple(x.shape[:3])


def _gather(x, pos):
    """x (B, L, H, D) at key positions pos (L, H, W), clipped: (B, L, H, W, D)."""
    seq, heads = x.shape[1], x.shape[2]
    idx = jnp.clip(pos, 0, seq - 1)
    return x[:, idx, jnp.arange(heads)[None, :, None], :]


@defop("_contrib_sldwin_atten_score", aliases=("sldwin_atten_score", "_npx_sldwin_atten_score"))
def sldwin_atten_score(query, key, dilation, *, w: int | None = None, symmetric: bool | None = None):
    """Dot products of each query with the keys in its dilated window: (batch, seq, heads, window)."""
    op = "sldwin_atten_score"
    _check4(op, query=query, key=key)
    if key.shape[3] != query.shape[3]:
        fail(op, f"query {tuple(query.shape)} and key {tuple(key.shape)} must have the same shape")
    pos, inside = _window(op, query.shape[1], query.shape[2], dilation, w, symmetric)
    score = jnp.einsum("blhd,blhwd->blhw", query, _gather(key, pos))
    return jnp.where(inside[None], score, jnp.zeros((), score.dtype))


@defop("_contrib_sldwin_atten_mask_like", aliases=("sldwin_atten_mask_like", "_npx_sldwin_atten_mask_like"),
       differentiable=False)
def sldwin_atten_mask_like(score, dilation, valid_length, *, w: int | None = None, symmetric: bool | None = None):
    """1 where a window slot of ``score`` points at a key inside the sequence and both the token and
    the key are before their batch entry's ``valid_length``; 0 elsewhere (score's shape and dtype)."""
    op = "sldwin_atten_mask_like"
    if score.ndim != 4:
        fail(op, f"score must be 4-D (batch, seq_length, heads, window), got shape {tuple(score.shape)}")
    batch, seq, heads, width = score.shape
    if tuple(valid_length.shape) != (batch,):
        fail(op, f"valid_length has shape {tuple(valid_length.shape)} but ({batch},) is expected")
    pos, inside = _window(op, seq, heads, dilation, w, symmetric)
    if pos.shape[2] != width:
        fail(op, f"score has {width} window slots but w={w}, symmetric={symmetric} gives {pos.shape[2]}")
    valid = _as_index(valid_length)[:, None, None, None]
    token = jnp.arange(seq)[None, :, None, None]
    mask = inside[None] & (pos[None] < valid) & (token < valid)
    return mask.astype(score.dtype)


@defop("_contrib_sldwin_atten_context", aliases=("sldwin_atten_context", "_npx_sldwin_atten_context"))
def sldwin_atten_context(score, value, dilation, *, w: int | None = None, symmetric: bool | None = None):
    """Attention output: each token's window of values weighted by its ``score`` (batch, seq, heads,
    units)."""
    op = "sldwin_atten_context"
    _check4(op, score=score, value=value)
    pos, inside = _window(op, value.shape[1], value.shape[2], dilation, w, symmetric)
    if pos.shape[2] != score.shape[3]:
        fail(op, f"score has {score.shape[3]} window slots but w={w}, symmetric={symmetric} gives "
                 f"{pos.shape[2]}")
    weights = jnp.where(inside[None], score, jnp.zeros((), score.dtype))
    return jnp.einsum("blhw,blhwd->blhd", weights, _gather(value, pos))
