"""mx.runtime: Features mapping (MXNet's names, flags decided from this process), feature_list, git info."""
import os
import subprocess

import jax
import numpy as onp
import pytest

import mxjax as mx
from mxjax.runtime import Feature, Features, feature_list, get_branch, get_commit_hash

# MXNet 2.0.0b1's feature names, in its order
MXNET_FEATURES = ["CUDA", "CUDNN", "NCCL", "TENSORRT", "CUTENSOR", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
                  "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE", "F16C",
                  "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK", "ONEDNN",
                  "OPENCV", "DIST_KVSTORE", "INT64_TENSOR_SIZE", "SIGNAL_HANDLER", "DEBUG", "TVM_OP"]


def _platform_count(name):
    try:
        return len(jax.devices(name))
    except RuntimeError:
        return 0


def test_features_is_a_singleton_ordered_mapping_with_mxnets_names():
    features = Features()
    assert Features() is features and isinstance(features, dict)
    assert list(features)[:len(MXNET_FEATURES)] == MXNET_FEATURES
    assert list(features) == [f.name for f in feature_list()]
    assert all(isinstance(f, Feature) and f.name == name for name, f in features.items())


def test_gpu_flags_follow_jax_devices():
    features = Features()
    has_cuda = _platform_count("cuda") > 0
    for name in ("CUDA", "CUDNN", "NCCL"):
        assert features.is_enabled(name) is has_cuda
    assert features.is_enabled("TPU") is (_platform_count("tpu") > 0)
    assert features.is_enabled("cuda") is has_cuda  # any case, as in MXNet


def test_honest_flags():
    features = Features()
    assert features.is_enabled("INT64_TENSOR_SIZE") is True
    big = mx.np.arange(3, dtype="int64") + (2**40)  # int64 arithmetic, not truncated to 32 bits
    assert big.dtype == onp.int64 and int(big[2]) == 2**40 + 2
    for never in ("TENSORRT", "TVM_OP", "BLAS_MKL", "JEMALLOC"):
        assert not features.is_enabled(never)
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
        assert features.is_enabled("CPU_SSE2") is ("sse2" in flags)
        assert features.is_enabled("CPU_AVX2") is ("avx2" in flags)


def test_unknown_feature_raises_runtime_error():
    # MXNet 2.0.0b1: RuntimeError "Feature 'FOO' is unknown, known features are: [...]"
    with pytest.raises(RuntimeError, match=r"Feature 'FOO' is unknown, known features are: \['CUDA'"):
        Features().is_enabled("foo")
    with pytest.raises(RuntimeError):
        Features().is_enabled("MKLDNN")  # 2.0 renamed it ONEDNN


def test_repr_marks_enabled_features():
    assert repr(Feature("CUDA", False)) == "✖ CUDA" and repr(Feature("LAPACK", True)) == "✔ LAPACK"
    assert repr(Features()).startswith("[") and "INT64_TENSOR_SIZE" in repr(Features())


def test_git_info_matches_the_checkout():
    root = os.path.dirname(os.path.dirname(mx.__file__))
    if not os.path.exists(os.path.join(root, ".git")):
        pytest.skip("mxjax is not imported from a git checkout")
    try:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        branch = subprocess.run(["git", "-C", root, "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("git is not available")
    assert get_commit_hash() == commit
    assert get_branch() == branch


def test_check_call_is_exported():
    mx.runtime.check_call(0)
