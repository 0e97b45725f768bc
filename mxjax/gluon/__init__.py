"""``mx.gluon``: Blocks, HybridBlocks, Parameters and layers."""
from __future__ import annotations

from . import loss, nn
from .block import Block, HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter
from .symbol_block import SymbolBlock
from .trainer import Trainer

__all__ = ["Block", "HybridBlock", "Parameter", "Constant", "DeferredInitializationError", "SymbolBlock", "Trainer", "nn", "loss"]
