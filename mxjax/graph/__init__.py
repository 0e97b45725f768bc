"""Values not computed yet, and running them as one program.

``lazy`` is the protocol every lazy array value follows; ``bulk`` records imperative ops
into per-thread segments and runs a segment as one cached XLA program when a value is
read.  The layers above (NDArray, autograd, deferred compute, Gluon) import it downward.
"""
from __future__ import annotations

from .lazy import Lazy

__all__ = ["Lazy"]
