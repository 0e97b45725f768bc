"""``mx.log``: ``get_logger``, a logger printing MXNet's glog-style lines (``I1125 19:40:01 pid file:func:line]``)."""
from __future__ import annotations

import logging
import warnings

__all__ = ["get_logger", "getLogger", "CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}


class _Formatter(logging.Formatter):
    """Colored one-letter level, date, pid and source position, then the message."""

    def __init__(self) -> None:
        super().__init__(datefmt="%m%d %H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno >= WARNING:
            color = "\x1b[31m"
        elif record.levelno >= INFO:
            color = "\x1b[32m"
        else:
            color = "\x1b[34m"
        label = _LABELS.get(record.levelno, "U")
        self._style._fmt = (f"{color}{label}%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]"
                            "\x1b[0m %(message)s")
        return super().format(record)


def get_logger(name: str | None = None, filename: str | None = None, filemode: str | None = None,
               level: int = WARNING) -> logging.Logger:
    """The logger ``name``; on first use a named logger gets a handler (``filename`` or stderr) and ``level``."""
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", None):
        logger._init_done = True  # type: ignore[attr-defined]
        if filename:
            handler: logging.Handler = logging.FileHandler(filename, filemode or "a")
        else:
            handler = logging.StreamHandler()
            handler.setFormatter(_Formatter())  # color codes only on the terminal, as in MXNet
        logger.addHandler(handler)
        logger.setLevel(level)
    return logger


def getLogger(name: str | None = None, filename: str | None = None, filemode: str | None = None,  # noqa: N802
              level: int = WARNING) -> logging.Logger:
    """Deprecated spelling of :func:`get_logger`."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.", DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)
