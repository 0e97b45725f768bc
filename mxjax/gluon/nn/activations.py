"""Activation layers (LeakyReLU, PReLU, ELU, SELU, GELU, Swish, SiLU) and Concatenate containers."""
from __future__ import annotations

from typing import Any

from ... import initializer
from ... import numpy as np
from ... import numpy_extension as npx
from ...base import MXNetValueError
from ..block import HybridBlock
from ..parameter import Parameter
from .basic_layers import Sequential

__all__ = ["LeakyReLU", "PReLU", "ELU", "SELU", "GELU", "Swish", "SiLU", "Concatenate", "HybridConcatenate"]


class LeakyReLU(HybridBlock):
    """``x`` where positive, ``alpha * x`` elsewhere."""

    def __init__(self, alpha: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if alpha < 0:
            raise MXNetValueError(f"LeakyReLU: alpha must be non-negative, got {alpha}")
        self._alpha = alpha

    def forward(self, x: Any) -> Any:
        return npx.leaky_relu(x, act_type="leaky", slope=self._alpha)

    def __repr__(self) -> str:
        return f"LeakyReLU({self._alpha})"


class PReLU(HybridBlock):
    """Leaky ReLU with a learned slope ``alpha`` per channel (axis 1), or one shared slope (in_channels=1)."""

    def __init__(self, alpha_initializer: Any = None, in_channels: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        init = alpha_initializer if alpha_initializer is not None else initializer.Constant(0.25)
        self.alpha = Parameter("alpha", shape=(in_channels,), init=init)

    def forward(self, x: Any) -> Any:
        return npx.leaky_relu(x, self.alpha.data(), act_type="prelu")


class ELU(HybridBlock):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._alpha = alpha

    def forward(self, x: Any) -> Any:
        return npx.leaky_relu(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """Scaled ELU with the self-normalizing constants (lambda 1.0507..., alpha 1.6732...)."""

    def forward(self, x: Any) -> Any:
        return npx.leaky_relu(x, act_type="selu")


class GELU(HybridBlock):
    """Gaussian error linear unit: exact (``approximation='erf'``) or the tanh approximation."""

    def __init__(self, approximation: str = "erf", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if approximation not in ("erf", "tanh"):
            raise MXNetValueError(f"GELU: approximation must be 'erf' or 'tanh', got {approximation!r}")
        self._act_type = "gelu" if approximation == "erf" else "gelu_tanh"

    def forward(self, x: Any) -> Any:
        return npx.leaky_relu(x, act_type=self._act_type)


class Swish(HybridBlock):
    """``x * sigmoid(beta * x)``."""

    def __init__(self, beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._beta = beta

    def forward(self, x: Any) -> Any:
        return x * npx.sigmoid(self._beta * x)


class SiLU(HybridBlock):
    """``x * sigmoid(x)`` (Swish with beta 1)."""

    def forward(self, x: Any) -> Any:
        return x * npx.sigmoid(x)


class Concatenate(Sequential):
    """Runs every child on the same input and concatenates their outputs along ``axis``."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self._axis = axis

    def forward(self, x: Any) -> Any:
        return np.concatenate([block(x) for block in self._children.values()], axis=self._axis)

    def __getitem__(self, index: int | slice) -> Any:
        children = list(self._children.values())
        if isinstance(index, slice):
            out = type(self)(self._axis)
            out.add(*children[index])
            return out
        return children[index]


class HybridConcatenate(HybridBlock, Concatenate):
    """A Concatenate of HybridBlocks that hybridizes as one program."""

    def __init__(self, axis: int = -1) -> None:
        HybridBlock.__init__(self)
        self._axis = axis

    forward = Concatenate.forward

