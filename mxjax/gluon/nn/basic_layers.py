"""Basic Gluon layers: Sequential containers, Dense, Activation, Dropout, Flatten, Lambda."""
from __future__ import annotations

from typing import Any, Callable

from ... import numpy as np
from ... import numpy_extension as npx
from ...operator import get_op
from ..block import Block, HybridBlock
from ..parameter import Parameter

__all__ = ["Sequential", "HybridSequential", "Dense", "Activation", "Dropout", "Flatten", "Identity",
           "Lambda", "HybridLambda"]


class Sequential(Block):
    """Children run one after another (``net.add(layer, ...)``)."""

    def add(self, *blocks: Block) -> None:
        for block in blocks:
            self.register_child(block)

    def forward(self, x: Any, *args: Any) -> Any:
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, *args = x
        return (x, *args) if args else x  # the last block's extra outputs come back, as in MXNet

    def __getitem__(self, index: int | slice) -> Any:
        children = list(self._children.values())
        if isinstance(index, slice):
            out = type(self)()
            out.add(*children[index])
            return out
        return children[index]

    def __len__(self) -> int:
        return len(self._children)


class HybridSequential(HybridBlock, Sequential):
    """A Sequential of HybridBlocks that hybridizes as one program."""

    forward = Sequential.forward


class Dense(HybridBlock):
    """``act(dot(x, weight.T) + bias)``; ``in_units=0`` infers the input size on first use."""

    def __init__(self, units: int, activation: str | None = None, use_bias: bool = True, flatten: bool = True,
                 dtype: Any = "float32", weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 in_units: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._units, self._flatten, self._in_units = units, flatten, in_units
        self.weight = Parameter("weight", shape=(units, in_units), init=weight_initializer, dtype=dtype,
                                allow_deferred_init=True)
        self.bias = Parameter("bias", shape=(units,), init=bias_initializer, dtype=dtype,
                              allow_deferred_init=True) if use_bias else None
        self.act = Activation(activation) if activation is not None else None

    def infer_shape(self, x: Any, *args: Any) -> None:
        rule = get_op("FullyConnected").param_shapes  # the op's own: one rule for graphs and layers
        self.weight.shape = rule([tuple(x.shape)], {"num_hidden": self._units, "flatten": self._flatten})[1]

    def forward(self, x: Any) -> Any:
        out = npx.fully_connected(x, self.weight.data(), self.bias.data() if self.bias is not None else None,
                                  num_hidden=self._units, no_bias=self.bias is None, flatten=self._flatten)
        return self.act(out) if self.act is not None else out

    def __repr__(self) -> str:
        shape = self.weight.shape
        return f"Dense({shape[1] if shape[1] else None} -> {self._units}, {self.act or 'linear'})"


class Activation(HybridBlock):
    """An element-wise activation (``relu``, ``sigmoid``, ``tanh``, ``softrelu``, ``softsign``...)."""

    def __init__(self, activation: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._act_type = activation

    def forward(self, x: Any) -> Any:
        return npx.activation(x, act_type=self._act_type)

    def __repr__(self) -> str:
        return f"Activation({self._act_type})"


class Dropout(HybridBlock):
    """Zero a fraction ``rate`` of the elements in training (scaled by 1/(1-rate))."""

    def __init__(self, rate: float, axes: tuple = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rate, self._axes = rate, tuple(axes)

    def forward(self, x: Any) -> Any:
        return npx.dropout(x, p=self._rate, axes=self._axes) if self._rate > 0 else x

    def __repr__(self) -> str:
        return f"Dropout(p = {self._rate}, axes={self._axes})"


class Flatten(HybridBlock):
    """Collapse all but the first axis."""

    def forward(self, x: Any) -> Any:
        return npx.batch_flatten(x)  # the Flatten op, as MXNet 2.0: exported graphs keep the batch size free

    def __repr__(self) -> str:
        return "Flatten"  # (no parentheses: MXNet's)


class Identity(HybridBlock):
    """Returns its input."""

    def forward(self, x: Any) -> Any:
        return x


class Lambda(Block):
    """A Block around a function (or the name of an ``mx.np`` function)."""

    def __init__(self, function: Callable | str) -> None:
        super().__init__()
        self._function = getattr(np, function) if isinstance(function, str) else function

    def forward(self, *args: Any) -> Any:
        return self._function(*args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({getattr(self._function, '__name__', self._function)})"


class HybridLambda(HybridBlock):
    """A HybridBlock around a function of ``mx.np`` ops (or the name of one)."""

    def __init__(self, function: Callable | str) -> None:
        super().__init__()
        self._function = getattr(np, function) if isinstance(function, str) else function

    forward = Lambda.forward  # (the same function, the same text)
    __repr__ = Lambda.__repr__
