"""The profiler's object API: ``Domain``, ``Task``/``Frame``/``Event`` ranges, ``Counter``
values, ``Marker`` instants and the ``scope()`` context that names recorded ops.

These only measure and name; the events go to the recorder through the three slots below,
which :mod:`mxjax.profiler` (the layer above, owner of the process-wide state) fills at
import, as it fills the hook slots of ``_invoke`` and ``engine``.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from ._profiler_state import _NO_SCOPE, _now, _scope
from .base import MXNetTypeError, MXNetValueError

_MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


def _record_nothing(*args: Any) -> None:
    """What the slots hold until mxjax.profiler installs its recorder."""


# Filled by mxjax.profiler: _emit(category, name, start_ns, end_ns) keeps a complete event,
# _emit_counter(category, name, value) a counter event, _emit_instant(category, name, scope) an instant.
_emit: Callable[[str, str, int, int], None] = _record_nothing
_emit_counter: Callable[[str, str, int], None] = _record_nothing
_emit_instant: Callable[[str, str, str], None] = _record_nothing


class Domain:
    """A named group (the trace's category) for tasks, frames, counters and markers."""

    def __init__(self, name: str) -> None:
        self.name = str(name)

    def __str__(self) -> str:
        return self.name

    def new_task(self, name: str) -> "Task":
        return Task(self, name)

    def new_frame(self, name: str) -> "Frame":
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> "Counter":
        return Counter(self, name, value)

    def new_marker(self, name: str) -> "Marker":
        return Marker(self, name)


def _domain_of(kind: str, domain: Any) -> Domain:
    if not isinstance(domain, Domain):
        raise MXNetTypeError(f"{kind}: domain must be a profiler.Domain, got {type(domain).__name__}")
    return domain


class _Range:
    """A named duration: ``start()`` ... ``stop()`` becomes one event (if the profiler is running
    at ``stop``); ``stop`` without ``start`` does nothing."""

    category = ""

    def __init__(self, name: str) -> None:
        self.name = str(name)
        self._start: int | None = None

    def start(self) -> None:
        """Begin the measured range."""
        self._start = _now()

    def stop(self) -> None:
        """End the measured range and record it."""
        start, self._start = self._start, None
        if start is not None:
            _emit(self.category, self.name, start, _now())

    def __str__(self) -> str:
        return self.name


class Task(_Range):
    """A unit of work in a domain; all its runs add up in one statistic (category: the domain)."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(name)
        self.category = _domain_of("Task", domain).name


class Frame(_Range):
    """A repeated period (one iteration, one rendered frame) in a domain (category '<domain>,frame')."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(name)
        self.category = f"{_domain_of('Frame', domain).name},frame"


class Event(_Range):
    """A free-standing named range (category 'event')."""

    category = "event"


def _as_int(where: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise MXNetValueError(f"{where}: expected an integer, got {value!r}") from None


class Counter:
    """A value tracked over time: each change is a counter ("C") event in the domain's category."""

    def __init__(self, domain: Domain, name: str, value: int | None = None) -> None:
        self.name = str(name)
        self._domain = _domain_of("Counter", domain).name
        self._value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value: int) -> None:
        """Set the counter to ``value`` (an integer)."""
        self._value = _as_int("Counter.set_value", value)
        self._record()

    def increment(self, delta: int = 1) -> None:
        self._value += _as_int("Counter.increment", delta)
        self._record()

    def decrement(self, delta: int = 1) -> None:
        self._value -= _as_int("Counter.decrement", delta)
        self._record()

    def __iadd__(self, delta: int) -> "Counter":
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> "Counter":
        self.decrement(delta)
        return self

    def _record(self) -> None:
        _emit_counter(self._domain, self.name, self._value)

    def __str__(self) -> str:
        return self.name


class Marker:
    """An instant in time, marked in a domain (category '<domain>,instant_marker')."""

    def __init__(self, domain: Domain, name: str) -> None:
        self.name = str(name)
        self.domain = domain

    def mark(self, scope: str = "process") -> None:  # (shadows scope(): MXNet's argument name)
        """Record the instant; ``scope`` is 'global', 'process', 'thread', 'task' or 'marker'."""
        if scope not in _MARKER_SCOPES:
            raise MXNetValueError(
                f"Marker.mark: scope must be one of {', '.join(_MARKER_SCOPES)}, got {scope!r}")
        category = f"{_domain_of('Marker', self.domain).name},instant_marker"
        _emit_instant(category, self.name, _MARKER_SCOPES[scope])


@contextlib.contextmanager
def scope(name: str = "<unk>:", append_mode: bool = True) -> Iterator[str]:
    """Name the ops recorded inside (their trace events carry ``args.scope``); yields the full
    scope, ``'outer:inner:'`` when nested with ``append_mode``."""
    name = name if name.endswith(":") else f"{name}:"
    outer = _scope.get()
    if append_mode and outer != _NO_SCOPE:
        name = outer + name
    token = _scope.set(name)
    try:
        yield name
    finally:
        _scope.reset(token)
