"""mx.log: get_logger's handler, level and glog-style format."""
import logging

import pytest

from mxjax import log


def test_named_logger_gets_one_handler_and_level(tmp_path):
    path = tmp_path / "out.log"
    logger = log.get_logger("mxjax_test_file_logger", filename=str(path), level=log.INFO)
    assert log.get_logger("mxjax_test_file_logger") is logger and len(logger.handlers) == 1
    assert logger.level == logging.INFO
    logger.info("hello %d", 3)
    handler = logger.handlers[0]
    handler.flush()
    assert path.read_text() == "hello 3\n"
    logger.removeHandler(handler)
    handler.close()


def test_stream_logger_uses_mxnets_format():
    logger = log.get_logger("mxjax_test_stream_logger", level=log.DEBUG)
    formatter = logger.handlers[0].formatter
    record = logging.LogRecord("x", logging.WARNING, "/a/file.py", 7, "msg %s", ("here",), None, func="fn")
    text = formatter.format(record)
    assert text.startswith("\x1b[31mW") and text.endswith("/a/file.py:fn:7]\x1b[0m msg here")
    record.levelno = logging.INFO
    assert formatter.format(record).startswith("\x1b[32mI")


def test_root_logger_is_left_alone_and_getlogger_is_deprecated():
    root_handlers = list(logging.getLogger().handlers)
    assert log.get_logger() is logging.getLogger()
    assert logging.getLogger().handlers == root_handlers
    with pytest.warns(DeprecationWarning, match="getLogger is deprecated"):
        assert log.getLogger("mxjax_test_stream_logger") is logging.getLogger("mxjax_test_stream_logger")
