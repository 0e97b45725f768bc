"""Keep score of how much of MXNet 2.0's public Python API mxjax has.

Two modes:

* ``python tools/api_surface.py dump`` runs inside the MXNet 2.0.0b1 reference
  virtualenv and writes ``tools/mxnet20_api.json``: ``{namespace: sorted [names]}``
  for every namespace in :data:`NAMESPACES`.
* ``python tools/api_surface.py`` (mxjax's environment) reads that file, resolves
  each namespace in mxjax and prints namespace / MXNet names / present / coverage.
  ``--missing NS`` lists what one namespace lacks, ``--json`` prints the same data
  as JSON, ``--write-floor`` stores the current coverage (rounded down to 0.1%) in
  ``tests/api_coverage_floor.json``, which ``tests/test_api_surface.py`` enforces.

What counts as a public name of a *module* namespace (``mx.np``, ``mx.gluon`` ...):

1. ``dir(module)``, minus names with a leading ``_``;
2. a module value is kept only when it is a submodule of the walked module
   (``mx.np.linalg`` stays; ``np`` = NumPy, ``os``, ``ctypes``, ``mx`` re-imported
   inside ``mx.test_utils``, ``mx.base.libinfo`` are dropped);
3. a class or routine is dropped when it comes from the standard library,
   ``builtins`` or ``typing`` (``OrderedDict``, ``contextmanager``, the ctypes
   handle types of ``mx.base``, ``long``/``basestring``, ``warn``, typing helpers);
   objects from third-party packages stay, because MXNet exports them on purpose
   (``mx.np.allclose`` is NumPy's function through MXNet's fallback);
4. plain data stays (``mx.np.pi``, ``mx.np.float32``, ``mx.np.newaxis``,
   ``mx.base.string_types``), except the names in :data:`EXCLUDED` (placeholders
   for optional dependencies that MXNet sets to ``None`` when missing).

A *class* namespace (``mx.np.ndarray``, ``mx.gluon.Block`` ...) lists
``dir(cls)`` minus names with a leading ``_``: methods and properties, inherited
ones included, minus methods whose body only raises AttributeError (MXNet's way
of saying that ``mx.np.ndarray`` has no ``sin`` method although NDArray has). In mxjax a class name also counts as present when some method of
an mxjax class in the MRO assigns ``self.<name>`` (an instance attribute), or
when the class's ``__getattr__`` answers it (NDArray's fluent methods).

The file imports neither MXNet nor mxjax at module level, so the test imports it
without MXNet; :func:`load_root` imports the one it is asked for.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import math
import sys
import textwrap
import types
from pathlib import Path
from typing import Any, Iterable

HERE = Path(__file__).resolve().parent
API_FILE = HERE / "mxnet20_api.json"
FLOOR_FILE = HERE.parent / "tests" / "api_coverage_floor.json"

NAMESPACES = (
    "mx", "mx.np", "mx.np.linalg", "mx.np.random", "mx.npx", "mx.nd", "mx.nd.contrib",
    "mx.nd.linalg", "mx.nd.random", "mx.sym", "mx.sym.np", "mx.gluon", "mx.gluon.nn",
    "mx.gluon.loss", "mx.optimizer", "mx.lr_scheduler", "mx.initializer", "mx.autograd",
    "mx.operator", "mx.test_utils", "mx.profiler", "mx.util", "mx.base", "mx.context",
    "mx.runtime", "mx.attribute", "mx.name", "mx.engine", "mx.random",
    "mx.np.ndarray", "mx.nd.NDArray", "mx.sym.Symbol", "mx.gluon.Block",
    "mx.gluon.HybridBlock", "mx.gluon.Parameter", "mx.gluon.Trainer",
)

# Names MXNet binds to None when an optional dependency is absent (scipy.stats).
EXCLUDED = {"mx.test_utils": frozenset({"ss"})}

# Methods that MXNet itself leaves abstract (body only raises NotImplementedError):
# the same body in mxjax is faithful, not a stub.
ABSTRACT_IN_MXNET = {
    "mx.gluon.Block": frozenset({"forward"}),
    "mx.gluon.HybridBlock": frozenset({"forward"}),
}

# Present names whose body is empty on purpose, each with the reason it is real.
# The stub check skips them; keep this list short and reviewed.
REVIEWED_NO_OPS = {
    "mx.gluon.Trainer.allreduce_grads":
        "mxjax keeps one copy of each gradient (one device per parameter): nothing to reduce",
}

_FOREIGN = frozenset(sys.stdlib_module_names) | {"builtins", "typing", "typing_extensions"}


# ----------------------------------------------------------------------------- walking


def load_root(module_name: str) -> types.ModuleType:
    """Import the package that plays ``mx`` (``mxnet`` for dump, ``mxjax`` otherwise)."""
    return importlib.import_module(module_name)


def resolve(root: types.ModuleType, namespace: str) -> Any:
    """Follow ``mx.a.b`` from ``root`` by attribute access; None when a link is missing."""
    obj: Any = root
    for part in namespace.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _origin(value: Any) -> str | None:
    """Top-level package a class, routine or typing object was defined in; None for data."""
    if inspect.isclass(value) or inspect.isroutine(value):
        module = getattr(value, "__module__", None)
    elif type(value).__module__ in ("typing", "typing_extensions"):
        module = "typing"
    else:
        return None
    return module.split(".")[0] if isinstance(module, str) else None


def keep_module_name(module: types.ModuleType, name: str, value: Any) -> bool:
    """The walking rules of the module docstring, for one attribute of a module namespace."""
    if name.startswith("_"):
        return False
    if isinstance(value, types.ModuleType):
        return value.__name__.startswith(module.__name__ + ".")
    origin = _origin(value)
    return origin is None or origin not in _FOREIGN


def public_names(obj: Any, namespace: str) -> list[str]:
    """Sorted public names of a module or class namespace, by the rules above."""
    excluded = EXCLUDED.get(namespace, frozenset())
    if inspect.isclass(obj):
        names = (n for n in dir(obj) if not n.startswith("_") and not disowned(obj, n))
    else:
        names = (n for n in dir(obj) if keep_module_name(obj, n, getattr(obj, n, None)))
    return sorted(n for n in names if n not in excluded)


def dump(root: types.ModuleType) -> dict[str, list[str]]:
    """``{namespace: sorted names}`` of the reference package; every namespace must exist."""
    api = {}
    for namespace in NAMESPACES:
        obj = resolve(root, namespace)
        if obj is None:
            raise SystemExit(f"api_surface dump: {namespace} does not exist in {root.__name__}")
        api[namespace] = public_names(obj, namespace)
    return api


def load_api(path: Path = API_FILE) -> dict[str, list[str]]:
    """The committed MXNet 2.0 name lists."""
    return json.loads(path.read_text())


# ----------------------------------------------------------------------------- coverage


def _instance_attributes(cls: type, package: str) -> set[str]:
    """Names assigned as ``self.<name> = ...`` in methods of the ``package`` classes of the MRO."""
    found: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith(package):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            for target in targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    found.add(target.attr)
    return found


def present_names(obj: Any, names: Iterable[str], package: str = "mxjax") -> list[str]:
    """The subset of ``names`` that ``obj`` (an mxjax namespace, or None) provides."""
    if obj is None:
        return []
    if not inspect.isclass(obj):
        return [n for n in names if hasattr(obj, n)]
    extra = _instance_attributes(obj, package)
    return [n for n in names if n in extra or hasattr(obj, n) or _dynamic_attribute(obj, n)]


def _dynamic_attribute(cls: type, name: str) -> bool:
    """Whether the class's ``__getattr__`` answers ``name`` (NDArray's fluent methods work this way).

    Asked of a bare instance (``object.__new__``): a ``__getattr__`` that needs the
    instance's state and fails counts as absent.
    """
    if not hasattr(cls, "__getattr__"):
        return False
    try:
        bare = object.__new__(cls)
        getattr(bare, name)
    except Exception:  # noqa: BLE001 - any failure means the name is not provided
        return False
    return True


def coverage(api: dict[str, list[str]], root: types.ModuleType) -> dict[str, dict[str, Any]]:
    """Per namespace: MXNet's count, the present and missing names, and the covered fraction."""
    report = {}
    for namespace, names in api.items():
        present = present_names(resolve(root, namespace), names, root.__name__)
        have = set(present)
        report[namespace] = {
            "total": len(names),
            "present": len(present),
            "coverage": len(present) / len(names) if names else 1.0,
            "missing": [n for n in names if n not in have],
        }
    return report


def floor_of(report: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Coverage rounded down to 0.1%, the form stored in the floor file."""
    return {ns: math.floor(row["coverage"] * 1000 + 1e-9) / 1000 for ns, row in report.items()}


def below_floor(report: dict[str, dict[str, Any]], floor: dict[str, float]) -> dict[str, str]:
    """Namespaces whose coverage dropped under the floor, each with a line saying what is missing."""
    failures = {}
    for namespace, limit in floor.items():
        row = report.get(namespace)
        if row is None or row["coverage"] + 1e-12 >= limit:
            continue
        failures[namespace] = (
            f"{namespace}: coverage {row['coverage']:.1%} < floor {limit:.1%} "
            f"({row['present']}/{row['total']}); missing now: {', '.join(row['missing'])}")
    return failures


# ----------------------------------------------------------------------------- stubs


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a function body after its docstring."""
    statements = list(body)
    if (statements and isinstance(statements[0], ast.Expr)
            and isinstance(statements[0].value, ast.Constant)
            and isinstance(statements[0].value.value, str)):
        return statements[1:]
    return statements


def raised_only(body: list[ast.stmt]) -> str | None:
    """Name of the exception when the body (after its docstring) is one ``raise``; else None."""
    statements = _without_docstring(body)
    if len(statements) != 1 or not isinstance(statements[0], ast.Raise) or statements[0].exc is None:
        return None
    exc = statements[0].exc
    exc = exc.func if isinstance(exc, ast.Call) else exc
    return exc.id if isinstance(exc, ast.Name) else getattr(exc, "attr", None)


def is_stub_body(body: list[ast.stmt]) -> bool:
    """True for a body that is only a docstring, ``pass``, ``...`` or ``raise NotImplementedError``."""
    statements = _without_docstring(body)
    if not statements:
        return True
    if len(statements) != 1:
        return False
    only = statements[0]
    if isinstance(only, ast.Pass):
        return True
    if isinstance(only, ast.Expr) and isinstance(only.value, ast.Constant):
        return only.value.value is Ellipsis
    return raised_only(statements) == "NotImplementedError"


def _functions_of(value: Any) -> list[Any]:
    """Plain Python functions behind a function, method, static/class method or property."""
    if isinstance(value, property):
        candidates = [value.fget, value.fset, value.fdel]
    elif isinstance(value, (staticmethod, classmethod)):
        candidates = [value.__func__]
    else:
        candidates = [value]
    found = []
    for candidate in candidates:
        if candidate is None:
            continue
        try:
            candidate = inspect.unwrap(candidate)
        except ValueError:
            continue
        if inspect.isfunction(candidate):
            found.append(candidate)
    return found


def function_body(function: Any) -> list[ast.stmt] | None:
    """The parsed body of a ``def``; None without source or for a lambda."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None  # a lambda, or a source line that is not the def itself
    return node.body


def is_stub(function: Any, package: str = "mxjax") -> bool:
    """True when ``function`` is defined in ``package`` and its body is a stub (see is_stub_body)."""
    if not str(getattr(function, "__module__", "")).startswith(package):
        return False
    body = function_body(function)
    return body is not None and is_stub_body(body)


def class_attribute(cls: type, name: str) -> Any:
    """The raw attribute (property, staticmethod ...) ``name`` resolves to along the MRO."""
    return next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), None)


def disowned(cls: type, name: str) -> bool:
    """True when every function behind ``cls.name`` only raises AttributeError.

    MXNet's ``np.ndarray`` overrides 1.x methods it does not offer (``x.sin()``) this
    way: the name is on the class, but MXNet says the attribute does not exist.
    """
    functions = _functions_of(class_attribute(cls, name))
    bodies = [function_body(f) for f in functions]
    return bool(bodies) and all(b is not None and raised_only(b) == "AttributeError" for b in bodies)


def find_stubs(api: dict[str, list[str]], root: types.ModuleType) -> list[str]:
    """``namespace.name`` of every present name whose function (or method) is a stub."""
    stubs = []
    for namespace, names in api.items():
        obj = resolve(root, namespace)
        if obj is None:
            continue
        allowed = ABSTRACT_IN_MXNET.get(namespace, frozenset())
        for name in names:
            if name in allowed or f"{namespace}.{name}" in REVIEWED_NO_OPS:
                continue
            if inspect.isclass(obj):
                value = class_attribute(obj, name)
            else:
                value = getattr(obj, name, None)
            if any(is_stub(f, root.__name__) for f in _functions_of(value)):
                stubs.append(f"{namespace}.{name}")
    return stubs


# ----------------------------------------------------------------------------- command line


def format_table(report: dict[str, dict[str, Any]]) -> str:
    """The coverage table, one namespace a row, with a total row."""
    width = max(len(ns) for ns in report) + 2
    lines = [f"{'namespace':<{width}}{'MXNet':>7}{'mxjax':>7}{'coverage':>10}"]
    for namespace, row in report.items():
        lines.append(f"{namespace:<{width}}{row['total']:>7}{row['present']:>7}"
                     f"{row['coverage']:>10.1%}")
    total = sum(r["total"] for r in report.values())
    present = sum(r["present"] for r in report.values())
    lines.append(f"{'total':<{width}}{total:>7}{present:>7}{present / max(total, 1):>10.1%}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=("dump",),
                        help="dump: write tools/mxnet20_api.json from the installed MXNet")
    parser.add_argument("--missing", metavar="NS", help="list the names NS lacks in mxjax")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--write-floor", action="store_true",
                        help="store the current coverage in tests/api_coverage_floor.json")
    parser.add_argument("--stubs", action="store_true", help="list present names that are stubs")
    args = parser.parse_args(argv)

    if args.mode == "dump":
        API_FILE.write_text(json.dumps(dump(load_root("mxnet")), indent=1, sort_keys=True) + "\n")
        print(f"wrote {API_FILE}")
        return 0

    api = load_api()
    root = load_root("mxjax")
    report = coverage(api, root)
    if args.missing:
        if args.missing not in report:
            parser.error(f"--missing: unknown namespace {args.missing!r}; one of {', '.join(report)}")
        print("\n".join(report[args.missing]["missing"]))
    elif args.json:
        print(json.dumps(report, indent=1))
    else:
        print(format_table(report))
    if args.stubs:
        print("\n".join(find_stubs(api, root)) or "no stubs")
    if args.write_floor:
        FLOOR_FILE.write_text(json.dumps(floor_of(report), indent=1) + "\n")
        print(f"wrote {FLOOR_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
