"""``gluon.contrib.data``: contributed data utilities (detection transforms)."""
from __future__ import annotations

from . import vision
