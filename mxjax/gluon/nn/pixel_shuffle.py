"""Pixel-shuffle layers: move channel groups into spatial positions (sub-pixel upsampling).

``PixelShuffleND(f)`` maps ``(N, C*f1*...*fd, S1, ..., Sd)`` to ``(N, C, S1*f1, ..., Sd*fd)``; each
output position ``s*f + k`` along a spatial axis takes the channel sub-index ``k``.
"""
from __future__ import annotations

from typing import Any

from ... import numpy as np
from ...base import MXNetValueError
from ..block import HybridBlock

__all__ = ["PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


class _PixelShuffle(HybridBlock):
    """Shared reshape/transpose for ``ndim`` spatial axes."""

    _ndim = 0

    def __init__(self, factor: Any) -> None:
        super().__init__()
        factors = (factor,) * self._ndim if isinstance(factor, int) else tuple(factor)
        if len(factors) != self._ndim or not all(isinstance(f, int) and f > 0 for f in factors):
            raise MXNetValueError(f"{type(self).__name__}: factor must be a positive int or a tuple of "
                                  f"{self._ndim} positive ints, got {factor!r}")
        self._factors = factors

    def forward(self, x: Any) -> Any:
        d = self._ndim
        if x.ndim != d + 2:
            raise MXNetValueError(f"{type(self).__name__}: expected a {d + 2}-d input (N, C, spatial...), "
                                  f"got shape {x.shape}")
        n, c, *spatial = x.shape
        group = 1
        for f in self._factors:
            group *= f
        if c % group:
            raise MXNetValueError(f"{type(self).__name__}: channels {c} of input shape {x.shape} are not "
                                  f"divisible by the product of factors {self._factors}")
        y = np.reshape(x, (n, c // group, *self._factors, *spatial))
        # interleave: (N, C, S1, f1, S2, f2, ...)
        order = [0, 1]
        for i in range(d):
            order += [2 + d + i, 2 + i]
        y = np.transpose(y, tuple(order))
        return np.reshape(y, (n, c // group, *(s * f for s, f in zip(spatial, self._factors))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factors})"


class PixelShuffle1D(_PixelShuffle):
    """``(N, C*f, W)`` to ``(N, C, W*f)``."""

    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    """``(N, C*f1*f2, H, W)`` to ``(N, C, H*f1, W*f2)``."""

    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    """``(N, C*f1*f2*f3, D, H, W)`` to ``(N, C, D*f1, H*f2, W*f3)``."""

    _ndim = 3
