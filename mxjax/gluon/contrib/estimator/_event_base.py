"""The event classes of the Estimator's loop (``TrainBegin`` ... ``BatchEnd``) and their common
base ``EventHandler``, with the check that a list of handlers holds only handlers.

Separate so that every handler module builds on these without importing the others.
"""
from __future__ import annotations

from typing import Any


class EventHandler:
    """Base of all handlers."""


def _check_event_handlers(handlers: Any) -> list:
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(h, EventHandler) for h in handlers):
        raise ValueError(f"event_handlers must be an EventHandler or a list of EventHandler, got {handlers!r}")
    return handlers


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False
