"""``python -m mxjax.diagnose`` (issue 22): sections, versions, engine and environment.

Oracles: ``importlib.metadata`` for versions, ``platform``/``os`` for the host, the
subprocess's own environment, and the package source (AST) for the variables mxjax reads.
"""
from __future__ import annotations

import ast
import os
import pathlib
import platform
import re
import subprocess
import sys
from importlib import metadata

import pytest

from mxjax import diagnose

_ROOT = pathlib.Path(__file__).resolve().parents[1]
_HEADINGS = {"python": "Python Info", "pip": "Pip Info", "mxnet": "MXNet Info",
             "os": "System Info", "hardware": "Hardware Info"}


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **env}
    return subprocess.run([sys.executable, "-m", "mxjax.diagnose", *args], cwd=_ROOT, env=full_env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report() -> str:
    proc = _run(MXNET_ENGINE_TYPE="NaiveEngine", MXNET_COMPILE_CACHE_SIZE="77",
                MXNET_NOT_AN_MXJAX_SETTING="abc")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def _field(text: str, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}:\s+(.*)$", text, re.MULTILINE)
    assert match, f"{name!r} missing from:\n{text}"
    return match.group(1).strip()


def test_every_section_present(report):
    for title in _HEADINGS.values():
        assert f"----------{title}----------" in report


def test_versions_match_installed(report):
    for dist in ("mxjax", "jax", "jaxlib", "numpy", "optax", "flax"):
        try:
            expected = metadata.version(dist)
        except metadata.PackageNotFoundError:
            expected = "not installed"
        assert _field(report, dist) == expected
    assert _field(report, "Version") == platform.python_version()  # the Python section comes first


def test_platform_and_hardware(report):
    assert _field(report, "System") == platform.system()
    assert _field(report, "Machine") == platform.machine()
    assert _field(report, "CPU count") == str(os.cpu_count())


def test_jax_engine_and_features(report):
    import jax

    import mxjax as mx

    assert re.search(rf"^\s+default backend\s+{jax.default_backend()}$", report, re.MULTILINE)
    # the environment chose the engine in the subprocess
    assert re.search(r"^\s+type\s+NaiveEngine \(MXNET_ENGINE_TYPE=NaiveEngine\)", report, re.MULTILINE)
    assert "imperative bulk enabled=True max_nodes=64 compile_after=2" in report
    assert "at most 77 programs" in report
    from mxjax.graph import bulk
    recorder = "C (graph/_record.c)" if bulk.record is not bulk.record_python else "Python"
    assert re.search(rf"^\s+bulk recorder\s+{re.escape(recorder)}", report, re.MULTILINE)
    assert re.search(r"^\s+XLA:CPU dispatch synchronous", report, re.MULTILINE)  # NaiveEngine at import
    # pytest turns faulthandler on in this process, not in the subprocess
    enabled = [f.name for f in mx.runtime.Features().values() if f.enabled and f.name != "SIGNAL_HANDLER"]
    assert re.search(r"^Features enabled: (.*)$", report, re.MULTILINE).group(1).split() == enabled


def test_environment_values(report):
    assert "  MXNET_ENGINE_TYPE=NaiveEngine\n" in report
    assert "  MXNET_COMPILE_CACHE_SIZE=77\n" in report
    if "MXNET_TRACE_VALUE_READ" not in os.environ:
        assert "  MXNET_TRACE_VALUE_READ=(unset)\n" in report
    assert "set but not read by mxjax:" in report and "MXNET_NOT_AN_MXJAX_SETTING=abc" in report


def test_sections_chosen_by_flags():
    proc = _run("--python", "0", "--mxnet", "0", "--hardware", "0")
    assert proc.returncode == 0, proc.stderr
    shown = {flag for flag, title in _HEADINGS.items() if f"----------{title}----------" in proc.stdout}
    assert shown == {"pip", "os"}


def test_bad_flag_value_is_a_usage_error():
    proc = _run("--os", "2")
    assert proc.returncode == 2 and "invalid choice: 2" in proc.stderr


def test_main_in_process(capsys):
    assert diagnose.main(["--python", "0", "--mxnet", "0", "--os", "0", "--hardware", "0"]) == 0
    assert capsys.readouterr().out.startswith("----------Pip Info----------\nmxjax:")


def _env_names_in_source() -> set[str]:
    """Every string literal in mxjax/ that is exactly an MXNET_* name (how os.environ is read),
    except ``__all__`` entries (module attributes such as MXNET_VERSION, not variables)."""
    names = set()
    for path in (_ROOT / "mxjax").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        exported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                exported.update(id(c) for c in ast.walk(node.value))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in exported
                    and re.fullmatch(r"MXNET_[A-Z0-9_]+", node.value)):
                names.add(node.value)
    return names


def test_env_list_covers_every_variable_the_package_reads():
    found = _env_names_in_source()
    assert {"MXNET_ENGINE_TYPE", "MXNET_COMPILE_CACHE_SIZE", "MXNET_HOME"} <= found  # the scan works
    listed = {name for name in diagnose.ENV_VARS if name.startswith("MXNET_")}
    assert found - listed == set(), "add these to diagnose.ENV_VARS"
    assert listed - found == set(), "diagnose.ENV_VARS lists names mxjax no longer reads"
