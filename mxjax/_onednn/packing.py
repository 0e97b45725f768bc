"""Inference convolutions on weights packed once into oneDNN's own layout.

oneDNN's inference forward reads its weights in a blocked layout of its choosing; handed
MXNet's layout, it reorders them at every call (resnet18_v1: 45 MB per forward pass).  A
hybridized block's calls that nothing differentiates therefore run :class:`PackedProgram`:
its program takes, beside each convolution weight, that weight packed, packed once per
weight array and kept until the parameter's array changes (a weak reference sees it), as
MXNet's oneDNN backend keeps reordered weights until they are written.

While such a program is traced, :func:`lookup` (called by ``ops.maybe_convolution``) finds
the packed tracer of a weight tracer by identity; a weight used any other way simply stays
unpacked, so the packed program computes exactly what the plain one does.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import weakref
from typing import Any, Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from . import TARGETS, library

__all__ = ["PackedProgram", "lookup", "forward_packed", "pack", "packed_bytes"]


class _Slot(NamedTuple):
    source: Any  # the weight tracer of the program being traced
    packed: Any  # its packed tracer, or None while discovering
    flat: tuple | None  # the configuration it was packed for
    seen: set | None  # discovering: the configurations the weight is used with


_tables: list = []  # the weights of the programs being traced, innermost last
# False: blocks trace their inference programs with weights unpacked (reordered at every call).  For measuring.
ENABLED = True


@contextlib.contextmanager
def _tracing(table: dict):
    _tables.append(table)
    try:
        yield
    finally:
        _tables.pop()


def lookup(w: Any, flat: tuple) -> Any:
    """The packed form of weight ``w`` for the inference convolution ``flat``, or None."""
    if not _tables or not ENABLED:
        return None
    slot = _tables[-1].get(id(w))
    if slot is None or slot.source is not w:
        return None
    if slot.seen is not None:
        slot.seen.add(flat)
        return None
    return slot.packed if slot.flat == flat else None


@functools.lru_cache(maxsize=4096)
def packed_bytes(flat: tuple) -> int:
    """Bytes of the weights packed for configuration ``flat`` (0: its plan reads them as given)."""
    arr = (ctypes.c_int64 * len(flat))(*flat)
    return max(int(library().mxjax_onednn_packed_bytes(arr, len(flat))), 0)


@functools.lru_cache(maxsize=4096)
def _packer(flat: tuple) -> Callable:
    call = jax.ffi.ffi_call(TARGETS["pack_weights"], jax.ShapeDtypeStruct((packed_bytes(flat),), jnp.uint8))
    config = onp.asarray(flat, dtype=onp.int64)
    return jax.jit(lambda w: call(w, config=config))


def pack(w: Any, flat: tuple) -> Any:
    """MXNet's weight ``w`` packed for the inference convolution ``flat`` (a uint8 array)."""
    return _packer(flat)(w)


def forward_packed(x: Any, packed: Any, bias: Any, flat: tuple, out_shape: tuple, layout: Any) -> Any:
    """The inference convolution ``flat`` on packed weights; ``layout`` is the activations'
    major-to-minor order asked of XLA (None: row-major)."""
    args = (x, packed) if bias is None else (x, packed, bias)
    call = jax.ffi.ffi_call(TARGETS["forward_packed"], jax.ShapeDtypeStruct(out_shape, x.dtype),
                            vmap_method="sequential", input_layouts=(layout, None, None)[:len(args)],
                            output_layouts=layout)
    return call(*args, config=onp.asarray(flat, dtype=onp.int64))


class PackedProgram:
    """``program(inputs, rng)`` run with the convolution weights at ``positions`` packed.

    The first call traces the program once without compiling it to learn each weight's
    convolution configuration (those of the input signature the program was built for);
    weights used by one configuration that oneDNN packs are handed packed from then on.
    Where none is, ``compiled`` (the plain program) runs.
    """

    def __init__(self, program: Callable, compiled: Callable, positions: Sequence[int]) -> None:
        self.program, self.compiled, self.positions = program, compiled, tuple(positions)
        self.flats: dict | None = None  # {position: configuration}, after the first call
        self.held: dict = {}  # {position: (weak reference to the weight, packed weight)}
        self._run = None

    def __call__(self, args: tuple, rng: Any) -> Any:
        if self.flats is None:
            self.flats = self._discover(args, rng)
            self._run = jax.jit(self._packed_program) if self.flats else None
        if self._run is None:
            return self.compiled(args, rng)
        return self._run(*self._arguments(args, rng))

    def compiled_call(self, args: tuple, rng: Any) -> tuple:
        """The jitted program a call with these arguments runs, and its arguments."""
        if self._run is None:
            return self.compiled, (args, rng)
        return self._run, self._arguments(args, rng)

    def _arguments(self, args: tuple, rng: Any) -> tuple:
        return args, tuple(self._packed(args[p], p) for p in self.flats), rng

    def _discover(self, args: tuple, rng: Any) -> dict:
        seen: dict = {}

        def probe(inputs, key):
            table = {}
            for p in self.positions:
                table[id(inputs[p])] = _Slot(inputs[p], None, None, seen.setdefault(p, set()))
            with _tracing(table):
                return self.program(inputs, key)

        jax.eval_shape(probe, args, rng)
        return {p: next(iter(flats)) for p, flats in seen.items()
                if len(flats) == 1 and packed_bytes(next(iter(flats))) > 0}

    def _packed_program(self, inputs: tuple, packed: tuple, rng: Any) -> Any:
        table = {id(inputs[p]): _Slot(inputs[p], w, flat, None)
                 for (p, flat), w in zip(self.flats.items(), packed)}
        with _tracing(table):
            return self.program(inputs, rng)

    def _packed(self, source: Any, position: int) -> Any:
        kept = self.held.get(position)
        if kept is None or kept[0]() is not source:
            kept = self.held[position] = (weakref.ref(source), pack(source, self.flats[position]))
        return kept[1]
