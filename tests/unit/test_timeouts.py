"""statement_timeout and the idle timeouts: PostgreSQL's parsing, and the timer thread."""


def test_timeouts_follow_postgres_integer_with_unit_rules():
    import pytest

    from pgbarrier.errors import InvalidParameterValue
    from pgbarrier.session.settings import parse_timeout_ms

    assert parse_timeout_ms("1.5s") == 1500
    assert parse_timeout_ms("10 min") == 600_000
    assert parse_timeout_ms("100us") == 0
    assert parse_timeout_ms("2147483647") == 2**31 - 1
    for value, message, hint in [
        ("2147483648", 'invalid value for parameter "statement_timeout": "2147483648"',
         "Value exceeds integer range."),
        ("9999999999999d", 'invalid value for parameter "statement_timeout": "9999999999999d"',
         "Value exceeds integer range."),
        ("-1", '-1 ms is outside the valid range for parameter "statement_timeout" '
               "(0 .. 2147483647)", None),
        ("abc", 'invalid value for parameter "statement_timeout": "abc"', None),
    ]:
        with pytest.raises(InvalidParameterValue) as info:
            parse_timeout_ms(value)
        assert (info.value.message, info.value.hint) == (message, hint)


def test_a_far_deadline_does_not_stop_the_timer_thread():
    import threading

    from pgbarrier.session.timeouts import Timers

    timers = Timers()
    fired = threading.Event()
    far = timers.arm(1e12, lambda: None)  # beyond what the platform can wait for at once
    timers.arm(0.01, fired.set)
    assert fired.wait(10), "a near deadline behind a far one never fired"
    far.disarm()
