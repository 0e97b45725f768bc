"""``mx.optimizer``: MXNet 2's optimizers, each an optax GradientTransformation with MXNet's
update rule, hyper-parameter names and defaults, and a fused, jitted update of all weights."""
from __future__ import annotations

from . import adaptive, optimizer, sgd, updater
from .adaptive import LAMB, AdaDelta, AdaGrad, Adam, AdamW, Ftrl, RMSProp
from .optimizer import Optimizer, create, register
from .sgd import LARS, NAG, SGD, Signum
from .updater import Updater, get_updater

__all__ = [
    "AdaDelta", "AdaGrad", "Adam", "AdamW", "Ftrl", "LAMB", "LARS", "NAG", "Optimizer", "RMSProp", "SGD",
    "Signum", "Updater", "create", "get_updater", "register",
]
