"""startup_params: ``options`` read as PostgreSQL's pg_split_opts/process_postgres_switches."""

from __future__ import annotations

import pytest

from pgbarrier.errors import PgError
from pgbarrier.sql.startup_params import options_text, split_options, startup_settings


def test_split_options_follows_pg_split_opts():
    assert split_options(r"  -c a=b\ c   -c\ x  d\\e ") == ["-c", "a=b c", "-c x", "d\\e"]
    assert split_options("") == []


def test_options_text_is_read_back_as_written():
    settings = [("search_path", '"$user", public'), ("application_name", "a\\b")]
    text = options_text(settings, ("-e",))
    assert split_options(text) == ["-e", "-c", 'search_path="$user", public', "-c",
                                   "application_name=a\\b"]


def test_settings_from_options_then_explicit_parameters_later_wins():
    s = startup_settings({"user": "u", "database": "d", "TimeZone": "UTC",
                          "options": "-c timezone=Asia/Tokyo -cstatement_timeout=5 "
                                     "--lock-timeout=2s -B 8 -e"})
    assert s.get("TimeZone") == "UTC"
    assert s.get("statement_timeout") == "5"
    assert s.get("lock_timeout") == "2s"  # dashes in a --name read as underscores
    assert s.switches == ("-B", "8", "-e")
    assert "user" not in s.values and "options" not in s.values


@pytest.mark.parametrize("options, sqlstate, message", [
    ("-c search_path", "42601", "-c search_path requires a value"),
    ("--search_path", "42601", "--search_path requires a value"),
    ("-c no_such=1", "42704", 'unrecognized configuration parameter "no_such"'),
])
def test_bad_options_are_postgresqls_fatal(options, sqlstate, message):
    with pytest.raises(PgError) as err:
        startup_settings({"user": "u", "options": options})
    assert (err.value.sqlstate, err.value.severity, err.value.message) == \
        (sqlstate, "FATAL", message)


def test_pgbarrier_settings_and_custom_names_are_accepted():
    s = startup_settings({"batch_refresh_when_paused": "wait", "my.custom": "1"})
    assert s.get("batch_refresh_when_paused") == "wait" and s.get("my.custom") == "1"
