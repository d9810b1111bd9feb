"""Column types for the dialect translation are read once per database, not per session.

A statement whose translation depends on a table's column types (a bare column's jsonb,
an array literal bound for an ``int[]`` column) asks the session for them; a new
connection's first such statement used to read DuckDB's catalog (some 3 ms a table), every
connection again. The database's own tables' types are now kept for every session of the
database while no DDL runs; a session that has temporary relations (asked once per schema
generation) reads its own.
"""

from __future__ import annotations


def _reads(session, monkeypatch) -> list[list[str]]:
    """The catalog reads ``session`` makes from here on (their table names)."""
    calls: list[list[str]] = []
    read = session._table_columns

    def counted(names, temporary=None):
        calls.append(list(names))
        return read(names, temporary)
    monkeypatch.setattr(session, "_table_columns", counted)
    return calls


def test_a_second_connection_does_not_read_the_catalog_again(dev_backend, monkeypatch):
    a = dev_backend.connect("dev", "root")
    a.execute("CREATE TABLE t (id int, doc jsonb, tags int[])")
    a.execute("""INSERT INTO t VALUES (1, '{"k": 1}', '{1,2}')""")
    sql = "SELECT doc, tags || 3 FROM t"
    first = a.execute(sql)
    expected = (first.columns, list(first.rows()))
    b = dev_backend.connect("dev", "root")
    reads = _reads(b, monkeypatch)
    again = b.execute(sql)
    assert (again.columns, list(again.rows())) == expected
    assert reads == []
    assert [c.type_oid for c in again.columns][0] == 3802  # jsonb, from the kept types
    a.close()
    b.close()


def _kept(dev_backend):
    """Session ``a`` made table ``t`` (an ``int[]`` column) and ran a statement whose
    translation needs its types, so they are kept for the database."""
    a = dev_backend.connect("dev", "root")
    a.execute("CREATE TABLE t (id int, tags int[])")
    a.execute("SELECT tags || 3 FROM t")
    return a


def test_ddl_anywhere_makes_every_session_read_again(dev_backend, monkeypatch):
    a = _kept(dev_backend)
    a.execute("ALTER TABLE t ADD COLUMN more int[]")
    b = dev_backend.connect("dev", "root")
    reads = _reads(b, monkeypatch)
    b.execute("SELECT more || 3 FROM t")
    assert reads == [["t"]], "the kept types were from before the DDL"
    a.close()
    b.close()


def test_a_session_with_temporary_relations_reads_its_own(dev_backend, monkeypatch):
    b = dev_backend.connect("dev", "root")
    b.execute("CREATE TEMP TABLE u (x text)")
    a = _kept(dev_backend)  # kept after b's DDL: at the generation b reads at
    reads = _reads(b, monkeypatch)
    b.execute("SELECT tags || 3 FROM t")
    assert reads == [["t"]]
    a.close()
    b.close()


def test_a_new_connection_does_not_look_for_temporary_relations(dev_backend, monkeypatch):
    """A session's new DuckDB connection has none: its first statement neither asks DuckDB
    for them (some 2 ms) nor reads the kept types again, until it makes one itself."""
    a = _kept(dev_backend)
    b = dev_backend.connect("dev", "root")
    asked: list[int] = []
    look = b._temp_relations
    monkeypatch.setattr(b, "_temp_relations", lambda: asked.append(1) or look())
    reads = _reads(b, monkeypatch)
    b.execute("SELECT tags || 3 FROM t")
    assert (asked, reads) == ([], [])
    b.execute("CREATE TEMP TABLE t (tags int[])")
    b.execute("SELECT tags || 3 FROM t")
    assert reads == [["t"]], "its own temporary t shadows the database's"
    assert b._has_temp_relations(b.catalog.generation) and asked
    a.close()
    b.close()
