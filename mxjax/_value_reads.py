"""Reading an array's values while a hybridized block traces its ``forward``.

Tracing runs ``forward`` once per input signature and compiles the ops it
recorded.  Python that reads values on the way (``if x.sum() > 0``,
``int(n)``, ``x.asnumpy()``) is not recorded: the first call's value is baked
into the compiled program and later calls silently reuse it.  MXNet does the
same without a word; mxjax says so, naming the user's line, as JAX does for
its tracers.  ``MXNET_TRACE_VALUE_READ`` chooses: ``warn`` (default, a
``TracedValueWarning`` -- Python's warning filters apply), ``raise`` (a
``TracedValueError``) or ``ignore``.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from typing import Any, Iterator

from .base import MXNetError, MXNetValueError

__all__ = ["TracedValueError", "TracedValueWarning", "tracing", "check_read", "mode"]

_MODES = ("warn", "raise", "ignore")
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_tracing: contextvars.ContextVar = contextvars.ContextVar("mxjax_tracing_block", default=None)


class TracedValueError(MXNetError):
    """A hybridized block's ``forward`` read an array's values while being traced (``MXNET_TRACE_VALUE_READ=raise``)."""


class TracedValueWarning(UserWarning):
    """A hybridized block's ``forward`` read an array's values while being traced: later calls reuse them."""


def mode() -> str:
    """``MXNET_TRACE_VALUE_READ``: what a value read during tracing does (read at each read, so tests and
    services may change it at run time)."""
    chosen = os.environ.get("MXNET_TRACE_VALUE_READ", "warn").strip().lower() or "warn"
    if chosen not in _MODES:
        raise MXNetValueError(f"MXNET_TRACE_VALUE_READ={chosen!r}: expected one of {', '.join(_MODES)}")
    return chosen


@contextlib.contextmanager
def tracing(block_name: str) -> Iterator[None]:
    """Scope in which ``block_name``'s ``forward`` is being traced."""
    token = _tracing.set(block_name)
    try:
        yield
    finally:
        _tracing.reset(token)


def _reads_inputs(node: Any) -> bool:
    """Whether a recorded node depends on a graph input (a block's input or parameter), not only on
    constants."""
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.is_variable:
            if not current.attrs.get("__dc_unbound__"):
                return True
            continue
        stack.extend(source for source, _ in current.inputs)
    return False


def check_read(array: Any, how: str) -> None:
    """``array``'s values are being read by ``how`` (``asnumpy()``, ``bool()``...): warn or raise if a block
    is tracing and the array is part of its graph (an input, a parameter or computed from them)."""
    block = _tracing.get()
    entry = array._dc
    if block is None or entry is None or not _reads_inputs(entry.node):
        return  # not tracing, or computed from constants only (the same on every call)
    chosen = mode()
    if chosen == "ignore":
        return
    frame, depth = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, depth = frame.f_back, depth + 1
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "an unknown line"
    text = (f"{block}.forward reads the values of a traced array ({how}, shape {tuple(array.shape)}) at {where}: "
            "a hybridized block compiles the values of its first call into the program and reuses them on "
            "later calls; compute with array ops (np.where, npx.cond) instead, or run the block without "
            "hybridize()")
    if chosen == "raise":
        raise TracedValueError(text)
    warnings.warn(text, TracedValueWarning, stacklevel=depth + 1)
