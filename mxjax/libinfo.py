"""``mx.libinfo``: where the native library, its headers and the TVM op config are.

MXNet answers with ``libmxnet.so`` and its C headers.  mxjax has no library of its own:
XLA, through jaxlib, is what compiles and runs its programs, so the honest answers point
into jaxlib.  ``find_lib_path()`` returns jaxlib's shared core (``libjax_common.so``, which
holds XLA's runtime, the part playing libmxnet's role), and ``find_include_path()`` returns
jaxlib's ``include`` folder (the XLA FFI headers: the C API a native custom op is written
against, the role MXNet's headers play for ``mx.library`` extensions).  mxjax has no TVM
operators, so ``find_conf_path()`` finds a config only where ``MXNET_CONF_PATH`` names
one, and raises ``RuntimeError`` otherwise, as MXNet does when none was built.  The
``MXNET_LIBRARY_PATH`` / ``MXNET_INCLUDE_PATH`` / ``MXNET_CONF_PATH`` overrides work as in MXNet.
"""
from __future__ import annotations

import importlib.metadata
import logging
import os
import re

import jaxlib

__all__ = ["find_lib_path", "find_include_path", "find_conf_path", "__version__"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _own_version() -> str:
    """The installed distribution's version; from a source tree on ``PYTHONPATH``, pyproject's."""
    try:
        return importlib.metadata.version("mxjax")
    except importlib.metadata.PackageNotFoundError:
        with open(os.path.join(_HERE, os.pardir, "pyproject.toml"), encoding="utf-8") as f:
            return re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)


__version__ = _own_version()  # mxjax's own version (``mx.__version__`` too)
_JAXLIB = os.path.dirname(os.path.abspath(jaxlib.__file__))
_CORE = "libjax_common"  # jaxlib's shared core: XLA's runtime and compiler


def _from_env(variable: str, exists: object, replace: tuple[str, str] | None = None) -> str | None:
    """The path an environment variable names, if it exists and is absolute (MXNet's rules)."""
    path = os.environ.get(variable)
    if not path:
        return None
    if replace:
        path = path.replace(*replace)
    if not exists(path):  # type: ignore[operator]
        logging.warning("%s '%s' doesn't exist", variable, path)
        return None
    if not os.path.isabs(path):
        logging.warning("%s should be an absolute path, instead of: %s", variable, path)
        return None
    return path


def find_lib_path(prefix: str = "libmxnet") -> list[str]:
    """The native libraries called ``prefix``: for ``libmxnet``, jaxlib's shared core (see the module
    docstring); for another prefix, ``<prefix>.so`` beside mxjax or jaxlib.  RuntimeError if none."""
    path = _from_env("MXNET_LIBRARY_PATH", os.path.isfile, ("libmxnet", prefix))
    if path:
        return [path]
    stem = _CORE if prefix == "libmxnet" else prefix
    candidates = [os.path.join(folder, stem + ext) for folder in (_JAXLIB, _HERE) for ext in (".so", ".dylib", ".dll")]
    found = [p for p in candidates if os.path.isfile(p)]
    if not found:
        raise RuntimeError(f"Cannot find the library {prefix!r}.\nList of candidates:\n" + "\n".join(candidates))
    return found


def find_include_path() -> str:
    """The C headers a native extension builds against: jaxlib's XLA FFI headers."""
    path = _from_env("MXNET_INCLUDE_PATH", os.path.isdir)
    if path:
        return path
    include = os.path.join(_JAXLIB, "include")
    if not os.path.isdir(include):
        raise RuntimeError(f"Cannot find the include path: jaxlib has no {include}")
    return include + os.sep


def find_conf_path(prefix: str = "tvmop") -> str:
    """The TVM op config named by ``MXNET_CONF_PATH`` (a str, as MXNet returns it); mxjax has no TVM
    ops, so RuntimeError otherwise."""
    path = _from_env("MXNET_CONF_PATH", os.path.isfile)
    if path:
        return path
    raise RuntimeError(f"Cannot find the TVM op config ({prefix}.conf): mxjax has no TVM operators; "
                       "set MXNET_CONF_PATH to an absolute path of one")
