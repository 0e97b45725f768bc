"""``mx.optimizer``: MXNet 2's optimizers, each an optax GradientTransformation with MXNet's
update rule, hyper-parameter names and defaults, and a fused, jitted update of all weights.

One module per optimizer, as MXNet 2's ``mxnet/optimizer/<name>.py`` (``from
mxnet.optimizer.adam import Adam``); the per-array update rules they share with the
``sgd_update``/``adam_update``/... operators live in ``mxjax.operator.optimizer_rules``.
"""
from __future__ import annotations

from . import optimizer, contrib, updater, utils  # noqa: F401
from . import (sgd, sgld, signum, dcasgd, nag, adabelief, adagrad, adadelta, adam, adamax,  # noqa: F401
               adamW, nadam, ftrl, ftml, lars, lamb, rmsprop, lans)
from .adabelief import AdaBelief
from .adadelta import AdaDelta
from .adagrad import AdaGrad
from .adam import Adam
from .adamW import AdamW
from .adamax import Adamax
from .dcasgd import DCASGD
from .ftml import FTML
from .ftrl import Ftrl
from .lamb import LAMB
from .lans import LANS
from .lars import LARS
from .nadam import Nadam
from .nag import NAG
from .optimizer import Optimizer, Test, create, register
from .rmsprop import RMSProp
from .sgd import SGD
from .sgld import SGLD
from .signum import Signum
from .updater import Updater, get_updater

__all__ = [
    "AdaBelief", "AdaDelta", "AdaGrad", "Adam", "AdamW", "Adamax", "DCASGD", "FTML", "Ftrl", "LAMB", "LANS",
    "LARS", "NAG", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "Test", "Updater", "contrib",
    "create", "get_updater", "register",
]
