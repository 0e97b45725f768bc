"""``mx.gluon.contrib``: the Estimator training loop and its event handlers, and detection transforms."""
from __future__ import annotations

from . import data, estimator

__all__ = ["data", "estimator"]
