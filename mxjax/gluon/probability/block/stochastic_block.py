"""``StochasticBlock``: a HybridBlock whose forward also reports losses (e.g. KL terms)."""
from __future__ import annotations

from functools import wraps
from typing import Any, Callable

from ...block import HybridBlock

__all__ = ['StochasticBlock', 'StochasticSequential']


def _indent(text: str, num_spaces: int) -> str:
    lines = text.split('\n')
    return '\n'.join(lines[:1] + [' ' * num_spaces + line for line in lines[1:]])


class StochasticBlock(HybridBlock):
    """A HybridBlock that collects losses added with ``add_loss`` during ``forward``.

    ``forward`` must be decorated with ``StochasticBlock.collectLoss``; after a call the
    losses are in ``self.losses``.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._losses: list = []
        self._losscache: list = []
        self._flag = False

    def add_loss(self, loss: Any) -> None:
        """Record ``loss`` for the current forward pass."""
        self._losscache.append(loss)

    @staticmethod
    def collectLoss(func: Callable) -> Callable:  # pylint: disable=invalid-name
        """Decorate ``forward``: return ``(output, losses)`` so that ``__call__`` can pick them up."""
        @wraps(func)
        def inner(self, *args, **kwargs):
            out = func(self, *args, **kwargs)
            collected, self._losscache = self._losscache, []
            self._flag = True
            return (out, collected)
        return inner

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._flag = False
        out = super().__call__(*args, **kwargs)
        if not self._flag and not (isinstance(out, tuple) and len(out) == 2 and self._active):
            raise ValueError("The forward function should be decorated by StochasticBlock.collectLoss")
        self._losses = list(out[1])
        return out[0]

    @property
    def losses(self) -> list:
        return self._losses


class StochasticSequential(StochasticBlock):
    """Stack StochasticBlocks (and plain blocks) sequentially, gathering their losses."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._layers: list = []

    def add(self, *blocks: Any) -> None:
        """Append ``blocks`` in order."""
        for block in blocks:
            self._layers.append(block)
            self.register_child(block)

    @StochasticBlock.collectLoss
    def forward(self, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = []
            if isinstance(x, (tuple, list)):
                args = x[1:]
                x = x[0]
        if args:
            x = tuple([x] + list(args))
        for block in self._layers:
            if hasattr(block, '_losses'):
                self.add_loss(block._losses)
        return x

    def __repr__(self) -> str:
        modstr = '\n'.join('  ({}): {}'.format(key, _indent(repr(block), 2))
                           for key, block in self._children.items())
        return '{}(\n{}\n)'.format(type(self).__name__, modstr)

    def __getitem__(self, key: Any) -> Any:
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)()
            net.add(*layers)
            return net
        return layers

    def __len__(self) -> int:
        return len(self._children)
