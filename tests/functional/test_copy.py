"""COPY FROM STDIN / TO STDOUT through real clients, on DuckDB and compared with PostgreSQL.

Each test runs against the embedded DuckDB backend and, where PostgreSQL 15 is reachable,
against an upstream PostgreSQL (whose COPY is PostgreSQL's own, relayed): the bytes COPY
TO writes, the rows COPY FROM loads and the errors (SQLSTATE, message, CONTEXT) must be
the same on both. psql's ``\\copy`` reads and writes real temp files; psycopg's
``cursor.copy()`` runs text, CSV and binary both ways, by rows and by raw blocks. A server
process of its own shows that DuckDB never writes to the server's stdout.
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import READY, compile_java, inprocess_app, postgres_dsn

COLUMNS = "a int, b text, c date, d boolean, e numeric(6,2), f bytea, g float8"
#: one data set in PostgreSQL's text format: escapes, NULLs, an empty string, bytea
TEXT_DATA = (
    "1\ta\\tb\\\\c\\nd\t2020-01-02\tt\t1.50\t\\\\x0102ff\t1.5\n"
    "\\N\t\t\\N\tf\t\\N\t\\N\t-0.25\n"
    "3\tx\\by\\fz\\101\\x42\t2021-12-31\tfalse\t-2\t\\\\x\t1e+20\n"
)


def _pg_reachable() -> bool:
    try:
        with psycopg.connect(postgres_dsn(), connect_timeout=5):
            return True
    except psycopg.OperationalError:
        return False


@dataclass
class Srv:
    kind: str
    port: int
    database: str

    def connect(self, **kw) -> psycopg.Connection:
        kw.setdefault("autocommit", True)
        return psycopg.connect(host="127.0.0.1", port=self.port, user="root",
                               dbname=self.database, **kw)

    def psql(self, *args: str, input: str | None = None, cwd: str | None = None
             ) -> subprocess.CompletedProcess[str]:
        cmd = ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "root",
               "-d", self.database, "-v", "VERBOSITY=verbose", *args]
        return subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=60,
                              cwd=cwd, env={**os.environ, "PGCONNECT_TIMEOUT": "10"})


KINDS = ["duckdb"] + (["postgres"] if _pg_reachable() or os.environ.get("CI") == "true" else [])


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Srv]]:
    from contextlib import ExitStack

    with ExitStack() as stack:
        out = {}
        for kind in KINDS:
            database = f"cp_{uuid.uuid4().hex[:8]}"
            app = stack.enter_context(inprocess_app(kind, database))
            out[kind] = Srv(kind, app.server.port, database)
        yield out


def _t() -> str:
    return f"t_{uuid.uuid4().hex[:6]}"


def each(servers: dict[str, Srv], fn):
    """``fn(srv)`` on every backend; the answers, by backend, must all be equal."""
    answers = {kind: fn(srv) for kind, srv in servers.items()}
    first = answers["duckdb"]
    for kind, answer in answers.items():
        assert answer == first, f"{kind} differs from duckdb:\n{answer!r}\n{first!r}"
    return first


def _load_text(conn: psycopg.Connection, t: str) -> None:
    conn.execute(f"CREATE TABLE {t} ({COLUMNS})")
    with conn.cursor().copy(f"COPY {t} FROM STDIN") as cp:
        cp.write(TEXT_DATA.encode())


# --------------------------------------------------------------------------- psycopg


def test_text_round_trip_is_postgresqls(servers):
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            _load_text(c, t)
            rows = c.execute(f"SELECT * FROM {t} ORDER BY a NULLS LAST").fetchall()
            with c.cursor().copy(f"COPY {t} TO STDOUT") as cp:
                text = b"".join(bytes(b) for b in cp)
        return rows, text

    rows, text = each(servers, run)
    assert rows[0][1] == "a\tb\\c\nd" and rows[0][5] == b"\x01\x02\xff"
    assert rows[1][1] == "x\by\fzAB" and rows[1][5] == b""
    lines = TEXT_DATA.splitlines(keepends=True)
    assert text.decode() == lines[0] + lines[1] + \
        "3\tx\\by\\fzAB\t2021-12-31\tf\t-2.00\t\\\\x\t1e+20\n"


@pytest.mark.parametrize("schema", ["public", '"public"'])
def test_a_public_qualified_table_is_copied_both_ways(servers, schema):
    """pg_dump writes ``COPY public.t (...) FROM stdin``: public is the default schema."""
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a int, b text)")
            with c.cursor().copy(f"COPY {schema}.{t} (a, b) FROM STDIN") as cp:
                cp.write(b"1\tx\n2\t\\N\n")
            with c.cursor().copy(f"COPY {schema}.{t} TO STDOUT") as cp:
                return b"".join(bytes(b) for b in cp)

    assert each(servers, run) == b"1\tx\n2\t\\N\n"


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo"])
def test_copy_to_prints_values_as_a_select_prints_them(servers, zone):
    """Each backend's COPY text is its own SELECT's text, TimeZone included."""
    query = ("SELECT 1.5::float8, 2::numeric(4,2), true, DATE '2024-02-29', "
             "TIMESTAMP '2024-01-02 03:04:05.5', TIMESTAMPTZ '2024-01-02 03:04:05+00', "
             "INTERVAL '1 day 2 hours', 'x'::text, NULL::int")
    for srv in servers.values():
        sel = srv.psql("-At", "-F", "\t", "-P", "null=\\N", "-c", f"SET TimeZone = '{zone}'",
                       "-c", query)
        cp = srv.psql("-At", "-c", f"SET TimeZone = '{zone}'",
                      "-c", f"COPY ({query}) TO STDOUT")
        assert sel.returncode == cp.returncode == 0, (sel.stderr, cp.stderr)
        assert cp.stdout.splitlines()[-1] == sel.stdout.splitlines()[-1]


def test_csv_both_ways_with_header_quotes_and_force_quote(servers):
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            _load_text(c, t)
            outs = []
            for opts in ["FORMAT csv, HEADER", "FORMAT csv, FORCE_QUOTE *",
                         "FORMAT csv, DELIMITER ';', NULL 'NULL', QUOTE '''', FORCE_QUOTE (b)"]:
                with c.cursor().copy(f"COPY (SELECT * FROM {t} ORDER BY a) TO STDOUT ({opts})"
                                     ) as cp:
                    outs.append(b"".join(bytes(b) for b in cp).decode())
            u = _t()
            c.execute(f"CREATE TABLE {u} ({COLUMNS})")
            with c.cursor().copy(f"COPY {u} FROM STDIN WITH CSV HEADER") as cp:
                cp.write(outs[0].encode())
            back = c.execute(f"SELECT * FROM {u} ORDER BY a").fetchall()
            assert back == c.execute(f"SELECT * FROM {t} ORDER BY a").fetchall()
        return outs

    outs = each(servers, run)
    assert outs[0].splitlines()[0] == "a,b,c,d,e,f,g"
    assert '"a\tb\\c\nd"' in outs[0]


@pytest.mark.parametrize("opts, data", [
    ("FORMAT csv, FORCE_NOT_NULL (b), FORCE_NULL (c)", b'1,,""\n2,"",x\n'),
    ("FORMAT csv, NULL 'x', DELIMITER ';', QUOTE '''', ESCAPE '\\'", b"1;'a;\\'b';x\n"),
    ("FORMAT csv, HEADER match", b"a,b,c\n1,2,3\n"),
    ("FORMAT csv, HEADER match", b"a,c,b\n1,2,3\n"),
    ("FORMAT csv, HEADER", b"whatever\n1,2,3\n"),
    ("FORMAT text, HEADER match", b"a\tb\tc\n1\t2\t3\n"),
    ("DELIMITER ',', NULL ''", b"1,,\\N\n"),
    ("FORMAT csv", b'1,"a""b",c\r\n2,"x\r\ny",z\r\n'),
])
def test_copy_from_options_as_postgresql(servers, opts, data):
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a int, b text, c text)")
            try:
                with c.cursor().copy(f"COPY {t} FROM STDIN ({opts})") as cp:
                    cp.write(data)
            except psycopg.Error as exc:
                return exc.diag.sqlstate, exc.diag.message_primary
            return c.execute(f"SELECT * FROM {t} ORDER BY a").fetchall()

    each(servers, run)


def test_write_row_read_row_and_binary(servers):
    def run(srv: Srv):
        t = _t()
        got = []
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (id int, name text, score float8, day date)")
            import datetime as dt
            with c.cursor().copy(f"COPY {t} (id, name, day) FROM STDIN") as cp:
                for i in range(2500):
                    cp.write_row((i, None if i % 7 == 0 else f"n{i}\t,", dt.date(2024, 1, 1)))
            for fmt in ["", " (FORMAT binary)"]:
                cur = c.cursor()
                with cur.copy(f"COPY (SELECT id, name, day FROM {t} ORDER BY id) TO STDOUT"
                              f"{fmt}") as cp:
                    if fmt:
                        cp.set_types(["int4", "text", "date"])
                    got.append(list(cp.rows()))
            u = _t()
            c.execute(f"CREATE TABLE {u} (id int, name text, day date)")
            with c.cursor().copy(f"COPY {u} FROM STDIN (FORMAT binary)") as cp:
                cp.set_types(["int4", "text", "date"])
                for row in got[1]:
                    cp.write_row(row)
            back = c.execute(f"SELECT count(*), count(name), min(day) FROM {u}").fetchone()
        return got[0][:3], got[1][:3], back

    text_rows, bin_rows, back = each(servers, run)
    assert text_rows[0] == ("0", None, "2024-01-01") and text_rows[1][1] == "n1\t,"
    assert bin_rows[1][1] == "n1\t," and back[0] == 2500 and back[1] == 2500 - 358


TYPED_COLUMNS = ("a timestamptz, b numeric(10,3), c int[], d text[], e bytea, f uuid, "
                 "g interval, h float8, i bool, k timestamp, l time, m smallint, n bigint, "
                 "o real")
TYPED_ROW = (dt.datetime(2024, 1, 2, 3, 4, 5, 123000, tzinfo=dt.timezone.utc),
             decimal.Decimal("-12.500"), [1, None, 3], ["a b", 'q"', "x,y", None], b"\x00\xff",
             uuid.UUID(int=5), dt.timedelta(days=1, seconds=5), float("inf"), False,
             dt.datetime(2020, 2, 29, 1, 2, 3), dt.time(4, 5, 6), -3, 2**40, 1.25)
TYPE_NAMES = ["timestamptz", "numeric", "int4[]", "text[]", "bytea", "uuid", "interval",
              "float8", "bool", "timestamp", "time", "int2", "int8", "float4"]


@pytest.mark.parametrize("fmt", ["text", "csv", "binary"])
def test_every_common_type_both_ways(servers, fmt):
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} ({TYPED_COLUMNS})")
            with c.cursor().copy(f"COPY {t} FROM STDIN (FORMAT {fmt})") as cp:
                if fmt == "binary":
                    cp.set_types(TYPE_NAMES)
                    cp.write_row(TYPED_ROW)
                else:
                    cp.write_row(TYPED_ROW) if fmt == "text" else cp.write(
                        b'2024-01-02 03:04:05+00,1,"{1,2}","{""a b"",c}",\\x01,'
                        b"00000000-0000-0000-0000-000000000001,1 day,NaN,yes,2020-01-01,"
                        b"00:00:01,1,2,-Infinity\n")
            rows = c.execute(f"SELECT * FROM {t}").fetchall()
            with c.cursor().copy(f"COPY {t} TO STDOUT (FORMAT {fmt})") as cp:
                if fmt == "binary":
                    cp.set_types(TYPE_NAMES)
                    out = list(cp.rows())
                else:
                    out = b"".join(bytes(b) for b in cp)
        return [tuple(str(v) for v in r) for r in rows], out

    rows, out = each(servers, run)
    if fmt != "csv":
        assert rows == [tuple(str(v) for v in TYPED_ROW)]


def test_copy_via_extended_protocol_and_in_a_transaction(servers):
    def run(srv: Srv):
        t = _t()
        with srv.connect(autocommit=False) as c:
            c.execute(f"CREATE TABLE {t} (a int, b text)")
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                cp.write(b"1\tx\n2\ty\n")
            mid = c.execute(f"SELECT count(*) FROM {t}").fetchone()
            c.rollback()
            c.execute(f"CREATE TABLE {t} (a int, b text)")
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                cp.write(b"3\tz\n")
            c.commit()
            with c.cursor().copy(f"COPY {t} TO STDOUT") as cp:
                out = b"".join(bytes(x) for x in cp)
            c.commit()
        return mid, out

    assert each(servers, run) == ((2,), b"3\tz\n")


@pytest.mark.parametrize("data, code", [
    (b"1\tx\n2\tnope\n", "22P02"),
    (b"1\tx\n99999999999\ty\n", "22003"),
    (b"1.5\tx\n", "22P02"),
    (b"1\tx\textra\n", "22P04"),
    (b"1\n", "22P04"),
])
def test_bad_data_is_postgresqls_error_and_loads_nothing(servers, data, code):
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a int, b int)")
            c.execute(f"INSERT INTO {t} VALUES (0, 0)")
            with pytest.raises(psycopg.Error) as info:
                with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                    cp.write(data.replace(b"x", b"7").replace(b"y", b"8"))
            diag = info.value.diag
            answer = (diag.sqlstate, diag.message_primary, diag.context.replace(t, "T"))
            assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (1,)
            # and inside a transaction block: the block fails, its rollback undoes all
            c.execute("BEGIN")
            with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                cp.write(b"5\t5\n")
            with pytest.raises(psycopg.Error):
                with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                    cp.write(data.replace(b"x", b"7").replace(b"y", b"8"))
            with pytest.raises(pgerr.InFailedSqlTransaction):
                c.execute("SELECT 1")
            c.execute("ROLLBACK")
            assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (1,)
        return answer

    state, message, context = each(servers, run)
    assert state == code
    assert context.startswith("COPY T, line ")


_COPY_FAIL = """
import sys
from psycopg import pq
port, db, sql = sys.argv[1:]
pg = pq.PGconn.connect(f"host=127.0.0.1 port={port} user=root dbname={db}".encode())
pg.send_query(sql.encode())
assert pg.get_result().status == pq.ExecStatus.COPY_IN
pg.put_copy_data(b"2\\n")
pg.put_copy_end(b"client gave up")
res = pg.get_result()
assert pg.get_result() is None
print(res.error_field(pq.DiagnosticField.SQLSTATE).decode(),
      res.error_field(pq.DiagnosticField.MESSAGE_PRIMARY).decode(), sep="|", end="")
"""


def test_bad_row_after_whole_batches_were_loaded_leaves_the_table_unchanged(servers):
    """More rows than one load batch (duckdb_copy.BATCH_ROWS) before the bad one."""
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a int)")
            with pytest.raises(pgerr.InvalidTextRepresentation) as info:
                with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                    cp.write("".join(f"{i}\n" for i in range(45_000)) + "oops\n")
            return info.value.diag.context.replace(t, "T"), \
                c.execute(f"SELECT count(*) FROM {t}").fetchone()

    assert each(servers, run) == ('COPY T, line 45001, column a: "oops"', (0,))


def test_copy_fail_and_unknown_names(servers):
    def run(srv: Srv):
        t = _t()
        answers = []
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a int)")
            with pytest.raises(RuntimeError):  # psycopg sends CopyFail
                with c.cursor().copy(f"COPY {t} FROM STDIN") as cp:
                    cp.write(b"1\n")
                    raise RuntimeError("client gave up")
            # libpq's own CopyFail, to read the server's answer to it (in a process of its
            # own: libpq's blocking calls hold the GIL the in-process server needs)
            res = subprocess.run([sys.executable, "-c", _COPY_FAIL, str(srv.port), srv.database,
                                  f"COPY {t} FROM STDIN"], capture_output=True, text=True,
                                 timeout=60)
            assert res.returncode == 0, res.stderr
            answers.append(tuple(res.stdout.split("|")))
            for sql in [f"COPY {t} (nope) FROM STDIN", "COPY no_such_table FROM STDIN"]:
                with pytest.raises(psycopg.Error) as info:
                    with c.cursor().copy(sql):
                        pass
                answers.append((info.value.diag.sqlstate,
                                info.value.diag.message_primary.replace(t, "T")))
            assert c.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
        return answers

    answers = each(servers, run)
    assert [a[0] for a in answers] == ["57014", "42703", "42P01"]
    assert answers[0][1] == "COPY from stdin failed: client gave up"


def test_program_and_server_files_are_refused_as_for_a_non_superuser(servers, tmp_path):
    """(DuckDB only: the upstream test user is PostgreSQL's superuser, who may.)"""
    with servers["duckdb"].connect() as c:
        c.execute("CREATE TABLE IF NOT EXISTS prog (a int)")
        for sql in ["COPY prog FROM PROGRAM 'id'", "COPY prog TO PROGRAM 'cat > /tmp/x'"]:
            with pytest.raises(pgerr.InsufficientPrivilege) as info:
                c.execute(sql)
            assert info.value.diag.message_primary == (
                "must be superuser or have privileges of the pg_execute_server_program role "
                "to COPY to or from an external program")
            assert info.value.diag.message_hint.startswith("Anyone can COPY to stdout")
        with pytest.raises(pgerr.InsufficientPrivilege):
            c.execute(f"COPY prog TO '{tmp_path}/out.csv'")
        assert not (tmp_path / "out.csv").exists()


_EXTENDED = """
import sys
from psycopg import pq
port, db, t = sys.argv[1:]
pg = pq.PGconn.connect(f"host=127.0.0.1 port={port} user=root dbname={db}".encode())
out = []
def run(sql, data=None, fail=None):
    pg.send_query_params(sql.encode(), None)  # Parse/Bind/Describe/Execute/Sync
    res = pg.get_result()
    if res.status == pq.ExecStatus.COPY_IN:
        pg.put_copy_data(data)
        pg.put_copy_end(fail)
        res = pg.get_result()
    elif res.status == pq.ExecStatus.COPY_OUT:
        while True:
            n, row = pg.get_copy_data(0)
            if n < 0:
                break
            out.append(bytes(row).decode())
        res = pg.get_result()
    assert pg.get_result() is None
    err = res.error_field(pq.DiagnosticField.SQLSTATE)
    out.append(err.decode() if err else res.command_status.decode())
run(f"COPY {t} FROM STDIN (FORMAT csv)", b"1,a\\n2,b\\n")
run(f"COPY {t} FROM STDIN (FORMAT csv)", b"3,c\\nx,d\\n")
run(f"COPY {t} FROM STDIN", b"4\\td\\n", b"stop")
run("BEGIN")
run(f"COPY {t} FROM STDIN", b"5\\te\\n")
run("ROLLBACK")
run(f"COPY (SELECT * FROM {t} ORDER BY a) TO STDOUT (FORMAT csv)")
print("|".join(out), end="")
"""


def test_copy_through_the_extended_protocol(servers):
    """libpq's PQsendQueryParams: COPY in Parse/Bind/Execute, with the Sync libpq sends
    during COPY and the one after CopyDone; the implicit block's rollback on bad data.
    (DuckDB only: the upstream relay refuses an extended-protocol COPY FROM STDIN.)"""
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a int, b text)")
        res = subprocess.run([sys.executable, "-c", _EXTENDED, str(srv.port), srv.database, t],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        return res.stdout.split("|")

    assert run(servers["duckdb"]) == ["COPY 2", "22P02", "57014", "BEGIN", "COPY 1", "ROLLBACK",
                                  "1,a\n", "2,b\n", "COPY 2"]


def test_large_input_streams_in_many_copydata_messages(servers):
    def run(srv: Srv):
        t = _t()
        with srv.connect() as c:
            c.execute(f"CREATE TABLE {t} (a bigint, b text, c float8)")
            with c.cursor().copy(f"COPY {t} FROM STDIN (FORMAT csv)") as cp:
                for start in range(0, 120_000, 1000):
                    cp.write("".join(f"{i},\"r{i},x\",{i / 4}\n"
                                     for i in range(start, start + 1000)))
            return c.execute(f"SELECT count(*), sum(a), count(DISTINCT b), sum(c) FROM {t}"
                             ).fetchone()

    assert each(servers, run) == (120_000, 7_199_940_000, 120_000, 1_799_985_000.0)


def test_copy_to_in_a_multi_statement_query_and_copy_from_refused_there(servers):
    def run(srv: Srv):
        res = srv.psql("-c", "CREATE TABLE m (a int); INSERT INTO m VALUES (1), (2); "
                             "COPY m TO STDOUT; SELECT 3")
        return res.stdout, res.returncode

    out, code = each(servers, run)
    assert code == 0 and out.split()[:2] == ["1", "2"]


# --------------------------------------------------------------------------- psql


def test_psql_backslash_copy_to_and_from_files(servers, tmp_path):
    def run(srv: Srv):
        d = tmp_path / srv.kind
        d.mkdir()
        t, u = _t(), _t()
        with srv.connect() as c:
            _load_text(c, t)
            c.execute(f"CREATE TABLE {u} ({COLUMNS})")
        script = (f"\\copy (SELECT * FROM {t} ORDER BY a) TO 'out.csv' CSV HEADER\n"
                  f"\\copy {t} TO 'out.txt'\n"
                  f"\\copy {u} FROM 'out.csv' WITH (FORMAT csv, HEADER true)\n"
                  f"\\copy {u} FROM 'out.txt'\n"
                  f"SELECT count(*), count(DISTINCT b) FROM {u};\n")
        res = srv.psql("-v", "ON_ERROR_STOP=1", "-At", input=script, cwd=str(d))
        assert res.returncode == 0, res.stderr
        return (d / "out.csv").read_text(), (d / "out.txt").read_text(), res.stdout

    csv, txt, counts = each(servers, run)
    assert csv.startswith("a,b,c,d,e,f,g\n1,") and csv.count("\n") == 5  # a quoted newline
    assert txt.count("\n") == 3 and "a\\tb\\\\c\\nd" in txt
    assert counts.strip() == "6|3"


def test_psql_copy_from_stdin_inline_in_a_script(servers):
    def run(srv: Srv):
        t = _t()
        script = (f"CREATE TABLE {t} (a int, b text);\n"
                  f"COPY {t} FROM STDIN;\n1\tone\n2\t\\N\n\\.\n"
                  f"COPY {t} FROM STDIN WITH CSV;\n3,\"th,ree\"\n\\.\n"
                  f"SELECT * FROM {t} ORDER BY a;\n"
                  f"COPY {t} FROM STDIN;\n4\tfour\nbad\tx\n\\.\n"
                  f"SELECT count(*) FROM {t};\n")
        res = srv.psql("-At", input=script)
        return res.stdout, "".join(line for line in res.stderr.replace(t, "T").splitlines(True)
                                   if not line.startswith("LOCATION:"))

    out, err = each(servers, run)
    assert out.split() == ["1|one", "2|", "3|th,ree", "3"]
    assert 'invalid input syntax for type integer: "bad"' in err
    assert 'COPY T, line 2, column a: "bad"' in err


# --------------------------------------------------------------------------- asyncpg


def test_asyncpg_copy_records_source_and_out(servers):
    import asyncio
    import io

    import asyncpg

    async def go(srv: Srv):
        t = _t()
        c = await asyncpg.connect(host="127.0.0.1", port=srv.port, user="root",
                                  database=srv.database, ssl=False)
        try:
            await c.execute(f"CREATE TABLE {t} (a int, b text)")
            tags = [await c.copy_records_to_table(t, records=[(1, "x"), (2, None)]),
                    await c.copy_to_table(t, source=io.BytesIO(b"3\ty\n"), format="text")]
            buf = io.BytesIO()
            tags.append(await c.copy_from_table(t, output=buf, format="csv"))
            return tags, buf.getvalue()
        finally:
            await c.close()

    assert each(servers, lambda srv: asyncio.run(go(srv))) == (
        ["COPY 2", "COPY 1", "COPY 3"], b"1,x\n2,\n3,y\n")


# --------------------------------------------------------------------------- pgjdbc


def test_pgjdbc_copy_manager(servers, tmp_path_factory):
    classpath = compile_java(tmp_path_factory, "PgbarrierCopy.java")

    def run(srv: Srv):
        url = f"jdbc:postgresql://127.0.0.1:{srv.port}/{srv.database}?user=root&socketTimeout=60"
        res = subprocess.run(["java", "-cp", classpath, "PgbarrierCopy", url, _t()],
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        return res.stdout.splitlines()

    assert each(servers, run) == ["in: 3", "out: 1\tone|2\tt,wo|3\t\\N|", "bad: 22P02",
                                  "count: 3"]


# --------------------------------------------------------------------------- the server's stdout


def test_nothing_reaches_the_servers_stdout(tmp_path):
    stdout = tmp_path / "stdout"
    with open(stdout, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                                 "--data-dir", ":memory:"], stdout=sink,
                                stderr=subprocess.PIPE, text=True)
    try:
        port = None
        assert proc.stderr is not None
        for line in proc.stderr:
            m = READY.search(line)
            if m:
                port = int(m.group(2))
                break
        assert port is not None
        srv = Srv("duckdb", port, "dev")
        with srv.connect() as c:
            c.execute("CREATE TABLE s (a int)")
            with c.cursor().copy("COPY s FROM STDIN") as cp:
                cp.write(b"1\n2\n")
            for sql in ["COPY s TO STDOUT", "COPY (SELECT * FROM s) TO STDOUT (FORMAT csv)",
                        "COPY s TO STDOUT (FORMAT binary)"]:
                with c.cursor().copy(sql) as cp:
                    assert b"".join(bytes(b) for b in cp)
        res = srv.psql("-c", "\\copy s TO STDOUT")
        assert res.stdout.split() == ["1", "2"]
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    assert stdout.read_bytes() == b""
