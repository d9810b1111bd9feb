"""Exceptions a client can cause are never XX000."""

from pgbarrier.errors import as_pg_error


def _deep(n: int) -> None:
    _deep(n + 1)


def test_recursion_is_stack_depth_limit_exceeded():
    try:
        _deep(0)
    except RecursionError as exc:
        err = as_pg_error(exc)
    assert err.sqlstate == "54001"
    assert err.message == "stack depth limit exceeded"


def test_other_exceptions_stay_internal():
    assert as_pg_error(ValueError("x")).sqlstate == "XX000"

