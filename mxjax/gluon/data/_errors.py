"""The error type for misuse that MXNet's gluon.data reports with ``assert``.

MXNet raises a bare ``AssertionError`` there (and the check vanishes under ``python -O``); here the
check always runs and the error is both an ``MXNetError`` and an ``AssertionError``, so code written
against either keeps catching it.
"""
from __future__ import annotations

from ...base import MXNetError


class DataUsageError(MXNetError, AssertionError):
    """Bad arguments to a gluon.data class, catchable as ``AssertionError`` as in MXNet."""


def require(ok: bool, message: str) -> None:
    """Raise ``DataUsageError(message)`` unless ``ok``."""
    if not ok:
        raise DataUsageError(message)
