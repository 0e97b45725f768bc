"""mx.libinfo: jaxlib's native core and headers stand in for libmxnet's (see the module docstring)."""
import ctypes
import os

import jaxlib
import pytest

import mxjax as mx
from mxjax import libinfo


@pytest.fixture(autouse=True)
def _no_overrides(monkeypatch):
    for name in ("MXNET_LIBRARY_PATH", "MXNET_INCLUDE_PATH", "MXNET_CONF_PATH"):
        monkeypatch.delenv(name, raising=False)


def test_find_lib_path_is_jaxlibs_loadable_core():
    (path,) = libinfo.find_lib_path()
    assert os.path.dirname(path) == os.path.dirname(os.path.abspath(jaxlib.__file__))
    assert os.path.basename(path).startswith("libjax_common")
    ctypes.CDLL(path)  # a real shared library (already loaded by jaxlib)


def test_other_prefix_and_missing_library():
    with pytest.raises(RuntimeError, match=r"Cannot find the library 'libnothing_here'\.\nList of candidates:\n"):
        libinfo.find_lib_path("libnothing_here")


def test_find_include_path_holds_xla_ffi_headers():
    path = libinfo.find_include_path()
    assert os.path.isfile(os.path.join(path, "xla", "ffi", "api", "ffi.h"))


def test_environment_overrides(monkeypatch, tmp_path):
    lib = tmp_path / "libmxnet.so"
    lib.write_bytes(b"")
    monkeypatch.setenv("MXNET_LIBRARY_PATH", str(lib))
    assert libinfo.find_lib_path() == [str(lib)]
    monkeypatch.setenv("MXNET_INCLUDE_PATH", str(tmp_path))
    assert libinfo.find_include_path() == str(tmp_path)
    conf = tmp_path / "tvmop.conf"
    conf.write_text("{}")
    monkeypatch.setenv("MXNET_CONF_PATH", str(conf))
    assert libinfo.find_conf_path() == str(conf)
    monkeypatch.setenv("MXNET_LIBRARY_PATH", "relative/libmxnet.so")  # missing: falls back to jaxlib
    assert os.path.basename(libinfo.find_lib_path()[0]).startswith("libjax_common")


def test_no_tvm_config_without_override():
    with pytest.raises(RuntimeError, match="Cannot find the TVM op config .*mxjax has no TVM operators"):
        libinfo.find_conf_path()


def test_version_is_the_package_version():
    import importlib.metadata
    assert libinfo.__version__ == importlib.metadata.version("mxjax") == mx.__version__
    assert mx.libinfo is libinfo
