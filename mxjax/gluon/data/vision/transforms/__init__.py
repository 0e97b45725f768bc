"""``mx.gluon.data.vision.transforms``: composable image transforms for Gluon data pipelines.

The image transforms live in ``image.py``; this module adds the containers that chain them
(``Compose``, ``HybridCompose``), apply them by chance (``RandomApply``, ``HybridRandomApply``)
and ``Cast``.  Extra inputs after the image (labels) travel along every chain unchanged.
"""
from __future__ import annotations

import random
from typing import Any, Iterable

from ..... import numpy as np
from ..... import numpy_extension as npx  # noqa: F401  (in MXNet's namespace too)
from ..... import _deferred_compute as dc
from ....._ndarray import NDArray
from .....base import MXNetValueError
from .....util import use_np
from ....block import Block, HybridBlock
from ....nn import HybridSequential, Sequential
from . import image  # noqa: F401
from .image import *  # noqa: F401,F403
from .image import _append_return
from .image import __all__ as _image_names

__all__ = ["Compose", "HybridCompose", "Cast", "RandomApply", "HybridRandomApply"] + list(_image_names)


def _run_chain(blocks: Iterable[Block], x: Any, args: tuple) -> Any:
    """Feed ``(x, *args)`` through ``blocks``; a block returning a tuple passes its tail on as the
    next block's extra inputs.  The result is ``x`` alone or ``(x, *extras)``."""
    for block in blocks:
        out = block(x, *args)
        if isinstance(out, (tuple, list)):
            x, args = out[0], tuple(out[1:])
        else:
            x, args = out, ()
    return _append_return(x, *args)


def _all_arrays(args: tuple) -> bool:
    return all(isinstance(a, NDArray) for a in args)


class _ExtrasOutsideProgram:
    """Mixin for hybridized containers: extra inputs that are not arrays (a Python int label)
    cannot enter a compiled program (MXNet 2.0 raises); the image alone is compiled then and the
    extras ride along unchanged."""

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if (len(args) > 1 and self._active and not kwargs and not dc.is_deferred_compute()
                and not _all_arrays(args[1:])):
            return _append_return(super()._call(args[0]), *args[1:])
        return super()._call(*args, **kwargs)


class Compose(Sequential):
    """Apply ``transforms`` in order.

    Runs of consecutive HybridBlocks are grouped into one hybridized ``HybridCompose`` (a lone
    HybridBlock is kept as it is), so they compile together; other blocks run imperatively.
    """

    def __init__(self, transforms: Iterable[Block]) -> None:
        super().__init__()
        run: list = []
        # a None sentinel closes the last run; the caller's list is left alone (MXNet appends to it)
        for block in list(transforms) + [None]:
            if isinstance(block, HybridBlock):
                run.append(block)
                continue
            if len(run) == 1:
                self.add(run[0])
            elif run:
                self.add(HybridCompose(run))
            run = []
            if block is not None:
                self.add(block)

    def forward(self, x: Any, *args: Any) -> Any:
        return _run_chain(self._children.values(), x, args)


class HybridCompose(_ExtrasOutsideProgram, HybridSequential):
    """``Compose`` of HybridBlocks only, hybridized as one program."""

    def __init__(self, transforms: Iterable[Block]) -> None:
        super().__init__()
        for block in transforms:
            if not isinstance(block, HybridBlock):
                raise ValueError(f"HybridCompose: {type(block).__name__} is not a HybridBlock; "
                                 "use Compose to mix in plain Blocks")
            self.add(block)
        self.hybridize()

    def forward(self, x: Any, *args: Any) -> Any:
        return _run_chain(self._children.values(), x, args)


@use_np
class Cast(_ExtrasOutsideProgram, HybridBlock):
    """Cast every input array to ``dtype``; returns a tuple, one entry per input (as MXNet 2.0,
    also for a single input; ``Compose`` unwraps it).  Inputs that are not arrays pass unchanged."""

    def __init__(self, dtype: Any = "float32") -> None:
        super().__init__()
        self._dtype = dtype

    def forward(self, *args: Any) -> tuple:
        return tuple(a.astype(self._dtype) if isinstance(a, NDArray) else a for a in args)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        out = super()._call(*args, **kwargs)
        return out if isinstance(out, tuple) else tuple(out) if isinstance(out, list) else (out,)


def _as_block(transforms: Any, compose: type) -> Block:
    return compose(transforms) if isinstance(transforms, (list, tuple)) else transforms


class RandomApply(Sequential):
    """Apply ``transforms`` (a Block, or a list of them) with probability ``p``, drawn from
    Python's ``random`` stream as in MXNet."""

    def __init__(self, transforms: Any, p: float = 0.5) -> None:
        super().__init__()
        self.transforms = _as_block(transforms, Compose)
        self.p = p

    def forward(self, x: Any, *args: Any) -> Any:
        # MXNet 2.0 returns the image alone when it skips, dropping the extras; they are kept
        if self.p < random.random():
            return _append_return(x, *args)
        return _append_return(self.transforms(x), *args)


@use_np
class HybridRandomApply(_ExtrasOutsideProgram, HybridSequential):
    """Apply ``transforms`` (a HybridBlock, or a list of them) with probability ``p``; the draw is
    part of the hybridized program.  The transforms must keep the image's shape; the output has
    the transformed dtype either way.  (MXNet 2.0's version fails on every call.)"""

    def __init__(self, transforms: Any, p: float = 0.5) -> None:
        super().__init__()
        transforms = _as_block(transforms, HybridCompose)
        if not isinstance(transforms, HybridBlock):
            raise _NotHybrid(f"HybridRandomApply: transforms must be HybridBlocks, got {type(transforms).__name__}")
        self.transforms = transforms
        self.p = p

    def forward(self, x: Any, *args: Any) -> Any:
        out = self.transforms(x)
        if tuple(out.shape) != tuple(x.shape):
            raise MXNetValueError(f"HybridRandomApply: the transforms turn shape {tuple(x.shape)} into "
                                  f"{tuple(out.shape)}; they must keep the image's shape (use RandomApply)")
        chosen = np.where(np.random.uniform(0, 1, size=1) < self.p, out, x.astype(out.dtype))
        return _append_return(chosen, *args)


class _NotHybrid(TypeError, AssertionError):
    """A non-hybrid block given to HybridRandomApply (MXNet 2.0 asserts: also an AssertionError)."""
