"""MXNet's reshape special codes, resolved to a concrete shape (pure Python, trace-time).

Legacy ``Reshape`` (``mx.nd.reshape``, symbol ``Reshape``): 0 copy, -1 infer,
-2 copy the rest, -3 merge two dims, -4 split one dim into the next two values.
``npx.reshape``: -1 infer, -2 copy, -3 drop a size-1 dim, -4 copy the rest,
-5 merge two dims, -6 split one dim into the next two values.
"""
from __future__ import annotations

from math import prod

from ..base import MXNetValueError


def _infer(out: list, total: int, src: tuple, spec: tuple, op: str) -> tuple:
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


def legacy_shape(src: tuple, spec: tuple, reverse: bool = False) -> tuple:
    """Resolve a legacy ``Reshape`` shape with codes 0, -1, -2, -3, -4."""
    if reverse:
        rev = _legacy(tuple(reversed(src)), _reverse_spec(spec), spec)
        return _infer(list(reversed(rev)), prod(src), src, spec, "Reshape")
    return _infer(_legacy(src, spec, spec), prod(src), src, spec, "Reshape")


def _reverse_spec(spec: tuple) -> tuple:
    # -4 groups (-4, a, b) keep their inner order when the spec is read right-to-left
    items, i = [], 0
    while i < len(spec):
        if spec[i] == -4:
            items.append((-4, spec[i + 2], spec[i + 1]))
            i += 3
        else:
            items.append((spec[i],))
            i += 1
    return tuple(v for group in reversed(items) for v in group)


def _legacy(src: tuple, spec: tuple, original: tuple) -> list:
    out, i, j = [], 0, 0
    while j < len(spec):
        code = spec[j]
        if code > 0 or code == -1:
            out.append(code)
            i += 1
        elif code == 0:
            _need(src, i, original, "Reshape")
            out.append(src[i])
            i += 1
        elif code == -2:
            out.extend(src[i:])
            i = len(src)
        elif code == -3:
            _need(src, i + 1, original, "Reshape")
            out.append(src[i] * src[i + 1])
            i += 2
        elif code == -4:
            _need(src, i, original, "Reshape")
            a, b = spec[j + 1], spec[j + 2]
            if a == -1:
                a = src[i] // b
            if b == -1:
                b = src[i] // a
            if a * b != src[i]:
                raise MXNetValueError(f"Reshape: cannot split dimension {src[i]} into ({spec[j + 1]}, {spec[j + 2]})")
            out.extend((a, b))
            i += 1
            j += 2
        else:
            raise MXNetValueError(f"Reshape: invalid shape code {code} in {original}")
        j += 1
    return out


def npx_shape(src: tuple, spec: tuple, reverse: bool = False) -> tuple:
    """Resolve an ``npx.reshape`` shape with codes -1 to -6."""
    if reverse:
        rev = _npx(tuple(reversed(src)), _reverse_npx(spec), spec)
        return _infer(list(reversed(rev)), prod(src), src, spec, "npx.reshape")
    return _infer(_npx(src, spec, spec), prod(src), src, spec, "npx.reshape")


def _reverse_npx(spec: tuple) -> tuple:
    items, i = [], 0
    while i < len(spec):
        if spec[i] == -6:
            items.append((-6, spec[i + 2], spec[i + 1]))
            i += 3
        else:
            items.append((spec[i],))
            i += 1
    return tuple(v for group in reversed(items) for v in group)


def _npx(src: tuple, spec: tuple, original: tuple) -> list:
    out, i, j = [], 0, 0
    while j < len(spec):
        code = spec[j]
        if code >= 0 or code == -1:
            out.append(code)
            i += 1
        elif code == -2:
            _need(src, i, original, "npx.reshape")
            out.append(src[i])
            i += 1
        elif code == -3:
            _need(src, i, original, "npx.reshape")
            if src[i] != 1:
                raise MXNetValueError(f"npx.reshape: code -3 needs a size-1 dimension, got {src[i]} in {src}")
            i += 1
        elif code == -4:
            out.extend(src[i:])
            i = len(src)
        elif code == -5:
            _need(src, i + 1, original, "npx.reshape")
            out.append(src[i] * src[i + 1])
            i += 2
        elif code == -6:
            _need(src, i, original, "npx.reshape")
            a, b = spec[j + 1], spec[j + 2]
            if a == -1:
                a = src[i] // b
            if b == -1:
                b = src[i] // a
            if a * b != src[i]:
                raise MXNetValueError(
                    f"npx.reshape: cannot split dimension {src[i]} into ({spec[j + 1]}, {spec[j + 2]})")
            out.extend((a, b))
            i += 1
            j += 2
        else:
            raise MXNetValueError(f"npx.reshape: invalid shape code {code} in {original}")
        j += 1
    return out


def _need(src: tuple, i: int, spec: tuple, op: str) -> None:
    if i >= len(src):
        raise MXNetValueError(f"{op}: shape {spec} refers to more dimensions than the input {src} has")
