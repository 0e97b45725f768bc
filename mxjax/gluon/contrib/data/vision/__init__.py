"""``gluon.contrib.data.vision``: transforms that move images and their bounding boxes together."""
from __future__ import annotations

from . import transforms
from .transforms import *  # noqa: F401,F403
