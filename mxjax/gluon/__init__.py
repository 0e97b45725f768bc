"""``mx.gluon``: Blocks, HybridBlocks, Parameters and layers."""
from __future__ import annotations

from . import nn
from .block import Block, HybridBlock
from .parameter import Constant, DeferredInitializationError, Parameter

__all__ = ["Block", "HybridBlock", "Parameter", "Constant", "DeferredInitializationError", "nn"]
