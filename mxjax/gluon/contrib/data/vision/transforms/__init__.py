"""``gluon.contrib.data.vision.transforms``: the bounding-box transforms."""
from __future__ import annotations

from . import bbox
from .bbox import *  # noqa: F401,F403
