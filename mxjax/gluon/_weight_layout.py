"""Convolution weights handed to a hybridized block's compiled program in the layout XLA's
CPU convolution reads, ``(*kernel, in, out)``, instead of MXNet's ``(out, in, *kernel)``.

XLA on CPU otherwise rewrites every convolution weight on every call: for resnet18 about
44 MB per forward pass, 20% of a batch-4 inference.  A block's compiled program can take
those weights pre-transposed and transpose them back at its top, a pair XLA cancels; the
transposed copy is kept until the parameter's array changes, as MXNet's oneDNN backend keeps
reordered weights for inference.  Only calls that are not recorded for autograd use it (a
recorded call differentiates with respect to the weights as they are).
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _onednn
from ..graph.ir import topo_order

__all__ = ["conv_weight_layouts", "relaid_program", "relaid_inputs"]


def conv_weight_layouts(outputs: Sequence[Any], input_names: Sequence[str], params: dict) -> dict:
    """``{input position: permutation to (*kernel, in, out)}`` for the parameters that are
    used only as the weight of convolutions (and are not outputs themselves)."""
    if jax.default_backend() != "cpu":  # measured on XLA:CPU; other backends pick layouts themselves
        return {}
    if _onednn.enabled() and _onednn.available():  # oneDNN reorders weights itself: a relayout is a copy more
        return {}
    uses: dict[str, list] = {}
    for node in topo_order(outputs):
        for slot, (source, _) in enumerate(node.inputs):
            if source.is_variable:
                uses.setdefault(source.name, []).append((node, slot))
    returned = {source.name for source, _ in outputs if source.is_variable}
    layouts = {}
    for position, name in enumerate(input_names):
        param, used = params.get(name), uses.get(name)
        if param is None or not used or name in returned or param.shape is None or len(param.shape) < 3:
            continue
        if any(node.op != "Convolution" or slot != 1 for node, slot in used):
            continue
        channel_last = {str(node.params.get("layout") or "").endswith("C") for node, _ in used}
        if len(channel_last) != 1:
            continue
        spatial = len(param.shape) - 2
        if channel_last.pop():  # (out, *kernel, in)
            layouts[position] = tuple(range(1, 1 + spatial)) + (1 + spatial, 0)
        else:  # (out, in, *kernel)
            layouts[position] = tuple(range(2, 2 + spatial)) + (1, 0)
    return layouts


def relaid_program(program: Any, layouts: dict) -> Any:
    """``program(inputs, rng)`` compiled to take the inputs at ``layouts`` transposed."""
    inverse = {position: tuple(int(a) for a in onp.argsort(perm)) for position, perm in layouts.items()}

    def run(inputs: tuple, rng: Any) -> Any:
        return program(tuple(jnp.transpose(x, inverse[i]) if i in inverse else x
                             for i, x in enumerate(inputs)), rng)
    return jax.jit(run)


@functools.lru_cache(maxsize=None)
def _transpose(perm: tuple) -> Any:
    return jax.jit(functools.partial(jnp.transpose, axes=perm))


def relaid_inputs(arrays: Sequence[Any], layouts: dict, held: dict) -> tuple:
    """``arrays`` with those at ``layouts`` transposed; ``held`` keeps each transposed copy
    with a weak reference to its source, so it is remade only when the source changes."""
    out = list(arrays)
    for position, perm in layouts.items():
        source = out[position]
        kept = held.get(position)
        if kept is None or kept[0]() is not source:
            kept = held[position] = (weakref.ref(source), _transpose(perm)(source))
        out[position] = kept[1]
    return tuple(out)
