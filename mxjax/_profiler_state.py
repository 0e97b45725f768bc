"""The profiler's process-wide recorder: its configuration defaults, kept events and
statistics, and the Chrome trace file it writes (once, or every ``dump_period`` seconds).

Separate from :mod:`mxjax.profiler` (the hooks and the public functions) so that the
object API (:mod:`mxjax._profiler_objects`) can share the clock and scope without the
functions that drive the state.
"""
from __future__ import annotations

import contextvars
import json
import os
import threading
import time
import warnings
from typing import Any

from ._atomic import atomic_write
from .base import MXNetValueError

_DEFAULTS: dict[str, Any] = {
    "profile_all": False, "profile_symbolic": True, "profile_imperative": True, "profile_memory": True,
    "profile_api": True, "filename": "profile.json", "continuous_dump": True, "dump_period": 1.0,
    "aggregate_stats": False, "profile_process": "worker",
}
_BOOL_KEYS = frozenset(k for k, v in _DEFAULTS.items() if isinstance(v, bool))
_NO_SCOPE = "<unk>:"
_T0 = time.perf_counter_ns()  # trace timestamps are microseconds since mxjax was imported
_now = time.perf_counter_ns
_WRITE_LOCK = threading.Lock()
_scope = contextvars.ContextVar("mxjax_profiler_scope", default=_NO_SCOPE)


class _ChoiceError(MXNetValueError, KeyError):
    """A name outside a fixed set (a state, a process): MXNet raises ``KeyError`` for these."""

    __str__ = BaseException.__str__  # not KeyError's quoted form


class _State:
    """The process-wide recorder (MXNet's profiler is one per process too); ``lock`` guards
    ``events``/``stats``/``counters``, which engine worker threads also append to."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.config = dict(_DEFAULTS)
        self.running = False
        self.paused = False
        self.active = False      # running and not paused: events are kept
        self.has_run = False     # set_state('run') since the last finished dump (dump needs it)
        self.keep_stats = False  # aggregate_stats of the current configuration
        self.events: list[dict] = []
        self.stats: dict[tuple[str, str], list] = {}     # (category, name) -> [count, total, min, max] µs
        self.counters: dict[tuple[str, str], list] = {}  # (domain, name) -> same, over counter values
        self.dumper: tuple[threading.Thread, threading.Event] | None = None

    def write_trace(self) -> None:
        """Write every kept event as ``{"traceEvents": [...]}`` (replaced atomically: a reader never
        sees half a file)."""
        with self.lock:
            events = list(self.events)
        meta = {"name": "process_name", "ph": "M", "pid": os.getpid(), "args": {"name": "mxjax"}}
        path = self.config["filename"]
        with _WRITE_LOCK:  # the continuous dumper and an explicit dump() may write at the same time
            with atomic_write(path, "w") as f:
                json.dump({"traceEvents": [meta, *events], "displayTimeUnit": "ms"}, f)

    def _dump_periodically(self, stop: threading.Event, period: float) -> None:
        while not stop.wait(period):
            try:
                self.write_trace()
            except OSError as err:
                warnings.warn(f"profiler: continuous dump stopped: {err}", RuntimeWarning, stacklevel=1)
                return

    def start_dumper(self) -> None:
        """Start rewriting the trace every ``dump_period`` seconds (with ``continuous_dump``)."""
        if self.config["continuous_dump"] and self.dumper is None:
            stop = threading.Event()
            thread = threading.Thread(target=self._dump_periodically, args=(stop, self.config["dump_period"]),
                                      name="mxjax-profiler-dump", daemon=True)
            self.dumper = (thread, stop)
            thread.start()

    def stop_dumper(self) -> None:
        """Stop the periodic rewriting and wait for its thread."""
        if self.dumper is not None:
            thread, stop = self.dumper
            self.dumper = None
            stop.set()
            thread.join()


def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise MXNetValueError(f"set_config: {key} expects a boolean, got {value!r}")
