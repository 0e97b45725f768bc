"""``mx.optimizer``: MXNet 2's optimizers, each an optax GradientTransformation with MXNet's
update rule, hyper-parameter names and defaults, and a fused, jitted update of all weights."""
from __future__ import annotations

from . import adam_variants, adaptive, contrib, optimizer, sgd, sgd_variants, updater
from .adam_variants import FTML, LANS, AdaBelief, Adamax, Nadam
from .adaptive import LAMB, AdaDelta, AdaGrad, Adam, AdamW, Ftrl, RMSProp
from .optimizer import Optimizer, create, register
from .sgd import LARS, NAG, SGD, Signum
from .sgd_variants import DCASGD, SGLD, Test
from .updater import Updater, get_updater

__all__ = [
    "AdaBelief", "AdaDelta", "AdaGrad", "Adam", "AdamW", "Adamax", "DCASGD", "FTML", "Ftrl", "LAMB", "LANS",
    "LARS", "NAG", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "Test", "Updater", "create",
    "get_updater", "register",
]
