"""The one place Taskloom errors become MCP errors, and the logging of expected errors."""

from __future__ import annotations

import logging
import sys

from pydantic import BaseModel, Field, ValidationError

from taskloom.server.errors import _ExpectedErrorFilter, _taskloom_cause
from taskloom.tools.errors import DocumentError, InputError


def _record(exc: BaseException) -> logging.LogRecord:
    try:
        raise RuntimeError("Error calling tool 'x'") from exc
    except RuntimeError:
        info = sys.exc_info()
    return logging.LogRecord("fastmcp.server.server", logging.ERROR, __file__, 1, "Error calling tool %r", ("x",), info)


def test_expected_error_is_logged_as_one_warning_line() -> None:
    record = _record(DocumentError("x.pdf is encrypted; decrypt it first"))
    assert _ExpectedErrorFilter().filter(record)
    assert record.exc_info is None
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "Error calling tool 'x': x.pdf is encrypted; decrypt it first"


def test_unexpected_error_keeps_its_traceback() -> None:
    record = _record(KeyError("boom"))
    assert _ExpectedErrorFilter().filter(record)
    assert record.exc_info is not None and record.levelno == logging.ERROR


def test_validation_error_inside_a_tool_becomes_input_error() -> None:
    class Spec(BaseModel):
        seed: int = Field(ge=0)

    try:
        Spec(seed=-1)
    except ValidationError as exc:
        cause = _taskloom_cause(exc)
    assert isinstance(cause, InputError)
    assert "seed" in str(cause) and "greater than or equal to 0" in str(cause)
