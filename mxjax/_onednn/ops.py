"""Convolution as a JAX function on the oneDNN handlers: ``maybe_convolution``.

The forward pass is one ``jax.ffi.ffi_call``; a ``jax.custom_vjp`` sends the backward
pass to the backward-data and backward-weights handlers (the bias gradient, a sum, stays
in XLA).  All three are ordinary primitives of the traced program, so jit, the compile
cache, hybridized graphs and autograd see a pure JAX function.  Training (the custom_vjp's
forward rule) hands oneDNN its blocked layouts; inference (its primal, what runs when
nothing differentiates the call) takes channel-last activations as they are, or, for thin
inputs, XLA's own convolution (``INFER_XLA_MAX_CHANNELS``).

``maybe_convolution`` returns None when the oneDNN path does not apply (not CPU, neither
float32 nor bfloat16, switched off, not built, or a configuration oneDNN rejects); the
caller then uses XLA's convolution.  Each case is logged at debug level; a build that does
not load warns once.  Second derivatives through it are not available (the handlers have
no derivative of their own), as MXNet's Convolution has none either.
"""
from __future__ import annotations

import collections
import ctypes
import functools
import logging
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as onp

from . import TARGETS, available, enabled, library, load_error, packing

_log = logging.getLogger(__name__)
# How many convolutions were traced on each path (tests and diagnostics read it).
stats: collections.Counter = collections.Counter()
_warned: list = []
# True: channel-first activations reach oneDNN stored channel-last (XLA lays them out so,
# which XLA's channel-last CPU pooling shares).  Off: on the benchmark's CNN, letting oneDNN
# reorder plain NCHW into its blocked layout measured as fast or faster.
MEMORY_LAST = False
# Inference (a convolution no gradient is taken of) runs on XLA's convolution when the input has
# at most this many channels (ungrouped), on oneDNN otherwise; training always runs on oneDNN.
# XLA:CPU hands such thin convolutions to YNNPACK fused with the bias, ReLU and pooling after
# them, which oneDNN's separate call cannot match; from 64 channels up oneDNN wins.  Measured on
# 2 shared cores, hybridized forward, median ms, XLA native / oneDNN everywhere / this rule: the
# small CNN (1 and 32 input channels) 2.84 / 3.96 / 2.52 and 2.70 / 3.99 / 2.66; resnet18_v1
# batch 8 at 112x112 (3 channels, then 64-512) 135 / 72.2 / 70.3, and 80.2 with the 64-channel
# layers on XLA too; at 224x224 270 / 188 / 176.
INFER_XLA_MAX_CHANNELS = 32
# True: inference hands oneDNN channel-last activations as they are (_infer_spec); False: as training
# does (oneDNN's blocked layouts, reordered at every call).  For measuring.
INFER_PLAIN = True
_DTYPES = {jnp.dtype(jnp.float32): 0, jnp.dtype(jnp.bfloat16): 1}  # the handlers' dtype codes


class Spec(NamedTuple):
    """Everything about a convolution that is not an array (hashable: a custom_vjp static)."""

    stride: tuple
    pad: tuple
    dilate: tuple
    groups: int
    channel_last: bool
    memory_last: bool
    out_shape: tuple
    has_bias: bool
    infer_xla: Any = None  # outside autodiff, this XLA convolution runs instead (see INFER_XLA_MAX_CHANNELS)
    plain: bool = False  # activations in the caller's layout: no reorders (the inference path; see _infer_spec)

    def attrs(self) -> dict:
        vec = lambda v: onp.asarray(v, dtype=onp.int64)  # noqa: E731
        return dict(stride=vec(self.stride), pad=vec(self.pad), dilate=vec(self.dilate),
                    groups=onp.int64(self.groups), channel_last=onp.int64(self.channel_last),
                    memory_last=onp.int64(self.memory_last), plain=onp.int64(self.plain))

    def act_layout(self, ndim: int):
        """Major-to-minor order asked of XLA for an activation: channel-last storage, or row-major."""
        return (0, *range(2, ndim), 1) if self.memory_last else None


def _call(kind: str, shape, dtype, *args, spec: Spec):
    act = spec.act_layout(len(shape))
    ins, out = {"forward": ((act, None, None), act), "backward_data": ((act, None), act),
                "backward_weights": ((act, act), None)}[kind]
    fn = jax.ffi.ffi_call(TARGETS[kind], jax.ShapeDtypeStruct(shape, dtype), vmap_method="sequential",
                          input_layouts=ins[:len(args)], output_layouts=out)
    return fn(*args, **spec.attrs())


def _onednn_forward(x, w, b, spec: Spec):
    args = (x, w) if b is None else (x, w, b)
    return _call("forward", spec.out_shape, x.dtype, *args, spec=spec)


def _infer_spec(spec: Spec) -> Spec:
    """The inference path's oneDNN call: activations stored channel-last and handed over as they are.

    oneDNN's blocked activation layouts pay in training (resnet18's step ran 2.2-3.4x slower with
    plain channel-last activations) but cost a reorder of every input and output, a quarter of
    resnet18's oneDNN time in inference; without a backward, channel-last storage (which XLA's
    own CPU kernels around the convolution prefer too) wins: resnet18 inference 10-12% faster.
    """
    return spec._replace(memory_last=not spec.channel_last, plain=True)


# The primal below is what a program runs when nothing differentiates it (inference); _conv_fwd
# is the forward pass of training, whose backward handlers take oneDNN's blocked layouts.
@functools.partial(jax.custom_vjp, nondiff_argnums=(3,))
def _conv(x, w, b, spec: Spec):
    if spec.infer_xla is not None:
        return spec.infer_xla(x, w, b, spec.stride, spec.pad, spec.dilate, spec.groups, spec.channel_last)
    return _onednn_forward(x, w, b, _infer_spec(spec) if INFER_PLAIN else spec)


def _conv_fwd(x, w, b, spec):
    return _onednn_forward(x, w, b, spec), (x, w)


def _conv_bwd(spec, res, g):
    x, w = res
    dx = _call("backward_data", x.shape, x.dtype, g, w, spec=spec)
    dw = _call("backward_weights", w.shape, w.dtype, x, g, spec=spec)
    db = None
    if spec.has_bias:
        axes = tuple(range(g.ndim - 1)) if spec.channel_last else (0, *range(2, g.ndim))
        db = g.sum(axis=axes)
    return dx, dw, db


_conv.defvjp(_conv_fwd, _conv_bwd)


def _out_shape(x, w, stride, pad, dilate, channel_last):
    sp = x.shape[1:-1] if channel_last else x.shape[2:]
    ksz = w.shape[1:-1] if channel_last else w.shape[2:]
    out = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, s, p, d in zip(sp, ksz, stride, pad, dilate))
    o = w.shape[0]
    return (x.shape[0], *out, o) if channel_last else (x.shape[0], o, *out)


@functools.lru_cache(maxsize=4096)
def _check(flat: tuple) -> str | None:
    """None if oneDNN builds all three primitives for this configuration, else its reason."""
    arr = (ctypes.c_int64 * len(flat))(*flat)
    msg = ctypes.create_string_buffer(1024)
    if library().mxjax_onednn_conv_check(arr, len(flat), msg, len(msg)) == 0:
        return None
    return msg.value.decode("utf-8", "replace") or "rejected by oneDNN"


def _usable(x) -> str | None:
    """Why the oneDNN path cannot be used for these inputs (None when it can)."""
    if jax.default_backend() != "cpu":
        return f"default backend is {jax.default_backend()}, not cpu"
    if x.dtype not in _DTYPES:
        return f"dtype {x.dtype} (the oneDNN path takes float32 and bfloat16)"
    if not enabled():
        return "MXNET_ONEDNN_ENABLED=0"
    if not available():
        if not _warned:
            _warned.append(True)
            warnings.warn(f"mxjax: oneDNN convolutions unavailable, using XLA's ({load_error()})",
                          RuntimeWarning, stacklevel=4)
        return f"extension not loaded: {load_error()}"
    return None


def maybe_convolution(x, w, bias, stride, pad, dilate, groups, channel_last, xla=None):
    """The convolution on oneDNN, or None to have the caller use XLA's.

    ``x``/``w`` are MXNet's data and weight (checked and cast to one float dtype by the
    caller), ``bias`` the per-output-channel bias or None.  ``xla``, the caller's XLA
    convolution (same arguments), is what inference of thin inputs runs instead.
    """
    reason = _usable(x)
    if reason is None and (min(x.shape) == 0 or min(w.shape) == 0):
        reason = "empty input"
    out_shape = None
    memory_last = MEMORY_LAST and not channel_last
    if reason is None:
        out_shape = _out_shape(x, w, stride, pad, dilate, channel_last)
        ch = -1 if channel_last else 1
        sp = (lambda shape: tuple(shape[1:-1])) if channel_last else (lambda shape: tuple(shape[2:]))
        # Config::flat() in conv.cc: kind, dtype, rank, layouts, groups, bias, N, C, O, plain, then per
        # spatial axis; checked twice: the training path's three plans, the inference path's forward
        head = (0, _DTYPES[x.dtype], x.ndim - 2, int(channel_last))
        tail = (int(groups), int(bias is not None), x.shape[0], x.shape[ch], w.shape[0])
        tail2 = (*sp(x.shape), *sp(w.shape), *sp(out_shape), *stride, *pad, *dilate)
        infer_flat = tuple(int(v) for v in (*head, int(not channel_last), *tail, 1, *tail2))
        reason = _check(tuple(int(v) for v in (*head, int(memory_last), *tail, 0, *tail2))) or _check(infer_flat)
    if reason is not None:
        _log.debug("Convolution data %s weight %s: XLA path (%s)", tuple(x.shape), tuple(w.shape), reason)
        stats["lax"] += 1
        return None
    stats["onednn"] += 1
    b = None if bias is None else bias.astype(x.dtype)
    thin = xla is not None and groups == 1 and x.shape[-1 if channel_last else 1] <= INFER_XLA_MAX_CHANNELS
    infer_xla = xla if thin else None
    stats["onednn_infer_xla"] += thin
    spec = Spec(tuple(stride), tuple(pad), tuple(dilate), int(groups), bool(channel_last), memory_last,
                out_shape, bias is not None, infer_xla)
    packed = None if thin or not INFER_PLAIN else packing.lookup(w, infer_flat)
    if packed is not None:  # a hybridized block's inference program, its weight packed once (packing.py)
        stats["onednn_packed"] += 1
        return packing.forward_packed(x, packed, b, infer_flat, out_shape, _infer_spec(spec).act_layout(x.ndim))
    return _conv(x, w, b, spec)


# ----------------------------------------------------------------------------- deconvolution
# A transposed convolution is the data-gradient of the convolution that maps its output back
# to its input, with the same weight: MXNet's deconvolution weight (C, F/g, *k) is that
# convolution's weight (out C, in F/g, *k).  So the three handlers serve it too: forward =
# backward-data, data-gradient = forward, weight-gradient = backward-weights with the roles
# of data and output-gradient swapped.

@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def _deconv(x, w, spec: Spec, out_shape: tuple):
    return _call("backward_data", out_shape, x.dtype, x, w, spec=spec)


def _deconv_fwd(x, w, spec, out_shape):
    return _deconv(x, w, spec, out_shape), (x, w)


def _deconv_bwd(spec, out_shape, res, g):
    x, w = res
    dx = _call("forward", x.shape, x.dtype, g, w, spec=spec)
    dw = _call("backward_weights", w.shape, w.dtype, g, x, spec=spec)
    return dx, dw


_deconv.defvjp(_deconv_fwd, _deconv_bwd)


def maybe_deconvolution(x, w, stride, pad, dilate, adj, groups):
    """Channel-first transposed convolution of ``x`` (N, C, *sp) with MXNet's deconvolution
    weight ``w`` (C, F/g, *k) on oneDNN (no bias), or None to have the caller use XLA's."""
    reason = _usable(x)
    if reason is None and (min(x.shape) == 0 or min(w.shape) == 0):
        reason = "empty input"
    sizes = tuple(s * (n - 1) + d * (k - 1) + 1 - 2 * p + a
                  for n, k, s, p, d, a in zip(x.shape[2:], w.shape[2:], stride, pad, dilate, adj))
    if reason is None and min(sizes) < 1:
        reason = "no output"  # the caller's XLA path reports it
    if reason is None and any(a >= s for a, s in zip(adj, stride)):
        reason = f"adj {tuple(adj)} not below stride {tuple(stride)}"
    out_shape = (x.shape[0], w.shape[1] * groups, *sizes)
    if reason is None:
        flat = (0, _DTYPES[x.dtype], x.ndim - 2, 0, 0, int(groups), 0, x.shape[0], out_shape[1], x.shape[1], 0,
                *sizes, *w.shape[2:], *x.shape[2:], *stride, *pad, *dilate)
        reason = _check(tuple(int(v) for v in flat))
    if reason is not None:
        _log.debug("Deconvolution data %s weight %s: XLA path (%s)", tuple(x.shape), tuple(w.shape), reason)
        stats["lax"] += 1
        return None
    stats["onednn"] += 1
    spec = Spec(tuple(stride), tuple(pad), tuple(dilate), int(groups), False, False, tuple(x.shape), False)
    return _deconv(x, w, spec, out_shape)
