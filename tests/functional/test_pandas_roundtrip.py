"""pandas round trips through SQLAlchemy on the DuckDB backend, compared with PostgreSQL.

``DataFrame.to_sql`` (row by row, ``method='multi'``, and a COPY ``method=`` callable as
pandas' documentation shows it, here on psycopg 3's ``cursor.copy``), then
``pd.read_sql_table`` (SQLAlchemy reflects the table from the catalog) and
``pd.read_sql_query``, with integers, floats, booleans, text, timestamps with and without
time zone, dates and NULLs in every column. The same runs against a fresh database of the
reference PostgreSQL (127.0.0.1:5432): the frames read back, their dtypes and the column
types ``to_sql`` created must be equal.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from conftest import fresh_postgres_database, start_server, stop_server

pd = pytest.importorskip("pandas")
sa = pytest.importorskip("sqlalchemy")


def _frame():
    return pd.DataFrame({
        "n": [1, 2, 3],
        "i": pd.array([10, None, -3], dtype="Int64"),
        "f": [1.5, None, -2.25],
        "b": pd.array([True, None, False], dtype="boolean"),
        "s": ["a", None, "c'd \"e\""],
        "ts": pd.to_datetime(["2024-01-02 03:04:05.123456", None, "1999-12-31 23:59:59.000000"]),
        "tz": pd.to_datetime(["2024-01-02 03:04:05+02:00", None, "2000-06-01 00:00:00+00:00"],
                             utc=True),
        "d": [dt.date(2024, 1, 2), None, dt.date(1970, 1, 1)],
    })


def copy_method(table, conn, keys, data_iter):
    """pandas' ``method=`` callable doing COPY FROM STDIN (psycopg 3's ``cursor.copy``)."""
    dbapi = conn.connection
    with dbapi.cursor() as cur:
        columns = ", ".join(f'"{k}"' for k in keys)
        name = f'"{table.schema}"."{table.name}"' if table.schema else f'"{table.name}"'
        with cur.copy(f"COPY {name} ({columns}) FROM STDIN") as copy:
            for row in data_iter:
                copy.write_row(row)


METHODS = {"rows": None, "multi": "multi", "copy": copy_method}


@pytest.fixture(scope="module")
def engines() -> Iterator[dict[str, object]]:
    srv = start_server()
    try:
        with fresh_postgres_database("pgb_pandas") as pg_dsn:
            out = {"duckdb": sa.create_engine(
                       f"postgresql+psycopg://root@{srv.host}:{srv.port}/dev"),
                   "postgres": sa.create_engine("postgresql+psycopg://" +
                                                pg_dsn.split("://", 1)[1])}
            try:
                yield out
            finally:
                for engine in out.values():
                    engine.dispose()
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def _round_trip(engine, method: str) -> dict[str, object]:
    table = f"t_{method}"
    _frame().to_sql(table, engine, schema="public", index=False, method=METHODS[method])
    read_table = pd.read_sql_table(table, engine, schema="public")
    query = pd.read_sql_query(f"SELECT * FROM public.{table} ORDER BY n", engine)
    typed = pd.read_sql_query(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'public' AND table_name = %(t)s ORDER BY ordinal_position",
        engine, params={"t": table})
    return {"table": read_table.sort_values("n").reset_index(drop=True), "query": query,
            "types": typed}


@pytest.mark.parametrize("method", list(METHODS))
def test_to_sql_and_back_as_postgres(engines, method):
    got = _round_trip(engines["duckdb"], method)
    expected = _round_trip(engines["postgres"], method)
    for key in ("table", "query", "types"):
        assert got[key].dtypes.to_dict() == expected[key].dtypes.to_dict(), key
        pd.testing.assert_frame_equal(got[key], expected[key])
    frame = got["query"]
    assert frame["s"].isna().tolist() == [False, True, False]
    assert str(frame["tz"].dtype).startswith("datetime64") and frame["tz"].dt.tz is not None


@pytest.mark.parametrize("sql", [
    "SELECT interval '1 month 2 days 03:04:05' AS i, 1 AS n",
    "SELECT 1.5::numeric(4,1) AS x, 'a'::varchar(3) AS v, "
    "timestamptz '2024-01-02 03:04:05+00' AS t, date '2024-02-29' AS d, NULL::integer AS z",
])
def test_read_sql_query_of_expressions_as_postgres(engines, sql):
    got = pd.read_sql_query(sql, engines["duckdb"])
    expected = pd.read_sql_query(sql, engines["postgres"])
    assert got.dtypes.to_dict() == expected.dtypes.to_dict()
    pd.testing.assert_frame_equal(got, expected)
