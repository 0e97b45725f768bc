"""oneDNN kernels for CPU convolutions, called from XLA programs through XLA's FFI.

``conv.cc`` and ``plans.cc`` (built at install time by ``setup.py`` into ``_conv*.so``)
hold the handlers; this module loads it with ctypes, registers its handlers as CPU custom-call
targets and says whether that worked (``available()``).  Loading is lazy (first use)
and never raises: a missing or broken build leaves ``available()`` False with the reason
in ``load_error()``, and mxjax keeps XLA's own convolution.

``MXNET_ONEDNN_ENABLED=0`` turns the oneDNN path off.  Like MXNet, which reads it once,
mxjax reads it at the first convolution traced in the process (``enabled()``).

The extension keeps one oneDNN plan per convolution configuration in a least-recently-used
cache of ``PLAN_CACHE_SIZE`` plans; ``MXNET_ONEDNN_CACHE_NUM`` (MXNet's name for its oneDNN
cache bound), read when the extension loads, sets another bound (0 or less: unbounded).
"""
from __future__ import annotations

import ctypes
import glob
import os
import threading
import warnings
from importlib import metadata

__all__ = ["available", "enabled", "load_error", "library", "TARGETS", "ONEDNN_DIST", "PLAN_CACHE_SIZE",
           "set_plan_cache_size"]

# The oneDNN wheel mxjax builds and runs against: oneDNN 3.2 with the OpenMP CPU runtime.
# (The newer ``onednn`` 2026 wheel is the SYCL build, which needs Intel's SYCL, OpenCL
# and TBB runtimes for the CPU engine.)
ONEDNN_DIST = "onednn-cpu-gomp"
TARGETS = {
    "forward": "mxjax_onednn_conv_forward",
    "backward_data": "mxjax_onednn_conv_backward_data",
    "backward_weights": "mxjax_onednn_conv_backward_weights",
    "pack_weights": "mxjax_onednn_conv_pack_weights",
    "forward_packed": "mxjax_onednn_conv_forward_packed",
}

# Plans kept by default: a few per layer (forward, backward-data, backward-weights) of a large
# network at several input shapes; each holds oneDNN's JIT-compiled kernels (tens to hundreds of KB).
PLAN_CACHE_SIZE = 1024

_lock = threading.Lock()
_state: dict = {}


def _libdnnl_path() -> str | None:
    """libdnnl.so.3 from the oneDNN wheel (installed under ``<prefix>/lib``), if present."""
    try:
        dist = metadata.distribution(ONEDNN_DIST)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == "libdnnl.so.3":
            path = str(dist.locate_file(f))
            if os.path.exists(path):
                return path
    return None


def _extension_path() -> str | None:
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "_conv*.so")))
    return found[0] if found else None


def _load() -> None:
    ext = _extension_path()
    if ext is None:
        raise OSError("the oneDNN convolution extension was not built (no mxjax/_onednn/_conv*.so; "
                      "reinstall mxjax with g++ available)")
    # libdnnl runs on OpenMP (libgomp), which reads this when it loads, just below.  Its default
    # keeps idle workers spinning for a while after each parallel region, taking the cores from
    # XLA's thread pool and from the workers of the next call (each XLA thread that calls oneDNN
    # gets its own team): one 3 ms convolution measured 26 ms so.  A user's setting is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    dnnl = _libdnnl_path()
    if dnnl is not None:  # loaded first, so the extension's libdnnl.so.3 resolves to it
        ctypes.CDLL(dnnl, mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(ext)
    lib.mxjax_onednn_conv_check.restype = ctypes.c_int
    lib.mxjax_onednn_conv_check.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.c_int64,
                                            ctypes.c_char_p, ctypes.c_int64]
    lib.mxjax_onednn_plans_built.restype = ctypes.c_int64
    lib.mxjax_onednn_set_layout_any.argtypes = [ctypes.c_int]
    lib.mxjax_onednn_set_cache_capacity.argtypes = [ctypes.c_int64]
    lib.mxjax_onednn_plans_cached.restype = ctypes.c_int64
    lib.mxjax_onednn_packed_bytes.restype = ctypes.c_int64
    lib.mxjax_onednn_packed_bytes.argtypes = [ctypes.POINTER(ctypes.c_int64), ctypes.c_int64]
    size = os.environ.get("MXNET_ONEDNN_CACHE_NUM", "").strip()
    try:
        capacity = int(size) if size else PLAN_CACHE_SIZE
    except ValueError:  # a typo in a setting should not cost the fast convolutions
        warnings.warn(f"mxjax: MXNET_ONEDNN_CACHE_NUM={size!r} is not an integer; keeping {PLAN_CACHE_SIZE} "
                      "oneDNN plans", RuntimeWarning, stacklevel=2)
        capacity = PLAN_CACHE_SIZE
    lib.mxjax_onednn_set_cache_capacity(capacity)
    import jax  # registration needs jax's FFI; jax is imported by then anyway

    for symbol in TARGETS.values():
        fn = getattr(lib, symbol)
        jax.ffi.register_ffi_target(symbol, jax.ffi.pycapsule(fn), platform="cpu")
    _state["lib"] = lib


def library() -> ctypes.CDLL | None:
    """The loaded extension (ctypes), loading and registering it on first call; None if unavailable."""
    if "done" not in _state:
        with _lock:
            if "done" not in _state:
                try:
                    _load()
                except Exception as err:  # any failure means: no oneDNN, use XLA
                    _state["error"] = f"{type(err).__name__}: {err}"
                _state["done"] = True
    return _state.get("lib")


def available() -> bool:
    """True when the extension is built, loads, and its handlers are registered with XLA."""
    return library() is not None


def load_error() -> str | None:
    """Why ``available()`` is False (None when it is True or was not asked yet)."""
    library()
    return _state.get("error")


def set_plan_cache_size(size: int) -> None:
    """Keep at most ``size`` oneDNN plans (0 or less: no bound), evicting the least recently used.

    An evicted configuration still runs: its plan is rebuilt when next called (milliseconds).
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"set_plan_cache_size: size must be an int, got {type(size).__name__}")
    lib = library()
    if lib is not None:
        lib.mxjax_onednn_set_cache_capacity(size)


def enabled() -> bool:
    """``MXNET_ONEDNN_ENABLED`` (default on), read once at the first call in the process."""
    if "enabled" not in _state:
        _state["enabled"] = os.environ.get("MXNET_ONEDNN_ENABLED", "1").strip().lower() not in (
            "0", "false", "off", "no")
    return _state["enabled"]
