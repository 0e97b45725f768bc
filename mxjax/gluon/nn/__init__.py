"""``gluon.nn``: neural-network layers."""
from __future__ import annotations

from .basic_layers import *  # noqa: F401,F403
from .basic_layers import __all__ as _basic_all

__all__ = [*_basic_all]
