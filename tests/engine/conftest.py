"""Fixtures for the engine tests: every test runs on both engines."""
from __future__ import annotations

import pytest

from mxjax import engine

ENGINE_KINDS = ["NaiveEngine", "ThreadedEngine"]


@pytest.fixture(params=ENGINE_KINDS)
def eng(request):
    """The ``mxjax.engine`` module with the requested engine installed (2 workers)."""
    previous_kind = engine.engine_type()
    engine.set_engine(request.param, num_workers=2)
    try:
        yield engine
    finally:
        current = engine.get_engine()
        current.set_bulk_size(0)
        try:
            current.wait_for_all()
        except BaseException:   # a test that left failures behind must not leak them
            pass
        engine.set_engine(previous_kind)


@pytest.fixture
def threaded_only(eng):
    if eng.engine_type() != "ThreadedEngine":
        pytest.skip("needs the threaded engine")
    return eng
