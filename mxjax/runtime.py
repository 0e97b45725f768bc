"""``mx.runtime``: which features this installation has (``Features().is_enabled('CUDA')``).

MXNet reports the options its C++ library was compiled with.  mxjax has no such library:
its ops are compiled by XLA at run time for the devices JAX finds, so each flag says what
this process can actually use, decided as follows:

* ``CUDA``, ``CUDNN``, ``NCCL``: JAX has a CUDA GPU backend (jaxlib's CUDA plugin ships
  cuDNN and uses NCCL for collectives).  ``TPU`` (mxjax only): JAX has TPU devices.
* ``TENSORRT``, ``CUTENSOR``, ``TVM_OP``, ``JEMALLOC``, ``OPENMP``, ``SSE``:
  never (XLA does not use them; its CPU backend runs on its own thread pool and Eigen).
* ``ONEDNN``: CPU convolutions run on oneDNN (``mxjax._onednn``: the extension was built,
  loads, and ``MXNET_ONEDNN_ENABLED`` is not 0).
* ``CPU_SSE`` ... ``CPU_AVX2``, ``F16C``: the host CPU has the instruction set (read from
  ``/proc/cpuinfo``; False where that is unavailable).  XLA compiles for the host CPU.
* ``BLAS_OPEN``/``BLAS_ATLAS``/``BLAS_MKL``/``BLAS_APPLE``: never (XLA's CPU dot is Eigen).
* ``LAPACK``: SciPy's LAPACK is importable (jaxlib's CPU linear algebra calls it).
* ``OPENCV``: the ``cv2`` module is importable.
* ``DIST_KVSTORE``: ``jax.distributed`` has been initialized (multi-process run).
* ``INT64_TENSOR_SIZE``: always: mxjax's calls run with JAX's 64-bit types on (its own
  thread-local scope), so shapes, indices and sizes are int64.
* ``SIGNAL_HANDLER``: ``faulthandler`` is enabled (stack traces on fatal signals).
* ``DEBUG``: JAX runs in a debugging mode (``jax_debug_nans``, ``jax_debug_infs`` or ``jax_disable_jit``).

``Features()`` is computed once per process, like MXNet's.
"""
from __future__ import annotations

import collections
import faulthandler
import importlib.util
import json
import os
from importlib import metadata
from typing import Any

import jax

from . import _onednn
from .base import check_call

__all__ = ["Feature", "Features", "feature_list", "get_branch", "get_commit_hash", "check_call"]

_CPU_FLAGS = {  # MXNet feature -> /proc/cpuinfo flag
    "CPU_SSE": "sse", "CPU_SSE2": "sse2", "CPU_SSE3": "pni", "CPU_SSE4_1": "sse4_1",
    "CPU_SSE4_2": "sse4_2", "CPU_SSE4A": "sse4a", "CPU_AVX": "avx", "CPU_AVX2": "avx2",
}
_NEVER = ("TENSORRT", "CUTENSOR", "OPENMP", "SSE", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS",
          "BLAS_MKL", "BLAS_APPLE", "TVM_OP")
_ORDER = ("CUDA", "CUDNN", "NCCL", "TENSORRT", "CUTENSOR", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
          "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "ONEDNN",
          "OPENCV", "DIST_KVSTORE", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP", "TPU")


class Feature:
    """One feature: ``name`` and ``enabled``; prints as ``✔ CUDA`` or ``✖ CUDA``."""

    __slots__ = ("name", "enabled")

    def __init__(self, name: str, enabled: bool) -> None:
        self.name = name
        self.enabled = bool(enabled)

    def __repr__(self) -> str:
        return f"{'✔' if self.enabled else '✖'} {self.name}"


def _has_platform(platform: str) -> bool:
    try:
        return len(jax.devices(platform)) > 0
    except RuntimeError:
        return False


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _distributed() -> bool:
    try:
        return jax.process_count() > 1
    except RuntimeError:
        return False


def _detect() -> dict[str, bool]:
    cuda = _has_platform("cuda")
    flags = _cpu_flags()
    enabled = {name: False for name in _NEVER}
    enabled.update({name: flag in flags for name, flag in _CPU_FLAGS.items()})
    enabled.update(CUDA=cuda, CUDNN=cuda, NCCL=cuda, TPU=_has_platform("tpu"), F16C="f16c" in flags,
                   LAPACK=_importable("scipy"), OPENCV=_importable("cv2"),
                   ONEDNN=_onednn.enabled() and _onednn.available(),
                   DIST_KVSTORE=_distributed(),
                   INT64_TENSOR_SIZE=True,
                   SIGNAL_HANDLER=faulthandler.is_enabled(),
                   DEBUG=bool(jax.config.jax_debug_nans or jax.config.jax_debug_infs
                              or jax.config.jax_disable_jit))
    return enabled


def feature_list() -> list[Feature]:
    """All features of this installation, in MXNet's order (``TPU`` last)."""
    enabled = _detect()
    return [Feature(name, enabled[name]) for name in _ORDER]


class Features(collections.OrderedDict):
    """Ordered mapping feature name -> :class:`Feature`; one instance per process."""

    instance: "Features | None" = None

    def __new__(cls) -> "Features":
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self) -> None:  # filled once in __new__; OrderedDict.__init__ would not reset it
        pass

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` (any case) is enabled; ``RuntimeError`` for an unknown name."""
        feature_name = feature_name.upper()
        if feature_name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: {list(self.keys())}")
        return self[feature_name].enabled


# ----------------------------------------------------------------------------- build provenance

def _git_dir() -> str | None:
    """The git directory of the checkout mxjax is imported from (a worktree's ``.git`` file followed)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".git")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            target = f.read().strip()
        if target.startswith("gitdir: "):
            path = os.path.join(os.path.dirname(path), target[len("gitdir: "):])
    return path if os.path.isdir(path) else None


def _common_dir(git: str) -> str:
    """Where refs live: a worktree's ``commondir``, else the git directory itself."""
    common = os.path.join(git, "commondir")
    if not os.path.isfile(common):
        return git
    with open(common, encoding="utf-8") as f:
        return os.path.normpath(os.path.join(git, f.read().strip()))


def _vcs_info() -> dict[str, Any]:
    """``vcs_info`` of a pip install from a repository (PEP 610), if any."""
    try:
        text = metadata.distribution("mxjax").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return {}
    return json.loads(text).get("vcs_info", {}) if text else {}


def _head() -> str:
    git = _git_dir()
    if git is None:
        return ""
    with open(os.path.join(git, "HEAD"), encoding="utf-8") as f:
        return f.read().strip()


def get_branch() -> str:
    """The git branch mxjax was installed from (``'HEAD'`` when detached, ``''`` when unknown)."""
    head = _head()
    if head.startswith("ref: refs/heads/"):
        return head[len("ref: refs/heads/"):]
    if head:
        return "HEAD"
    return _vcs_info().get("requested_revision", "")


def get_commit_hash() -> str:
    """The git commit mxjax was installed from (``''`` when unknown)."""
    head = _head()
    git = _git_dir()
    if head.startswith("ref: ") and git is not None:
        ref = head[len("ref: "):]
        git = _common_dir(git) if not os.path.isfile(os.path.join(git, *ref.split("/"))) else git
        ref_file = os.path.join(git, *ref.split("/"))
        if os.path.isfile(ref_file):
            with open(ref_file, encoding="utf-8") as f:
                return f.read().strip()
        packed = os.path.join(git, "packed-refs")
        if os.path.isfile(packed):
            with open(packed, encoding="utf-8") as f:
                for line in f:
                    commit, _, name = line.strip().partition(" ")
                    if name == ref:
                        return commit
        return ""
    if head:
        return head
    return _vcs_info().get("commit_id", "")
