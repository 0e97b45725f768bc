"""``mx.profiler``: record what ran (operators, engine work, compiled blocks, user ranges) as a
Chrome trace, with per-name aggregate statistics.

Usage::

    mx.profiler.set_config(filename="trace.json", aggregate_stats=True)
    mx.profiler.set_state("run")
    ...                                  # ops, hybridized blocks, profiler.Task ranges
    mx.profiler.set_state("stop")        # writes trace.json (chrome://tracing, Perfetto)
    print(mx.profiler.dumps())           # count / total / min / max / avg time per name

What is recorded, while the state is ``run`` and not paused:

* ``operator``: every call of the one invoke path (``mx.np``, ``mx.npx``, ``mx.nd``, NDArray
  operators) under MXNet's op name (``_npi_add``), when ``profile_imperative`` (or ``profile_all``);
* ``engine``: the run of each function pushed through ``mx.engine.push_sync/push_async/push``
  (an op held back behind pending engine work, a seed, a custom host function), on its thread;
* ``symbolic``: each call of a hybridized ``HybridBlock`` (named after its class) and each
  ``Executor.forward``, as one event, when ``profile_symbolic`` (or ``profile_all``);
* the object API: ``Task``/``Frame``/``Event`` ranges, ``Counter`` values, ``Marker`` instants.

Ops that only build a graph (deferred compute, hybridize's tracing, composing a Symbol) run
nothing and are not recorded; the ops inside a compiled program are not separate events.

Times are host times.  JAX dispatches asynchronously, so an op's duration is the time to
dispatch it (plus compilation on its first call), not the time the device spends computing it,
unless the caller waits (``wait_to_read()``, ``mx.nd.waitall()``) inside the measured range.
Events accumulate over run/stop cycles until ``dump(finished=True)``; timestamps are in
microseconds since mxjax was imported.  When the profiler is off, the NDArray core and the
engine each test one hook slot per call.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading
import time
import warnings
from typing import Any, Callable, Iterator

from . import _deferred_compute, _invoke, autograd, engine
from ._atomic import atomic_write
from .base import MXNetError, MXNetTypeError, MXNetValueError
from .base import c_str, c_str_array, check_call, py_str  # noqa: F401  (mx.base names MXNet's profiler carries)
from .operator.naming import json_name

__all__ = [
    "Counter", "Domain", "Event", "Frame", "Marker", "Task", "dump", "dump_profile", "dumps", "pause",
    "profiler_set_config", "profiler_set_state", "resume", "scope", "set_config", "set_kvstore_handle",
    "set_state",
]

_DEFAULTS: dict[str, Any] = {
    "profile_all": False, "profile_symbolic": True, "profile_imperative": True, "profile_memory": True,
    "profile_api": True, "filename": "profile.json", "continuous_dump": True, "dump_period": 1.0,
    "aggregate_stats": False, "profile_process": "worker",
}
_BOOL_KEYS = frozenset(k for k, v in _DEFAULTS.items() if isinstance(v, bool))
_SORT_KEYS = ("total", "avg", "min", "max", "count")
_MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}
_NO_SCOPE = "<unk>:"
_T0 = time.perf_counter_ns()  # trace timestamps are microseconds since mxjax was imported
_now = time.perf_counter_ns


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


_state = _State()
_WRITE_LOCK = threading.Lock()
_scope = contextvars.ContextVar("mxjax_profiler_scope", default=_NO_SCOPE)
# Set while compiled programs are recorded: ``_program_hook(name, fn, args)`` runs ``fn(*args)`` as one
# ``symbolic`` event.  Read by gluon's HybridBlock and the symbol Executor (layers above this one).
_program_hook: Callable | None = None
_op_names: dict = {}  # OpDef -> the name MXNet gives it (``_npi_add``), as its profiles show


# ----------------------------------------------------------------------------- recording

def _add(event: dict, category: str, name: str, value: float, table: dict) -> None:
    with _state.lock:
        _state.events.append(event)
        if _state.keep_stats:
            entry = table.get((category, name))
            if entry is None:
                table[(category, name)] = [1, value, value, value]
            else:
                entry[0] += 1
                entry[1] += value
                entry[2] = min(entry[2], value)
                entry[3] = max(entry[3], value)


def _emit(category: str, name: str, start_ns: int, end_ns: int) -> None:
    """Keep one complete ("X") event, and its duration in the aggregate statistics."""
    if not _state.active:
        return
    duration = (end_ns - start_ns) / 1000.0
    event = {"name": name, "cat": category, "ph": "X", "ts": (start_ns - _T0) / 1000.0, "dur": duration,
             "pid": os.getpid(), "tid": threading.get_native_id()}
    scope_name = _scope.get()
    if scope_name != _NO_SCOPE:
        event["args"] = {"scope": scope_name}
    _add(event, category, name, duration, _state.stats)


def _time_invoke(dispatch: Callable, op: Any, inputs: Any, params: Any, out_cls: Any) -> Any:
    """``_invoke._profile_hook``: time one op; ops that only build a graph (deferred compute, a
    Symbol being composed) run nothing and are not recorded."""
    if _invoke.current_handler() is not None and (
            _deferred_compute.is_deferred_compute() or not autograd.is_recording()):
        return dispatch(op, inputs, params, out_cls)
    start = _now()
    try:
        return dispatch(op, inputs, params, out_cls)
    finally:
        name = _op_names.get(op)
        if name is None:
            name = _op_names[op] = json_name(op)
        _emit("operator", name, start, _now())


def _time_engine_fn(fn: Callable, name: str | None, is_async: bool) -> Callable:
    """``engine._profile_hook``: wrap a pushed function so its run (until ``on_complete`` for an
    asynchronous one) becomes an ``engine`` event."""
    label = name or getattr(fn, "__name__", "engine_op")
    if is_async:
        def run_async(on_complete: Callable) -> Any:
            start = _now()

            def complete(*args: Any, **kwargs: Any) -> Any:
                _emit("engine", label, start, _now())
                return on_complete(*args, **kwargs)
            return fn(complete)
        return run_async

    def run() -> Any:
        start = _now()
        try:
            return fn()
        finally:
            _emit("engine", label, start, _now())
    return run


def _time_program(name: str, fn: Callable, args: Any) -> Any:
    start = _now()
    try:
        return fn(*args)
    finally:
        _emit("symbolic", name, start, _now())


def _sync_hooks() -> None:
    """Install or remove the hooks in the layers below after any change of state or config."""
    global _program_hook
    config = _state.config
    _state.active = active = _state.running and not _state.paused
    imperative = active and (config["profile_all"] or config["profile_imperative"])
    symbolic = active and (config["profile_all"] or config["profile_symbolic"])
    _invoke._profile_hook = _time_invoke if imperative else None
    engine._profile_hook = _time_engine_fn if imperative else None
    _program_hook = _time_program if symbolic else None


# ----------------------------------------------------------------------------- configuration

def _as_bool(key: str, value: Any) -> bool:
    if isinstance(value, (bool, int)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise MXNetValueError(f"set_config: {key} expects a boolean, got {value!r}")


# MXNet's handle of the kvstore whose servers 'server' profiling talks to; mx.kv.create sets it.
profiler_kvstore_handle: Any = None


def set_kvstore_handle(handle: Any) -> None:
    """Set the kvstore handle that ``profile_process='server'`` calls use (``mx.kv.create`` calls this)."""
    global profiler_kvstore_handle
    profiler_kvstore_handle = handle


def _for_worker(where: str, profile_process: Any) -> bool:
    """True for a 'worker' call (this process).  A 'server' call is MXNet's: an error without a
    kvstore handle, else a warning that no server exists (one process) and nothing is done."""
    if profile_process == "server":
        if profiler_kvstore_handle is None:
            raise MXNetError(f"{where}: profile_process='server' profiles a distributed kvstore server, but "
                             "the KVStoreHandle passed to the profiler is null (no kvstore was created); "
                             "use 'worker'")
        warnings.warn(f"{where}: Unable to pass server the profiler command: mxjax trains in a single process, "
                      "so there is no server process to profile. Please profile the worker process instead.",
                      stacklevel=3)
        return False
    if profile_process != "worker":
        raise _ChoiceError(f"{where}: profile_process must be 'worker' or 'server', got {profile_process!r}")
    return True


def set_config(**kwargs: Any) -> None:
    """Configure the profiler (keywords only); keys not given take their defaults again.

    filename (``'profile.json'``): where the Chrome trace is written; profile_all (False): record
    everything; profile_imperative (True): ops called imperatively; profile_symbolic (True):
    hybridized blocks and executors, one event per call; profile_memory, profile_api (True):
    accepted, record nothing (mxjax has no storage allocator or C API of its own to observe);
    continuous_dump (True): rewrite the trace file every dump_period (1.0) seconds while
    running; aggregate_stats (False): keep the statistics :func:`dumps` prints;
    profile_process ('worker').
    """
    if not _for_worker("set_config", kwargs.get("profile_process", "worker")):
        return
    config = dict(_DEFAULTS)
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise MXNetError(f"set_config: unknown argument {key!r}; possible arguments are "
                             f"{', '.join(_DEFAULTS)}")
        if key in _BOOL_KEYS:
            config[key] = _as_bool(key, value)
        elif key == "dump_period":
            try:
                config[key] = float(value)
            except (TypeError, ValueError):
                raise MXNetValueError(
                    f"set_config: dump_period expects a number of seconds, got {value!r}") from None
            if not config[key] > 0:
                raise MXNetValueError(f"set_config: dump_period must be positive, got {value!r}")
        elif key == "profile_process":
            pass  # 'worker' (a 'server' call returned above)
        else:
            config[key] = str(value)
    _state.config = config
    _state.keep_stats = config["aggregate_stats"]
    _sync_hooks()
    if _state.running:  # a new filename or period applies at once
        _stop_dumper()
        _start_dumper()


def profiler_set_config(mode: str = "symbolic", filename: str = "profile.json") -> None:
    """Deprecated 1.x form of :func:`set_config`: ``mode`` 'symbolic' or 'all'."""
    warnings.warn("profiler.profiler_set_config() is deprecated; use profiler.set_config()", stacklevel=2)
    set_config(**{f"profile_{mode}": True, "filename": filename})


# ----------------------------------------------------------------------------- state

def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """'run' starts recording; 'stop' ends it and writes the trace file (events are kept until a
    ``dump(finished=True)``, so a later run adds to the same trace)."""
    if state not in ("run", "stop"):
        raise _ChoiceError(f"set_state: state must be 'run' or 'stop', got {state!r}")
    if not _for_worker("set_state", profile_process):
        return
    if state == "run":
        if not _state.running:
            _state.running = _state.has_run = True
            _start_dumper()
    elif _state.running:
        _state.running = False
        _stop_dumper()
        _write_trace()
    _sync_hooks()


def profiler_set_state(state: str = "stop") -> None:
    """Deprecated 1.x form of :func:`set_state`."""
    warnings.warn("profiler.profiler_set_state() is deprecated; use profiler.set_state()", stacklevel=2)
    set_state(state)


def pause(profile_process: str = "worker") -> None:
    """Stop keeping events until :func:`resume` (the state stays 'run')."""
    if not _for_worker("pause", profile_process):
        return
    _state.paused = True
    _sync_hooks()


def resume(profile_process: str = "worker") -> None:
    """Keep events again after :func:`pause`."""
    if not _for_worker("resume", profile_process):
        return
    _state.paused = False
    _sync_hooks()


# ----------------------------------------------------------------------------- output

def _write_trace() -> None:
    """Write every kept event as ``{"traceEvents": [...]}`` (replaced atomically: a reader never
    sees half a file)."""
    with _state.lock:
        events = list(_state.events)
    meta = {"name": "process_name", "ph": "M", "pid": os.getpid(), "args": {"name": "mxjax"}}
    path = _state.config["filename"]
    with _WRITE_LOCK:  # the continuous dumper and an explicit dump() may write at the same time
        with atomic_write(path, "w") as f:
            json.dump({"traceEvents": [meta, *events], "displayTimeUnit": "ms"}, f)


def _dump_periodically(stop: threading.Event, period: float) -> None:
    while not stop.wait(period):
        try:
            _write_trace()
        except OSError as err:
            warnings.warn(f"profiler: continuous dump stopped: {err}", RuntimeWarning, stacklevel=1)
            return


def _start_dumper() -> None:
    if _state.config["continuous_dump"] and _state.dumper is None:
        stop = threading.Event()
        thread = threading.Thread(target=_dump_periodically, args=(stop, _state.config["dump_period"]),
                                  name="mxjax-profiler-dump", daemon=True)
        _state.dumper = (thread, stop)
        thread.start()


def _stop_dumper() -> None:
    if _state.dumper is not None:
        thread, stop = _state.dumper
        _state.dumper = None
        stop.set()
        thread.join()


def dump(finished: bool = True, profile_process: str = "worker") -> None:
    """Write the trace file now.  ``finished=True`` also stops the profiler and drops the kept
    events, so the next run starts a new trace; ``False`` keeps both going."""
    if not _for_worker("dump", profile_process):
        return
    if not _state.has_run:
        raise MXNetError("dump: the profiler has not run since it was configured or last dumped with "
                         "finished=True; call set_state('run') first")
    if finished:
        _state.running = False
        _stop_dumper()
        _sync_hooks()
    _write_trace()
    if finished:
        with _state.lock:
            _state.events.clear()
        _state.has_run = False


def dump_profile() -> None:
    """Deprecated form of ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated; use profiler.dump()", stacklevel=2)
    dump(True)


def _sorted_rows(table: dict, sort_by: str, ascending: bool) -> dict[str, list]:
    """{category: [(name, count, total, min, max, avg)]} sorted within each category."""
    order = {"count": 1, "total": 2, "min": 3, "max": 4, "avg": 5}[sort_by]  # its position in a row
    by_category: dict[str, list] = {}
    for (category, name), (count, total, low, high) in table.items():
        by_category.setdefault(category, []).append((name, count, total, low, high, total / count))
    return {category: sorted(rows, key=lambda r: r[order], reverse=not ascending)
            for category, rows in sorted(by_category.items())}


def _table(title: str, header: tuple[str, ...], rows: list, scale: float) -> str:
    lines = [title, "=================", f"{'Name':<30}" + "".join(f"{h:>17}" if i else f"{h:>11}"
                                                                   for i, h in enumerate(header))]
    lines.append(f"{'----':<30}" + "".join(f"{'-' * len(h):>17}" if i else f"{'-' * len(h):>11}"
                                           for i, h in enumerate(header)))
    for name, count, total, low, high, avg in rows:
        values = (total, low, high, avg) if len(header) == 5 else (low, high, avg)
        lines.append(f"{name:<29} {count:>11}" + "".join(f"{v * scale:>17.4f}" for v in values))
    return "\n".join(lines) + "\n"


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total",  # noqa: A002
          ascending: bool = False) -> str:
    """The aggregate statistics (kept with ``aggregate_stats=True``): per category and name, the
    count and the total/min/max/avg time in ms ('table' text or 'json'); ``Counter`` values are
    summarized in their own tables.  ``''`` unless the current configuration has aggregate_stats."""
    if format not in ("table", "json"):
        raise MXNetValueError(f"dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise MXNetValueError(f"dumps: sort_by must be one of {', '.join(_SORT_KEYS)}, got {sort_by!r}")
    for key, value in (("reset", reset), ("ascending", ascending)):
        if not isinstance(value, (bool, int)) or value not in (False, True):
            raise MXNetValueError(f"dumps: {key} must be True or False, got {value!r}")
    with _state.lock:
        times = _sorted_rows(_state.stats, sort_by, bool(ascending))
        counters = _sorted_rows(_state.counters, sort_by, bool(ascending))
        if reset:
            _state.stats.clear()
            _state.counters.clear()
    if not _state.keep_stats:  # as MXNet: no statistics unless the configuration keeps them
        return ""
    if format == "json":
        fields = ("Count", "Total", "Min", "Max", "Avg")
        result: dict[str, Any] = {"Time": {c: {r[0]: dict(zip(fields, (r[1], *(v / 1000 for v in r[2:]))))
                                               for r in rows} for c, rows in times.items()}}
        if counters:
            result["Counter"] = {c: {r[0]: {"Count": r[1], "Min": r[3], "Max": r[4], "Avg": r[5]}
                                     for r in rows} for c, rows in counters.items()}
        result["Unit"] = {"Time": "ms"}
        return json.dumps(result, indent=4)
    parts = ["\nProfile Statistics:\n\tNote the difference in units for different entries.\n"]
    time_header = ("Total Count", "Time (ms)", "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)")
    parts += [_table(c, time_header, rows, 1e-3) + "\n" for c, rows in times.items()]
    value_header = ("Total Count", "Min Value", "Max Value", "Avg Value")
    parts += [_table(f"{c},counter", value_header, rows, 1.0) + "\n" for c, rows in counters.items()]
    return "".join(parts)


# ----------------------------------------------------------------------------- object API

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
        if _state.active:
            event = {"name": self.name, "cat": self._domain, "ph": "C", "ts": (_now() - _T0) / 1000.0,
                     "pid": os.getpid(), "tid": threading.get_native_id(), "args": {self.name: self._value}}
            _add(event, self._domain, self.name, self._value, _state.counters)

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
        if _state.active:
            event = {"name": self.name, "cat": category, "ph": "i", "s": _MARKER_SCOPES[scope],
                     "ts": (_now() - _T0) / 1000.0, "pid": os.getpid(), "tid": threading.get_native_id()}
            with _state.lock:
                _state.events.append(event)


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
