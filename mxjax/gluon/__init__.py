"""``mx.gluon``: Blocks, HybridBlocks, Parameters and layers."""
from __future__ import annotations

from . import data, loss, nn, probability, rnn, utils
from . import contrib  # noqa: F401  (the Estimator; imports data)
from . import metric  # noqa: F401
from . import model_zoo  # noqa: F401
from .._ndarray import NDArray as _NDArray
from ..base import numeric_types
from ..symbol import Symbol as _Symbol
from ..util import use_np
from .block import Block, HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter
from .symbol_block import SymbolBlock
from .trainer import Trainer

tensor_types = (_Symbol, _NDArray)  # what a block takes as a tensor input, as in MXNet

__all__ = ["Block", "HybridBlock", "Parameter", "Constant", "DeferredInitializationError", "SymbolBlock", "Trainer",
           "nn", "loss", "probability", "utils", "data", "contrib", "tensor_types", "numeric_types", "use_np"]
