"""MXNet's reshape special codes, resolved to a concrete shape (pure Python, trace-time).

Legacy ``Reshape`` (``mx.nd.reshape``, symbol ``Reshape``): 0 copy, -1 infer,
-2 copy the rest, -3 merge two dims, -4 split one dim into the next two values.
``npx.reshape``: -1 infer, -2 copy, -3 drop a size-1 dim, -4 copy the rest,
-5 merge two dims, -6 split one dim into the next two values (0 is a real 0).
Both dialects share one resolver; a table maps each dialect's codes to actions.
"""
from __future__ import annotations

from math import prod

from ..base import MXNetValueError

_LEGACY = {0: "copy", -2: "rest", -3: "merge", -4: "split"}
_NPX = {-2: "copy", -3: "drop", -4: "rest", -5: "merge", -6: "split"}


def legacy_shape(src: tuple, spec: tuple, reverse: bool = False) -> tuple:
    """Resolve a legacy ``Reshape`` shape with codes 0, -1, -2, -3, -4."""
    return _resolve(src, spec, reverse, _LEGACY, "Reshape")


def npx_shape(src: tuple, spec: tuple, reverse: bool = False) -> tuple:
    """Resolve an ``npx.reshape`` shape with codes -1 to -6."""
    return _resolve(src, spec, reverse, _NPX, "npx.reshape")


def _resolve(src: tuple, spec: tuple, reverse: bool, codes: dict, op: str) -> tuple:
    if reverse:  # read both shapes right to left; a split group keeps its own order reversed too
        out = _apply(tuple(reversed(src)), _reverse_spec(spec, codes), codes, spec, op)
        return _infer(list(reversed(out)), src, spec, op)
    return _infer(_apply(src, spec, codes, spec, op), src, spec, op)


def _reverse_spec(spec: tuple, codes: dict) -> tuple:
    split = next(code for code, action in codes.items() if action == "split")
    groups, i = [], 0
    while i < len(spec):
        if spec[i] == split:
            groups.append((split, spec[i + 2], spec[i + 1]))
            i += 3
        else:
            groups.append((spec[i],))
            i += 1
    return tuple(v for group in reversed(groups) for v in group)


def _apply(src: tuple, spec: tuple, codes: dict, original: tuple, op: str) -> list:
    out, i, j = [], 0, 0
    while j < len(spec):
        code = spec[j]
        action = codes.get(code, "literal" if code >= -1 else None)
        if action is None:
            raise MXNetValueError(f"{op}: invalid shape code {code} in {original}")
        if action == "literal":  # a size, or -1 to infer
            out.append(code)
            i += 1
        elif action == "rest":
            out.extend(src[i:])
            i = len(src)
        else:
            _need(src, i + (action == "merge"), original, op)
            if action == "copy":
                out.append(src[i])
            elif action == "drop" and src[i] != 1:
                raise MXNetValueError(f"{op}: code {code} needs a size-1 dimension, got {src[i]} in {src}")
            elif action == "merge":
                out.append(src[i] * src[i + 1])
                i += 1
            elif action == "split":
                out.extend(_split(src[i], spec[j + 1], spec[j + 2], op))
                j += 2
            i += 1
        j += 1
    return out


def _split(dim: int, a: int, b: int, op: str) -> tuple:
    first = dim // b if a == -1 else a
    second = dim // first if b == -1 else b
    if first * second != dim:
        raise MXNetValueError(f"{op}: cannot split dimension {dim} into ({a}, {b})")
    return first, second


def _infer(out: list, src: tuple, spec: tuple, op: str) -> tuple:
    total = prod(src)
    unknown = [i for i, v in enumerate(out) if v == -1]
    if len(unknown) > 1:
        raise MXNetValueError(f"{op}: more than one dimension to infer in shape {spec} for input {src}")
    if unknown:
        known = prod(v for v in out if v != -1)
        if known == 0 or total % known:
            raise MXNetValueError(f"{op}: cannot reshape array of shape {src} into shape {spec}")
        out[unknown[0]] = total // known
    if prod(out) != total:
        raise MXNetValueError(f"{op}: cannot reshape array of shape {src} ({total} elements) into shape {spec}")
    return tuple(out)


def _need(src: tuple, i: int, spec: tuple, op: str) -> None:
    if i >= len(src):
        raise MXNetValueError(f"{op}: shape {spec} refers to more dimensions than the input {src} has")
