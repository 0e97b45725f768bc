"""``gluon.contrib.estimator``: a fit/evaluate loop driven by event handlers, as in MXNet 2.0."""
from __future__ import annotations

from . import batch_processor, estimator, event_handler
from .batch_processor import *  # noqa: F401,F403
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403
