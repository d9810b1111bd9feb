"""pgcatalog.origins.with_origins: a computed column is left as it is; a table's gets its fields."""

from __future__ import annotations

from pgbarrier.backends.pgcatalog.origins import ColumnOrigin, with_origins
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.column import Column


def test_computed_column_is_returned_unchanged():
    col = Column("?column?", pgt.INT4)
    [out] = with_origins([col], (ColumnOrigin(),))
    assert out is col


def test_table_column_gets_table_attnum_and_declared_type():
    col = Column("name", pgt.TEXT)
    [out] = with_origins([col], (ColumnOrigin(table_oid=16400, attnum=2, type_oid=pgt.VARCHAR,
                                              typmod=14),))
    assert out == Column("name", pgt.VARCHAR, 14, 16400, 2)


def test_origin_without_declared_type_still_sets_typmod_and_table():
    col = Column("x", pgt.NUMERIC, 5)
    [out] = with_origins([col], (ColumnOrigin(),))
    assert out == Column("x", pgt.NUMERIC, -1, 0, 0)  # the origin's -1 stands, as before
    [out] = with_origins([col], (ColumnOrigin(table_oid=7, attnum=1),))
    assert out == Column("x", pgt.NUMERIC, -1, 7, 1)
