"""``mx.library``: load MXNet 2.0 extension libraries (custom C++ operators) into mxjax.

An extension library is a shared object its author compiled against MXNet 2.0's
``include/mxnet/lib_api.h`` and ``src/lib_api.cc``.  :func:`load` opens it, checks its
lib_api version, calls its ``initialize`` and registers each of its operators where
MXNet 2.0 puts them: ``mx.nd.<name>`` (and ``mx.nd.op``), ``mx.sym.<name>`` (and
``mx.sym.op``), and the op registry behind symbol JSON and hybridized blocks.  Like
MXNet, ``mx.np``/``mx.npx`` do not get them.  The ops run on the host (CPU callbacks),
imperatively, under autograd and inside compiled graphs.

The library's partitioners are listed as ``optimize_for`` backends that raise an error:
mxjax cannot run them yet.  Its graph passes run (``_find_graph_pass``: symbol JSON through
the library and back, new parameters included); until ``Symbol.optimize_for`` consults that
hook, their backends raise the same kind of error.
"""
from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Callable

import numpy as onp

from . import _library_abi, ndarray
from ._library_ops import LibraryOp
from ._library_passes import GraphPass
from .base import MXNetError
from .ndarray import op as nd_op
from .operator.registry import OPS, register_op
from .subgraph import SubgraphProperty, list_backends, register_backend
from .symbol import contrib as _sym_contrib, image as _sym_image, linalg as _sym_linalg, random as _sym_random
from .symbol import load_json
from .symbol._generated import PrefixedNamespace

__all__ = ["load", "compiled_with_gcc_cxx11_abi", "loaded_libs", "MXlib"]


class MXlib:
    """A loaded extension library: ``handle`` is its ``dlopen`` handle, ``path`` its file.

    Unlike MXNet, dropping it does not ``dlclose`` the library: its operators stay
    registered and would otherwise call into unmapped code."""

    def __init__(self, extension: _library_abi.Extension) -> None:
        self.extension = extension
        self.path = extension.path
        self.handle = extension.lib._handle

    def __repr__(self) -> str:
        return f"<MXlib {self.path}>"


loaded_libs: list[MXlib] = []
_OPS_BY_PATH: dict[str, list[LibraryOp]] = {}
_PASSES: dict[str, GraphPass] = {}


def load(path: str | os.PathLike, verbose: bool = True) -> None:
    """Load the extension library at ``path`` (absolute, ``.so`` or ``.dll``) and register its ops.

    verbose: print what the library registers (its operators, partitioners and passes).
    Loading the same library again adds another entry to ``loaded_libs`` and keeps its ops.
    """
    if isinstance(path, os.PathLike):  # (MXNet fails on these with an AttributeError)
        path = os.fspath(path)
    if not isinstance(path, str):
        raise MXNetError(f"library.load: path must be a str, got {type(path).__name__}")
    if not os.path.exists(path):
        raise MXNetError(f"load path {path} does NOT exist")
    if not os.path.isabs(path):
        raise MXNetError(f"load path {path} is not an absolute path")
    if os.path.splitext(path)[1] not in (".so", ".dll"):
        raise MXNetError(f"load path {path} is NOT a library file (expected a .so or .dll)")
    real = os.path.realpath(path)
    extension = _library_abi.Extension(real)
    _library_abi.ensure_cpu_states()
    if real not in _OPS_BY_PATH:
        _OPS_BY_PATH[real] = _register(extension)
    loaded_libs.append(MXlib(extension))
    if verbose:
        _report(extension, _OPS_BY_PATH[real])


def _register(extension: _library_abi.Extension) -> list[LibraryOp]:
    """Register every (non-subgraph) op of the library, after checking no name is taken."""
    ops = [LibraryOp(extension, entry) for entry in extension.ops if not entry.is_subgraph_op]
    taken = [op.name for op in ops if op.name in OPS]
    if taken:
        raise MXNetError(f"library.load: {extension.path!r} registers operators {taken} whose names are "
                         "already registered")
    for op in ops:
        register_op(op.opdef)
        for module, short in _nd_homes(op.name):
            setattr(module, short, op.function)
    if any(op.name.startswith(_SUBMODULE_PREFIXES) for op in ops):
        _refresh_symbol_namespaces()
    for name, fn in extension.pass_fns.items():
        _PASSES.setdefault(name, GraphPass(extension, name, fn))
    for kind, names in (("partitioner", extension.partitioners), ("graph pass", extension.passes)):
        for name in names:
            if name not in list_backends():
                register_backend(name, _unsupported_backend(name, kind, extension.path))
    return ops


def _find_graph_pass(backend: str) -> Callable[..., Any] | None:
    """``run(symbol, args=None, aux=None, **options) -> Symbol`` for a graph pass of a loaded library
    named ``backend`` (None if there is none): what ``Symbol.optimize_for(backend, ...)`` does with it."""
    graph_pass = _PASSES.get(backend)
    if graph_pass is None:
        return None

    def run(symbol: Any, args: dict | None = None, aux: dict | None = None, **options: Any) -> Any:
        return _run_graph_pass(graph_pass, symbol, args, aux, options)
    return run


def _host(value: Any) -> onp.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else onp.asarray(value)


def _run_graph_pass(graph_pass: GraphPass, symbol: Any, args: dict | None, aux: dict | None,
                    options: dict) -> Any:
    """Rewrite ``symbol`` with a library pass; like MXNet, the ``args``/``aux`` dicts receive the
    parameters the pass allocates and lose those the new graph no longer uses."""
    arg_names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
    given_args = {k: _host(v) for k, v in (args or {}).items() if k in arg_names}
    given_aux = {k: _host(v) for k, v in (aux or {}).items() if k in aux_names}
    text, new_args, new_aux = graph_pass.run(symbol.tojson(), given_args, given_aux,
                                             {k: str(v) for k, v in options.items()})
    result = load_json(text)
    for what, target, made in (("args", args, new_args), ("aux", aux, new_aux)):
        if made and target is None:
            raise MXNetError(f"optimize_for: graph pass {graph_pass.name!r} allocated {what} {sorted(made)}; pass "
                             f"a dict as {what}= to receive them")
        for name, value in made.items():
            target[name] = ndarray.array(value, dtype=value.dtype)  # type: ignore[index]
    for target, before, after in ((args, arg_names, result.list_arguments()),
                                  (aux, aux_names, result.list_auxiliary_states())):
        dropped = set(before) - set(after)
        if target is not None:
            for name in dropped:
                target.pop(name, None)
        elif dropped:
            warnings.warn(f"optimize_for: graph pass {graph_pass.name!r} removed parameters {sorted(dropped)}; "
                          "pass args=/aux= dicts to have them dropped there too", stacklevel=3)
    return result


# op-name prefixes whose ops MXNet files under a submodule of mx.nd, by short name
_SUBMODULE_PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")


def _nd_homes(name: str) -> list[tuple[Any, str]]:
    """Where MXNet's generated modules put an op's ``mx.nd`` function: ``mx.nd`` and ``mx.nd.op``
    for a plain name; ``mx.nd.contrib.<short>`` for ``_contrib_<short>`` (likewise linalg, sparse,
    image, and random for ``*_like`` ops); other ``_``-names are internal and get none."""
    for prefix in _SUBMODULE_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            if prefix == "_random_" and not name.endswith("_like"):
                return []
            return [(getattr(ndarray, prefix[1:-1]), name[len(prefix):])]
    return [] if name.startswith("_") else [(ndarray, name), (nd_op, name)]


def _refresh_symbol_namespaces() -> None:
    """Make ``mx.sym.contrib`` & co. list ops registered after their first use.

    They bind ops by prefix from a name table built once (the registry is otherwise complete
    at import); dropping the table makes the next lookup rebuild it with the library's ops."""
    for module in (_sym_contrib, _sym_image, _sym_linalg, _sym_random):
        for space in vars(module).values():
            if isinstance(space, PrefixedNamespace):
                space._names = None


def _unsupported_backend(name: str, kind: str, path: str) -> type:
    """An ``optimize_for`` backend standing for a library partitioner or pass: it raises when used."""

    unsupported = ("library partitioners are not supported by mxjax yet" if kind == "partitioner" else
                   "Symbol.optimize_for does not run library graph passes yet")

    class LibraryBackend(SubgraphProperty):
        def __init__(self, **options: Any) -> None:
            raise MXNetError(f"optimize_for: backend {name!r} is a {kind} of the extension library {path!r}; "
                             f"{unsupported}")

    LibraryBackend.__name__ = LibraryBackend.__qualname__ = f"LibraryBackend_{name}"
    return LibraryBackend


def _report(extension: _library_abi.Extension, ops: list[LibraryOp]) -> None:
    lines = [f"library {extension.path}: {len(ops)} operator(s)"]
    for i, op in enumerate(ops):
        note = f" (cannot run: no {', '.join(op.missing)})" if op.missing else ""
        lines.append(f"  op[{i}] {op.name}{note}")
    skipped = [e.name for e in extension.ops if e.is_subgraph_op]
    if skipped:
        lines.append(f"  subgraph ops (used by partitioners, not registered): {skipped}")
    lines.append(f"  {len(extension.partitioners)} partitioner(s), {len(extension.passes)} graph pass(es)"
                 + (" (not supported by mxjax yet)" if extension.partitioners or extension.passes else ""))
    print("\n".join(lines), file=sys.stderr)


def compiled_with_gcc_cxx11_abi() -> int:
    """Which ``_GLIBCXX_USE_CXX11_ABI`` to build extension libraries with: 0, as MXNet 2.0's wheels.

    mxjax talks to a library only through the plain C functions of ``lib_api.cc``, so a
    library built with either ABI loads; 0 is the answer MXNet 2.0's pip builds give, for
    build scripts that pass it on to the compiler."""
    return 0
