"""``mx.gluon.data.vision``: image datasets and transforms."""
from __future__ import annotations

from . import transforms
from .datasets import *  # noqa: F401,F403
