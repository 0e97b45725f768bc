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

import os
import threading
import warnings
from typing import Any, Callable

from . import _deferred_compute, _invoke, _profiler_objects, autograd, engine
from ._profiler_objects import Counter, Domain, Event, Frame, Marker, Task, scope
from ._profiler_state import _BOOL_KEYS, _DEFAULTS, _NO_SCOPE, _T0, _ChoiceError, _State, _as_bool, _now, _scope
from ._profiler_stats import _SORT_KEYS, _render, _sorted_rows
from .base import MXNetError, MXNetValueError
from .base import c_str, c_str_array, check_call, py_str  # noqa: F401  (mx.base names MXNet's profiler carries)
from .operator.naming import json_name

__all__ = [
    "Counter", "Domain", "Event", "Frame", "Marker", "Task", "dump", "dump_profile", "dumps", "pause",
    "profiler_set_config", "profiler_set_state", "resume", "scope", "set_config", "set_kvstore_handle",
    "set_state",
]

for _public in (Counter, Domain, Event, Frame, Marker, Task, scope):
    _public.__module__ = __name__  # mx.profiler.Task etc.: defined in _profiler_objects, public here
del _public

_state = _State()
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


def _emit_counter(category: str, name: str, value: int) -> None:
    """Keep one counter ("C") event, and its value in the counter statistics."""
    if _state.active:
        event = {"name": name, "cat": category, "ph": "C", "ts": (_now() - _T0) / 1000.0,
                 "pid": os.getpid(), "tid": threading.get_native_id(), "args": {name: value}}
        _add(event, category, name, value, _state.counters)


def _emit_instant(category: str, name: str, scope_code: str) -> None:
    """Keep one instant ("i") event (instants have no statistics)."""
    if _state.active:
        event = {"name": name, "cat": category, "ph": "i", "s": scope_code,
                 "ts": (_now() - _T0) / 1000.0, "pid": os.getpid(), "tid": threading.get_native_id()}
        with _state.lock:
            _state.events.append(event)


# The object API records through these (they read ``_state`` here, so replacing it takes effect there too).
_profiler_objects._emit = _emit
_profiler_objects._emit_counter = _emit_counter
_profiler_objects._emit_instant = _emit_instant


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
        _state.stop_dumper()
        _state.start_dumper()


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
            _state.start_dumper()
    elif _state.running:
        _state.running = False
        _state.stop_dumper()
        _state.write_trace()
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
        _state.stop_dumper()
        _sync_hooks()
    _state.write_trace()
    if finished:
        with _state.lock:
            _state.events.clear()
        _state.has_run = False


def dump_profile() -> None:
    """Deprecated form of ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated; use profiler.dump()", stacklevel=2)
    dump(True)


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
    return _render(times, counters, format)
