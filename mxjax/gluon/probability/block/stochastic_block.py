"""``StochasticBlock``: a HybridBlock whose forward pass can also emit auxiliary losses (KL terms, ...)."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ...block import HybridBlock

__all__ = ['StochasticBlock', 'StochasticSequential']

_MISSING = object()


class StochasticBlock(HybridBlock):
    """A HybridBlock that gathers the losses passed to ``add_loss`` while ``forward`` runs.

    Decorate ``forward`` with ``StochasticBlock.collectLoss``; after each call the gathered
    terms are available as ``self.losses``.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._losses: list = []      # the losses of the last completed call
        self._pending: list = []     # filled by add_loss during the current call
        self._wrapped_ok = False     # set by the collectLoss wrapper

    def add_loss(self, loss: Any) -> None:
        """Queue ``loss`` for the forward pass in progress."""
        self._pending.append(loss)

    @staticmethod
    def collectLoss(func: Callable) -> Callable:  # pylint: disable=invalid-name
        """Wrap ``forward`` so that it answers ``(output, losses)``; ``__call__`` unpacks the pair."""
        @functools.wraps(func)
        def forward_with_losses(self, *args, **kwargs):
            result = func(self, *args, **kwargs)
            gathered = self._pending
            self._pending = []
            self._wrapped_ok = True
            return result, gathered
        return forward_with_losses

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._wrapped_ok = False
        packed = super().__call__(*args, **kwargs)
        # a hybridized call replays a traced graph, so the flag may stay unset there: accept a pair
        looks_packed = self._active and isinstance(packed, tuple) and len(packed) == 2
        if not (self._wrapped_ok or looks_packed):
            raise ValueError("The forward function should be decorated by StochasticBlock.collectLoss")
        result, gathered = packed
        self._losses = list(gathered)
        return result

    @property
    def losses(self) -> list:
        return self._losses


class StochasticSequential(StochasticBlock):
    """Run child blocks one after another; each stochastic child's losses become one entry of ``losses``."""

    def add(self, *blocks: Any) -> None:
        """Append ``blocks`` as children, in order."""
        for blk in blocks:
            self.register_child(blk)

    @StochasticBlock.collectLoss
    def forward(self, x, *args):
        extra = args
        for blk in self._children.values():
            x = blk(x, *extra)
            extra = ()
            if isinstance(x, (tuple, list)):
                # multi-output child: first item flows on, the rest become extra inputs
                x, extra = x[0], tuple(x[1:])
        for blk in self._children.values():
            child_losses = getattr(blk, '_losses', _MISSING)
            if child_losses is not _MISSING:
                self.add_loss(child_losses)
        return (x,) + extra if extra else x

    def __repr__(self) -> str:
        rows = []
        for name, blk in self._children.items():
            text = repr(blk).replace('\n', '\n  ')
            rows.append(f'  ({name}): {text}')
        return type(self).__name__ + '(\n' + '\n'.join(rows) + '\n)'

    def __getitem__(self, key: Any) -> Any:
        picked = list(self._children.values())[key]
        if not isinstance(picked, list):
            return picked
        sub = type(self)()
        sub.add(*picked)
        return sub

    def __len__(self) -> int:
        return len(self._children)
