"""``gluon.contrib.data.vision.transforms.bbox``: image + box transforms and box arithmetic (``utils``)."""
from __future__ import annotations

from . import utils
from .bbox import *  # noqa: F401,F403
