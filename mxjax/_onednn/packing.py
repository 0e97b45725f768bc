"""Inference convolutions on weights packed once into oneDNN's own layout.

oneDNN's inference forward reads its weights in a blocked layout of its choosing; handed
MXNet's layout, it reorders them at every call (resnet18_v1: 45 MB per forward pass).  The
programs that run calls nothing differentiates -- a hybridized block's inference program,
a bulk segment of imperative ops -- are therefore :class:`PackedProgram`: besides each
convolution weight they take that weight packed.  A weight is packed once per array and
configuration (:func:`packed`) and kept while the array lives, as MXNet's oneDNN backend
keeps reordered weights until they are written: a parameter's new array is packed anew.

While such a program is traced, :func:`lookup` (called by ``ops.maybe_convolution``) finds
the packed tracer of a weight tracer by identity; a weight used any other way simply stays
unpacked, so the packed program computes exactly what the plain one does.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import threading
from typing import Any, Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from . import TARGETS, available, enabled, library
from ..graph.derived import derived

__all__ = ["PackedProgram", "applies", "lookup", "forward_packed", "pack", "packed", "packed_bytes"]


class _Slot(NamedTuple):
    source: Any  # the weight tracer of the program being traced
    packed: Any  # its packed tracer, or None while discovering
    flat: tuple | None  # the configuration it was packed for
    seen: set | None  # discovering: the configurations the weight is used with


_local = threading.local()  # .tables: the weights of the programs this thread traces, innermost last
# False: blocks trace their inference programs with weights unpacked (reordered at every call).  For measuring.
ENABLED = True


def _tables() -> list:
    tables = getattr(_local, "tables", None)
    if tables is None:
        tables = _local.tables = []
    return tables


@contextlib.contextmanager
def _tracing(table: dict):
    tables = _tables()
    tables.append(table)
    try:
        yield
    finally:
        tables.pop()


def applies() -> bool:
    """Whether convolutions run on oneDNN here: a CPU backend with the extension on and loaded."""
    return jax.default_backend() == "cpu" and enabled() and available()


def lookup(w: Any, flat: tuple) -> Any:
    """The packed form of weight ``w`` for the inference convolution ``flat``, or None."""
    tables = getattr(_local, "tables", None)
    if not tables or not ENABLED:
        return None
    slot = tables[-1].get(id(w))
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


def packed(w: Any, flat: tuple) -> Any:
    """``pack(w, flat)``, kept while ``w`` lives: an array is packed once per configuration."""
    return derived(w, ("onednn-packed", flat), lambda source: pack(source, flat))


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
    Where none is, ``compiled`` (the plain program, jitted) runs.
    """

    def __init__(self, program: Callable, compiled: Callable, positions: Sequence[int]) -> None:
        self.program, self.compiled, self.positions = program, compiled, tuple(positions)
        self.flats: dict | None = None  # {position: configuration}, after the first call
        self._run = None

    def __call__(self, args: tuple, rng: Any) -> Any:
        program, call = self.prepare(args, rng)
        return program(*call)

    def prepare(self, args: tuple, rng: Any) -> tuple:
        """The jitted program a call with these arguments runs, and its arguments."""
        if self.flats is None:
            self.flats = self._discover(args, rng)
            self._run = jax.jit(self._packed_program) if self.flats else None
        if self._run is None:
            return self.compiled, (args, rng)
        return self._run, (args, tuple(packed(args[p], flat) for p, flat in self.flats.items()), rng)

    def _discover(self, args: tuple, rng: Any) -> dict:
        seen: dict = {}

        def probe(inputs, key):
            table = {}
            for p in self.positions:
                table[id(inputs[p])] = _Slot(inputs[p], None, None, seen.setdefault(p, set()))
            with _tracing(table):
                return self.program(inputs, key)

        jax.eval_shape(probe, args, rng)
        single = {p: flats.pop() for p, flats in seen.items() if len(flats) == 1}
        return {p: flat for p, flat in single.items() if packed_bytes(flat) > 0}

    def _packed_program(self, inputs: tuple, weights: tuple, rng: Any) -> Any:
        table = {id(inputs[p]): _Slot(inputs[p], w, flat, None)
                 for (p, flat), w in zip(self.flats.items(), weights)}
        with _tracing(table):
            return self.program(inputs, rng)
