"""``mx.gluon.data``: datasets, samplers, batchify functions and the DataLoader."""
from __future__ import annotations

from . import batchify, vision
from .dataset import *  # noqa: F401,F403
from .sampler import *  # noqa: F401,F403
from .dataloader import *  # noqa: F401,F403
