"""``mx.tvmop``: MXNet's hook for operators compiled with TVM.

MXNet loads ``libtvmop`` here only when it was built with ``TVM_OP``; otherwise the module
holds nothing but ``Features``.  mxjax compiles every operator with XLA, so it is always the
second case: ``Features().is_enabled("TVM_OP")`` is False and no TVM library is loaded.
"""
from __future__ import annotations

from .runtime import Features

__all__ = ["Features"]
