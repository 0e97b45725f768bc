"""Import layout of ``mx.gluon.probability``: no import cycle, and MXNet 2.0's public paths.

The import graph is read from the source with ``ast`` (module-level and function-local
imports alike), restricted to ``mxjax.gluon.probability``:

* a package's node stands for its ``__init__.py``, so a package has an edge to whatever
  its ``__init__`` imports;
* importing ``a.b.c`` (``import a.b.c``, ``from a.b import c``, ``from a.b.c import x``)
  adds an edge to ``a.b.c`` and to every package ``__init__`` on the way (``a``, ``a.b``),
  because importing it runs them;
* the packages enclosing the importer itself are left out: they have already started
  running before the importer's body does (Python takes them from ``sys.modules``), and
  counting them would turn every package whose ``__init__`` re-exports its submodules
  into a "cycle" by construction.
"""
from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

import mxjax.gluon.probability as mgp
from mxjax.gluon.probability import _constraint, _utils
from mxjax.gluon.probability.distributions import constraint as public_constraint
from mxjax.gluon.probability.distributions import utils as public_utils

PACKAGE = "mxjax.gluon.probability"


def _module_names(root: Path, base: str) -> dict[str, Path]:
    """Dotted name -> source file for every module and package under ``root``."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join([base] + parts)] = path
    return names


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _resolve_from(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module named by a (possibly relative) ``from X import ...``."""
    if not node.level:
        return node.module or ""
    anchor = importer.split(".") if is_package else importer.split(".")[:-1]
    anchor = anchor[:len(anchor) - (node.level - 1)]
    return ".".join(anchor + ([node.module] if node.module else []))


def import_graph(root: Path, base: str) -> dict[str, set[str]]:
    """Edges ``importer -> imported`` between the modules of the package at ``root``."""
    modules = _module_names(root, base)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for importer, path in modules.items():
        is_package = path.name == "__init__.py"
        skip = set(_ancestors(importer)) | {importer}
        targets: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve_from(importer, is_package, node)
                targets.append(source)
                targets += [f"{source}.{alias.name}" for alias in node.names
                            if f"{source}.{alias.name}" in modules]
        for target in targets:
            for name in _ancestors(target) + [target]:
                if name in modules and name not in skip:
                    graph[importer].add(name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as ``[a, b, ..., a]``, or None when the graph is acyclic."""
    state: dict[str, int] = {}  # 1: on the DFS stack, 2: finished
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_probability_import_graph_has_no_cycle():
    graph = import_graph(Path(mgp.__file__).parent, PACKAGE)
    assert f"{PACKAGE}.transformation.domain_map" in graph  # the walk saw the real tree
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_shared_helpers_sit_below_both_subpackages():
    graph = import_graph(Path(mgp.__file__).parent, PACKAGE)
    for low in (f"{PACKAGE}._utils", f"{PACKAGE}._constraint"):
        assert not {n for n in graph[low] if n.startswith((f"{PACKAGE}.distributions",
                                                            f"{PACKAGE}.transformation"))}
    for user in ("transformation.transformation", "transformation.domain_map"):
        assert not {n for n in graph[f"{PACKAGE}.{user}"] if n.startswith(f"{PACKAGE}.distributions")}


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_graph_catches_a_cycle_through_package_inits(tmp_path):
    # The old shape: dist/__init__ -> dist.trans -> xform/__init__ -> xform.t -> dist.util,
    # which runs dist/__init__ first.
    _write_tree(tmp_path, {
        "__init__.py": "from . import dist, xform\n",
        "dist/__init__.py": "from . import util\nfrom .trans import *\n",
        "dist/util.py": "import math\n",
        "dist/trans.py": "from ..xform import T\n",
        "xform/__init__.py": "from .t import *\n",
        "xform/t.py": "def f():\n    from ..dist.util import g\n",   # function-local import
    })
    cycle = find_cycle(import_graph(tmp_path, "pkg"))
    assert cycle is not None and cycle[0] == cycle[-1]
    assert {"pkg.dist", "pkg.xform", "pkg.xform.t"} <= set(cycle)


def test_graph_resolves_absolute_and_submodule_imports(tmp_path):
    _write_tree(tmp_path, {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/x.py": "import pkg.b.y\n",
        "b/__init__.py": "",
        "b/y.py": "from pkg.a import x\n",
    })
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a.x"] == {"pkg.b", "pkg.b.y"}
    assert graph["pkg.b.y"] == {"pkg.a", "pkg.a.x"}
    assert find_cycle(graph) is not None


# MXNet 2.0's ``distributions.utils.__all__`` and ``distributions.constraint.__all__``.
MX_UTILS_ALL = ['prob2logit', 'logit2prob', 'cached_property', 'sample_n_shape_converter',
                'constraint_check', 'digamma', 'gammaln', 'erfinv', 'erf']
MX_CONSTRAINT_ALL = [
    'Constraint', 'Real', 'Boolean', 'Interval', 'OpenInterval', 'HalfOpenInterval', 'UnitInterval',
    'IntegerInterval', 'IntegerOpenInterval', 'IntegerHalfOpenInterval', 'GreaterThan', 'GreaterThanEq',
    'IntegerGreaterThan', 'IntegerGreaterThanEq', 'LessThan', 'LessThanEq', 'IntegerLessThan',
    'IntegerLessThanEq', 'Positive', 'NonNegative', 'PositiveInteger', 'NonNegativeInteger', 'Simplex',
    'LowerTriangular', 'LowerCholesky', 'PositiveDefinite', 'Cat', 'Stack']
# The non-module public names of MXNet 2.0's ``mx.gluon.probability``.
MX_PROBABILITY_NAMES = [
    'AbsTransform', 'AffineTransform', 'Bernoulli', 'Beta', 'Binomial', 'Categorical', 'Cauchy', 'Chi2',
    'ComposeTransform', 'Dirichlet', 'Distribution', 'ExpTransform', 'Exponential', 'ExponentialFamily',
    'FisherSnedecor', 'Gamma', 'Geometric', 'Gumbel', 'HalfCauchy', 'HalfNormal', 'Independent', 'Laplace',
    'Multinomial', 'MultivariateNormal', 'NegativeBinomial', 'Normal', 'OneHotCategorical', 'Pareto',
    'Poisson', 'PowerTransform', 'RelaxedBernoulli', 'RelaxedOneHotCategorical', 'SigmoidTransform',
    'SoftmaxTransform', 'StochasticBlock', 'StochasticSequential', 'StudentT', 'TransformBlock',
    'Transformation', 'TransformedDistribution', 'Uniform', 'Weibull', 'biject_to', 'cached_property',
    'constraint_check', 'digamma', 'domain_map', 'empirical_kl', 'erf', 'erfinv', 'gammaln', 'kl_divergence',
    'logit2prob', 'prob2logit', 'register_kl', 'sample_n_shape_converter', 'transform_to']


def test_public_module_paths_reexport_the_same_objects():
    assert sorted(public_utils.__all__) == sorted(MX_UTILS_ALL)
    assert sorted(public_constraint.__all__) == sorted(MX_CONSTRAINT_ALL)
    for name in MX_UTILS_ALL + ['sum_right_most']:
        assert getattr(public_utils, name) is getattr(_utils, name), name
    for name in MX_CONSTRAINT_ALL + ['is_dependent', 'dependent_property']:
        assert getattr(public_constraint, name) is getattr(_constraint, name), name
    assert mgp.distributions.utils is public_utils
    assert mgp.distributions.constraint is public_constraint


@pytest.mark.parametrize("name", MX_PROBABILITY_NAMES)
def test_mxnet_public_names_import(name):
    obj = getattr(mgp, name)
    assert not isinstance(obj, types.ModuleType)
    home = mgp.transformation if hasattr(mgp.transformation, name) else (
        mgp.block if hasattr(mgp.block, name) else mgp.distributions)
    assert getattr(home, name) is obj


def test_constraint_from_public_path_drives_transformations():
    # biject_to looks constraints up by class: the re-exported class must be the one it knows.
    to_positive = mgp.biject_to(public_constraint.Positive())
    assert isinstance(to_positive, mgp.ExpTransform)
    value = to_positive(mgp.Normal(0.0, 1.0).sample((3,)))
    assert (value.asnumpy() > 0).all()
    assert public_utils.prob2logit(0.5) == pytest.approx(0.0)
    assert public_utils.logit2prob(0.0) == pytest.approx(0.5)
