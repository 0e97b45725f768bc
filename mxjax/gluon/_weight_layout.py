"""Convolution weights handed to a hybridized block's compiled program in the layout its
convolutions read, kept from call to call: :func:`weight_program`.

Only calls not recorded for autograd use it (a recorded call differentiates with respect to
the weights as they are).  The relaid copy of a weight is kept while the parameter's array
lives (``graph.derived``), as MXNet's oneDNN backend keeps reordered weights for inference
until they are written.

- XLA's CPU convolution reads ``(*kernel, in, out)``, not MXNet's ``(out, in, *kernel)``, and
  otherwise rewrites every weight on every call (resnet18: about 44 MB per forward, 20% of a
  batch-4 inference).  The program takes them pre-transposed and transposes them back at its
  top, a pair XLA cancels.
- oneDNN's convolutions read a blocked layout of their own: the program takes each weight
  packed once besides (``_onednn.packing``).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from .._onednn import packing
from ..graph.derived import derived
from ..graph.ir import topo_order

__all__ = ["conv_weights", "weight_program"]


def conv_weights(outputs: Sequence[Any], input_names: Sequence[str], params: dict) -> dict:
    """``{input position: channel_last}`` for the parameters used only as the weight of
    convolutions of one layout (and not outputs themselves)."""
    uses: dict[str, list] = {}
    for node in topo_order(outputs):
        for slot, (source, _) in enumerate(node.inputs):
            if source.is_variable:
                uses.setdefault(source.name, []).append((node, slot))
    returned = {source.name for source, _ in outputs if source.is_variable}
    weights = {}
    for position, name in enumerate(input_names):
        param, used = params.get(name), uses.get(name)
        if param is None or not used or name in returned or param.shape is None or len(param.shape) < 3:
            continue
        if any(node.op != "Convolution" or slot != 1 for node, slot in used):
            continue
        channel_last = {str(node.params.get("layout") or "").endswith("C") for node, _ in used}
        if len(channel_last) == 1:
            weights[position] = channel_last.pop()
    return weights


def weight_program(program: Callable, compiled: Callable, outputs: Sequence[Any], input_names: Sequence[str],
                   params: dict) -> Callable | None:
    """What a block's calls not recorded for autograd run instead of ``compiled`` (both take
    ``(inputs, rng)``), or None where nothing is gained: off CPU, where backends pick layouts
    themselves, and in graphs without convolution weights."""
    if jax.default_backend() != "cpu":
        return None
    weights = conv_weights(outputs, input_names, params)
    if not weights:
        return None
    if packing.applies():
        return packing.PackedProgram(program, compiled, sorted(weights))
    layouts = {}
    for position, channel_last in weights.items():
        spatial = len(params[input_names[position]].shape) - 2
        if channel_last:  # (out, *kernel, in)
            layouts[position] = tuple(range(1, 1 + spatial)) + (1 + spatial, 0)
        else:  # (out, in, *kernel)
            layouts[position] = tuple(range(2, 2 + spatial)) + (1, 0)
    return TransposedProgram(program, layouts)


@functools.lru_cache(maxsize=None)
def _transpose(perm: tuple) -> Any:
    return jax.jit(functools.partial(jnp.transpose, axes=perm))


class TransposedProgram:
    """``program(inputs, rng)`` compiled to take the inputs at ``layouts`` transposed, each
    transposed copy kept while its source lives (``graph.derived``)."""

    def __init__(self, program: Callable, layouts: dict) -> None:
        self.layouts = layouts
        inverse = {position: tuple(int(a) for a in onp.argsort(perm)) for position, perm in layouts.items()}

        def run(inputs: tuple, rng: Any) -> Any:
            return program(tuple(jnp.transpose(x, inverse[i]) if i in inverse else x
                                 for i, x in enumerate(inputs)), rng)
        self._run = jax.jit(run)

    def __call__(self, args: tuple, rng: Any) -> Any:
        return self._run(self._relaid(args), rng)

    def prepare(self, args: tuple, rng: Any) -> tuple:
        """The jitted program a call with these arguments runs, and its arguments."""
        return self._run, (self._relaid(args), rng)

    def _relaid(self, args: tuple) -> tuple:
        out = list(args)
        for position, perm in self.layouts.items():
            out[position] = derived(out[position], ("transposed", perm), _transpose(perm))
        return tuple(out)
