"""A database keeps a set-up DuckDB connection ready for its next session (duckdb_spares)."""

from __future__ import annotations

import pytest

pytest.importorskip("duckdb")

from pgbarrier.backends import duckdb_spares  # noqa: E402
from pgbarrier.backends.duckdb import STREAM_AHEAD  # noqa: E402


def _first_statement(dev_backend, user="root"):
    s = dev_backend.connect("dev", user)
    s.execute("SELECT 1")
    return s


def test_the_next_session_takes_a_spare_made_ahead_and_is_set_up_as_its_own(dev_backend):
    spares = dev_backend._spares["dev"]
    one = _first_statement(dev_backend)  # none ready yet: it opens its own, one is made
    assert spares.settled(30) and spares.ready == 1
    assert one._raw_cursor not in spares._ready
    spare = spares._ready[0]
    two = _first_statement(dev_backend, user="alice")
    assert two._raw_cursor is spare  # taken
    assert spares.settled(30) and spares.ready == 1 and spares._ready[0] is not spare
    # the spare's set-up is the session's: pgbarrier's version(), the path shadows, jsonb;
    # the user is the session's own
    assert "pgbarrier" in list(two.execute("SELECT version()").rows())[0][0]
    for session in (one, two):
        cur = session._raw_cursor
        assert cur.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE database_name = 'temp' AND "
            "function_name IN ('version', 'duckdb_settings', 'duckdb_databases', "
            "'duckdb_temporary_files')").fetchone() == (4,)
        assert cur.execute("SELECT count(*) FROM duckdb_types() WHERE database_name = 'temp' "
                           "AND type_name = 'jsonb'").fetchone() == (1,)
        # a streaming result is computed STREAM_AHEAD ahead, not DuckDB's 10 MiB
        assert cur.execute("SELECT current_setting('streaming_buffer_size')").fetchone() \
            == ("2.0 MiB",) and STREAM_AHEAD == "2MiB"
    assert list(two.execute("SELECT current_user").rows()) == [("alice",)]
    assert list(one.execute("SELECT current_user").rows()) == [("root",)]
    one.close()
    two.close()


def test_a_setting_of_the_session_is_applied_to_the_spare_it_takes(dev_backend):
    from pgbarrier.sql.startup_params import StartupSettings

    _first_statement(dev_backend).close()
    assert dev_backend._spares["dev"].settled(30) and dev_backend._spares["dev"].ready == 1
    s = dev_backend.connect("dev", "root")
    s.apply_startup(StartupSettings({"timezone": ("TimeZone", "Asia/Tokyo")}))
    assert list(s.execute("SELECT current_setting('TimeZone')").rows()) == [("Asia/Tokyo",)]
    s.close()


def test_spares_are_bounded_over_the_process(dev_backend, monkeypatch):
    monkeypatch.setattr(duckdb_spares, "TOTAL", 0)
    _first_statement(dev_backend).close()
    spares = dev_backend._spares["dev"]
    assert spares.settled(30) and spares.ready == 0
    _first_statement(dev_backend).close()  # opens its own, as before
    assert spares.settled(30) and spares.ready == 0


def test_dropping_the_database_closes_its_spares(dev_backend):
    _first_statement(dev_backend).close()
    spares = dev_backend._spares["dev"]
    assert spares.settled(30) and spares.ready == 1
    dev_backend.drop_database("dev")
    assert spares.ready == 0 and "dev" not in dev_backend._spares
    assert spares.take() is None and spares.settled(30) and spares.ready == 0
