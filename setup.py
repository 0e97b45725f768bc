"""Builds mxjax's native pieces: the oneDNN convolution handlers (mxjax/_onednn/conv.cc, plans.cc)
and the recorders of imperative ops (mxjax/graph/_record.c) and of autograd's deferred nodes
(mxjax/_tape/_record.c).

Everything else is in pyproject.toml.  Every extension is optional: without a C++ compiler,
oneDNN's wheels or jaxlib's FFI headers the install still succeeds, with a warning, and
mxjax runs convolutions on XLA alone (``mxjax._onednn.available()`` is then False); without a
C compiler ops are recorded by the Python recorders (graph/bulk.py, _tape/recording.py).
"""
from __future__ import annotations

import importlib.util
import os
from importlib import metadata

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ONEDNN = "onednn-cpu-gomp"  # libdnnl.so.3 (oneDNN 3.2, OpenMP runtime), installed under <prefix>/lib
ONEDNN_DEVEL = "onednn-devel-cpu-gomp"  # its headers, under <prefix>/include


def _dist_file(dist_name: str, file_name: str, parent: str | None = None) -> str | None:
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == file_name and (parent is None or f.parent.name == parent):
            path = str(dist.locate_file(f))
            if os.path.exists(path):
                return path
    return None


def _jaxlib_include() -> str | None:
    spec = importlib.util.find_spec("jaxlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "include")
    return path if os.path.exists(os.path.join(path, "xla", "ffi", "api", "ffi.h")) else None


_INSTEAD = {"mxjax._onednn._conv": "convolutions will run on XLA",
            "mxjax.graph._record": "imperative ops are recorded by graph/bulk.py's Python recorder",
            "mxjax._tape._record": "ops under autograd are recorded by _tape/recording.py alone"}


class OptionalBuildExt(build_ext):
    """build_ext that fills in oneDNN's and jaxlib's paths, and warns instead of failing (each
    extension on its own: the recorder does not need oneDNN)."""

    def build_extension(self, ext: Extension) -> None:
        try:
            if ext.name == "mxjax._onednn._conv":
                header = _dist_file(ONEDNN_DEVEL, "dnnl.hpp", parent="dnnl")
                library = _dist_file(ONEDNN, "libdnnl.so.3")
                ffi = _jaxlib_include()
                missing = [name for name, path in ((f"{ONEDNN_DEVEL} headers", header),
                                                   (f"{ONEDNN} library", library),
                                                   ("jaxlib FFI headers", ffi)) if path is None]
                if missing:
                    raise RuntimeError("not found: " + ", ".join(missing))
                ext.include_dirs += [os.path.dirname(os.path.dirname(os.path.dirname(header))), ffi]
                ext.extra_link_args += [library]
            super().build_extension(ext)
        except Exception as err:  # noqa: BLE001 -- any failure: install without this extension
            self.warn(f"mxjax: extension {ext.name} not built ({err}); {_INSTEAD[ext.name]}")


setup(
    ext_modules=[
        Extension(
            "mxjax._onednn._conv",
            sources=["mxjax/_onednn/conv.cc", "mxjax/_onednn/plans.cc"],
            depends=["mxjax/_onednn/plans.h"],
            language="c++",
            extra_compile_args=["-std=c++17", "-O2", "-fvisibility=hidden", "-Wno-return-type"],
            # installed: <prefix>/lib/pythonX.Y/site-packages/mxjax/_onednn -> <prefix>/lib, where the
            # oneDNN wheel puts libdnnl.so.3; mxjax/_onednn also loads it by path first (editable installs)
            extra_link_args=["-Wl,-rpath,$ORIGIN/../../../.."],
            optional=True,
        ),
        Extension("mxjax.graph._record", sources=["mxjax/graph/_record.c"], depends=["mxjax/graph/_slots.h"],
                  extra_compile_args=["-O2"], optional=True),
        Extension("mxjax._tape._record", sources=["mxjax/_tape/_record.c"], depends=["mxjax/graph/_slots.h"],
                  extra_compile_args=["-O2"], optional=True),
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
