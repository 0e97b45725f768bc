"""``python -m mxjax.diagnose``: what a bug report needs to know about this installation.

MXNet's ``tools/diagnose.py`` prints its Python, pip, MXNet, OS and hardware details; this
prints the same sections for mxjax, with what replaces MXNet's C++ library here: the JAX
backend and devices, mxjax's dependency engine and bulk settings, ``mx.runtime.Features()``
and the environment variables mxjax reads.  ``--<section> 0`` leaves a section out, as in
MXNet (``--network`` is not offered: mxjax downloads nothing to diagnose).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from importlib import metadata
from typing import Callable, Sequence

__all__ = ["ENV_VARS", "PACKAGES", "SECTIONS", "main"]

# Distributions whose versions a report needs: mxjax, what it is built on, and flax (the
# benchmarks' comparison); a missing one prints "not installed".
PACKAGES = ("mxjax", "jax", "jaxlib", "numpy", "optax", "ml_dtypes", "flax")

# Every environment variable mxjax reads, with what it controls.  tests/test_diagnose.py checks
# that each MXNET_* name in the package source is listed here, so the list cannot fall behind.
ENV_VARS = {
    "MXNET_ENGINE_TYPE": "engine kind: NaiveEngine or ThreadedEngine[PerDevice|Pooled] (default)",
    "MXNET_CPU_WORKER_NTHREADS": "worker threads of the threaded engine",
    "MXNET_EXEC_BULK_EXEC_IMPERATIVE": "run imperative ops in bulk as one program (1, default) or one by one (0)",
    "MXNET_EXEC_BULK_EXEC_MAX_NODE_IMPERATIVE": "most imperative ops held back per thread (64)",
    "MXNET_EXEC_BULK_EXEC_COMPILE_AFTER": "sightings before an op sequence compiles as one program (2)",
    "MXNET_COMPILE_CACHE_SIZE": "compiled programs kept (1024)",
    "MXNET_COMPILE_CACHE_BYTES": "bytes of compiled programs kept (1 GiB)",
    "MXNET_TRACE_VALUE_READ": "a value read while hybridize() traces: warn (default), raise or allow",
    "MXNET_BACKWARD_DO_MIRROR": "executor backward recomputes cheap values (1) instead of keeping them",
    "MXNET_OPTIMIZER_AGGREGATION_SIZE": "parameters updated together by an optimizer (4)",
    "MXNET_UPDATE_ON_KVSTORE": "Trainer updates on the kvstore (1) or locally (0)",
    "MXNET_ONEDNN_ENABLED": "use the oneDNN CPU kernels where mxjax has them (1, default) or not (0)",
    "MXNET_ONEDNN_CACHE_NUM": "oneDNN convolution plans kept (least recently used dropped; default 1024, <= 0 unbounded)",
    "MXNET_HOME": "data directory (datasets, model zoo)",
    "MXNET_GLUON_REPO": "mirror that datasets and pretrained models download from",
    "MXNET_LIBRARY_PATH": "libinfo.find_lib_path override",
    "MXNET_INCLUDE_PATH": "libinfo.find_include_path override",
    "MXNET_CONF_PATH": "libinfo.find_conf_path override",
    "DMLC_ROLE": "role of this process in a distributed kvstore job",
    "DMLC_PS_VAN_TYPE": "parameter-server transport (p3 selects the P3 kvstore)",
}
# Read by JAX, not mxjax, but they decide which devices and flags mxjax's programs get.
_JAX_ENV_VARS = ("JAX_PLATFORMS", "JAX_ENABLE_X64", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES")

_UNSET = "(unset)"


def _heading(title: str) -> None:
    print(f"----------{title}----------")


def _row(name: str, value: object) -> None:
    print(f"{name + ':':<16}{value}")


def _env(name: str) -> str:
    value = os.environ.get(name)
    return _UNSET if value is None else value


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def python_info() -> None:
    _heading("Python Info")
    _row("Version", platform.python_version())
    _row("Compiler", platform.python_compiler())
    _row("Build", platform.python_build())
    _row("Implementation", platform.python_implementation())
    _row("Executable", sys.executable)


def pip_info() -> None:
    _heading("Pip Info")
    for dist in PACKAGES:
        _row(dist, _version(dist))


def _engine_info(mx) -> None:
    print("Engine:")
    engine = mx.engine.get_engine()
    print(f"  type            {mx.engine.engine_type()} (MXNET_ENGINE_TYPE={_env('MXNET_ENGINE_TYPE')})")
    workers = getattr(engine, "num_workers", None)
    if workers is not None:
        print(f"  worker threads  {workers}")
    # set_bulk_size returns the previous size: read it and put it back
    size = mx.engine.set_bulk_size(0)
    mx.engine.set_bulk_size(size)
    print(f"  bulk size       {size} (this thread; mx.engine.set_bulk_size / mx.engine.bulk)")
    bulk = mx.engine.set_imperative_bulk()  # all None: changes nothing, returns the settings
    print(f"  imperative bulk enabled={bulk['enabled']} max_nodes={bulk['max_nodes']} "
          f"compile_after={bulk['compile_after']} (mx.engine.set_imperative_bulk)")
    native = mx.graph.bulk.record is not mx.graph.bulk.record_python
    print(f"  bulk recorder   {'C (graph/_record.c)' if native else 'Python (the C one was not built)'}")
    dispatch = "synchronous" if mx.engine.naive.xla_synchronous() else "asynchronous"
    print(f"  XLA:CPU dispatch {dispatch} (synchronous under NaiveEngine named at import)")
    stats = mx.npx.compile_stats()
    print(f"  compile cache   at most {stats['max_entries']} programs, {stats['max_bytes']} bytes")


def mxnet_info() -> None:
    _heading("MXNet Info")
    import jax

    import mxjax as mx

    _row("Version", mx.__version__)
    _row("Directory", os.path.dirname(os.path.abspath(mx.__file__)))
    commit = mx.runtime.get_commit_hash()
    _row("Commit hash", commit or "unknown")
    print("JAX:")
    print(f"  {'default backend':<21} {jax.default_backend()}")
    print(f"  {'devices':<21} {', '.join(str(d) for d in jax.devices())}")
    for name in _JAX_ENV_VARS:
        print(f"  {name:<21} {_env(name)}")
    _engine_info(mx)
    features = mx.runtime.Features()
    print("Features enabled:", " ".join(f.name for f in features.values() if f.enabled) or "none")
    print("Environment (variables mxjax reads):")
    for name in ENV_VARS:
        print(f"  {name}={_env(name)}")
    others = sorted(n for n in os.environ if n.startswith("MXNET_") and n not in ENV_VARS)
    if others:
        print("  set but not read by mxjax:", ", ".join(f"{n}={os.environ[n]}" for n in others))


def os_info() -> None:
    _heading("System Info")
    _row("Platform", platform.platform())
    _row("System", platform.system())
    _row("Release", platform.release())
    _row("Version", platform.version())


def hardware_info() -> None:
    _heading("Hardware Info")
    _row("Machine", platform.machine())
    _row("Processor", platform.processor() or _cpu_model() or "unknown")
    _row("CPU count", os.cpu_count())
    if hasattr(os, "sched_getaffinity"):
        _row("CPUs usable", len(os.sched_getaffinity(0)))


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return ""


# flag -> printer, in the order MXNet's diagnose.py prints them
SECTIONS: dict[str, Callable[[], None]] = {
    "python": python_info, "pip": pip_info, "mxnet": mxnet_info, "os": os_info, "hardware": hardware_info,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the sections chosen by ``argv`` (all by default); returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m mxjax.diagnose",
        description="Diagnose the mxjax installation (sections as in MXNet's tools/diagnose.py).")
    for name in SECTIONS:
        parser.add_argument(f"--{name}", type=int, choices=(0, 1), default=1,
                            help=f"1 to show the {name} section (default), 0 to leave it out")
    args = parser.parse_args(argv)
    for name, printer in SECTIONS.items():
        if getattr(args, name):
            printer()
    return 0


if __name__ == "__main__":
    sys.exit(main())
