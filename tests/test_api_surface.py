"""mxjax's coverage of MXNet 2.0's public names (tools/api_surface.py) never drops, and no name is a stub.

The MXNet name lists come from ``tools/mxnet20_api.json`` (written by the tool's
``dump`` mode inside a real MXNet); the floor from ``tests/api_coverage_floor.json``
(``python tools/api_surface.py --write-floor``). The rule tests use small fake
modules and classes, so they check the walking and stub rules themselves.
"""
from __future__ import annotations

import ast
import collections
import importlib.util
import json
import os
import sys
import types
import typing
from pathlib import Path

import numpy as onp
import pytest

import mxjax

_TOOL = Path(__file__).resolve().parents[1] / "tools" / "api_surface.py"
_spec = importlib.util.spec_from_file_location("api_surface", _TOOL)
api_surface = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("api_surface", api_surface)
_spec.loader.exec_module(api_surface)


@pytest.fixture(scope="module")
def api():
    return api_surface.load_api()


@pytest.fixture(scope="module")
def report(api):
    return api_surface.coverage(api, mxjax)


# ------------------------------------------------------------------ the committed files


def test_api_file_lists_every_namespace_sorted(api):
    assert list(api) == sorted(api_surface.NAMESPACES)
    for namespace, names in api.items():
        assert names, namespace
        assert names == sorted(set(names)), namespace
        assert not [n for n in names if n.startswith("_")], namespace


def test_api_file_follows_the_walking_rules(api):
    assert {"np", "nd", "gluon", "npx", "sym"} <= set(api["mx"])
    assert {"linalg", "random", "pi", "float32", "newaxis", "allclose"} <= set(api["mx.np"])
    for namespace in ("mx.np", "mx.npx", "mx.test_utils", "mx.base", "mx.util"):
        assert not {"np", "os", "sys", "ctypes", "mx", "OrderedDict"} & set(api[namespace]), namespace
    assert "ss" not in api["mx.test_utils"]
    assert "sin" not in api["mx.np.ndarray"] and "sin" in api["mx.nd.NDArray"]
    assert "hybridize" in api["mx.gluon.HybridBlock"]


def test_floor_file_names_known_namespaces(api):
    floor = json.loads(api_surface.FLOOR_FILE.read_text())
    assert set(floor) <= set(api)
    assert all(0.0 <= value <= 1.0 for value in floor.values())


# ------------------------------------------------------------------ mxjax against the floor


def test_coverage_is_not_below_floor(report):
    floor = json.loads(api_surface.FLOOR_FILE.read_text())
    failures = api_surface.below_floor(report, floor)
    assert not failures, "API coverage dropped:\n" + "\n".join(failures.values())


def test_no_present_name_is_a_stub(api):
    stubs = api_surface.find_stubs(api, mxjax)
    assert not stubs, "stubs (body is only pass / ... / raise NotImplementedError): " + ", ".join(stubs)


def test_missing_namespace_counts_zero():
    root = types.ModuleType("fakeroot")
    rows = api_surface.coverage({"mx.nothere": ["a", "b"]}, root)
    assert rows["mx.nothere"]["present"] == 0 and rows["mx.nothere"]["coverage"] == 0.0
    assert rows["mx.nothere"]["missing"] == ["a", "b"]


def test_command_line_table_and_missing(capsys, report):
    assert api_surface.main([]) == 0
    table = capsys.readouterr().out
    assert "mx.np " in table and table.splitlines()[-1].startswith("total")
    assert api_surface.main(["--missing", "mx.np"]) == 0
    assert capsys.readouterr().out.split() == report["mx.np"]["missing"]


# ------------------------------------------------------------------ the rules, on fakes


def test_module_walk_keeps_own_names_and_drops_imports():
    module = types.ModuleType("pkg.mod")
    module.sub = types.ModuleType("pkg.mod.sub")
    module.sibling = types.ModuleType("pkg.other")
    module.os, module.np = os, onp
    module.OrderedDict, module.Optional = collections.OrderedDict, typing.Optional
    module.long = int
    module.pi, module.float32, module.allclose = 3.14, onp.dtype("float32"), onp.allclose
    module.newaxis = None
    module.helper = test_module_walk_keeps_own_names_and_drops_imports
    module._private = 1
    names = api_surface.public_names(module, "mx.fake")
    assert names == ["allclose", "float32", "helper", "newaxis", "pi", "sub"]


def test_class_walk_drops_methods_that_disown_themselves():
    class Base:
        def sin(self):
            return 1

    class Child(Base):
        def sin(self):
            """Not offered here."""
            raise AttributeError("Child has no sin")

        def cos(self):
            return 2

        @property
        def shape(self):
            return ()

    assert api_surface.public_names(Base, "mx.fake") == ["sin"]
    assert api_surface.public_names(Child, "mx.fake") == ["cos", "shape"]


def test_present_names_sees_instance_and_dynamic_attributes():
    class Dynamic:
        def __init__(self):
            self.learning_rate = 0.1

        def __getattr__(self, name):
            if name == "relu":
                return lambda: 0
            raise AttributeError(name)

        def step(self):
            return None

    names = ["step", "learning_rate", "relu", "sin"]
    assert api_surface.present_names(Dynamic, names, __name__) == ["step", "learning_rate", "relu"]


def _body(source: str) -> list[ast.stmt]:
    return ast.parse(source).body[0].body


@pytest.mark.parametrize("source, stub", [
    ("def f():\n    pass", True),
    ("def f():\n    ...", True),
    ("def f():\n    '''Doc only.'''", True),
    ("def f():\n    '''Doc.'''\n    raise NotImplementedError", True),
    ("def f():\n    raise NotImplementedError('later')", True),
    ("def f(x):\n    raise ValueError(x)", False),
    ("def f(x):\n    return x", False),
    ("def f(x):\n    '''Doc.'''\n    if x:\n        raise NotImplementedError\n    return x", False),
])
def test_stub_bodies(source, stub):
    assert api_surface.is_stub_body(_body(source)) is stub


def _stub_function():
    """Looks documented, does nothing."""


def _real_function(x):
    return x + 1


def test_is_stub_reads_the_source_of_package_functions():
    assert api_surface.is_stub(_stub_function, __name__)
    assert not api_surface.is_stub(_real_function, __name__)
    assert not api_surface.is_stub(_stub_function, "mxjax")  # defined outside the package
    assert not api_surface.is_stub(len, __name__)  # no Python source


def test_floor_rounds_down_and_drops_are_reported():
    rows = {"a": {"coverage": 2 / 3, "present": 2, "total": 3, "missing": ["z"]},
            "b": {"coverage": 1.0, "present": 1, "total": 1, "missing": []}}
    assert api_surface.floor_of(rows) == {"a": 0.666, "b": 1.0}
    failures = api_surface.below_floor(rows, {"a": 0.7, "b": 1.0})
    assert list(failures) == ["a"] and "z" in failures["a"] and "66.7%" in failures["a"]
