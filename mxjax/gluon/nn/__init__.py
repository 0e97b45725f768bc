"""``gluon.nn``: neural-network layers."""
from __future__ import annotations

from .basic_layers import *  # noqa: F401,F403
from .basic_layers import __all__ as _basic_all
from .conv_layers import *  # noqa: F401,F403
from .conv_layers import __all__ as _conv_all
from .norm_layers import *  # noqa: F401,F403
from .norm_layers import __all__ as _norm_all
from .activations import *  # noqa: F401,F403
from .activations import __all__ as _act_all
from .pixel_shuffle import *  # noqa: F401,F403
from .pixel_shuffle import __all__ as _ps_all
from .deformable_layers import *  # noqa: F401,F403
from .deformable_layers import __all__ as _deformable_all
from ..block import Block, HybridBlock
from ..symbol_block import SymbolBlock

__all__ = ["Block", "HybridBlock", "SymbolBlock", *_basic_all, *_conv_all, *_norm_all, *_act_all, *_ps_all,
           *_deformable_all]
