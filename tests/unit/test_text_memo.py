"""sql.text_memo: the gates kept per text answer as their own function does, bounded."""

from __future__ import annotations

from pgbarrier.backends.duckdb_batches import _table_fits, _text_fits
from pgbarrier.backends.duckdb_dialect.gate import may_differ
from pgbarrier.backends.pgcatalog.rewrite import may_touch_catalog
from pgbarrier.sql import text_memo
from pgbarrier.sql.text_memo import by_text

TEXTS = ["SELECT 1", "select * from pg_class", "SELECT '{1}'::int[]", "SELECT x FROM t",
         "SELECT nextval('s') FROM t", "TABLE t", "TABLE pg_class", "SELECT to_char(now())",
         "SELECT 1 FROM information_schema.tables", "VALUES (1)", ""]


def test_kept_gates_answer_as_the_uncached_ones_twice():
    for gate in (may_touch_catalog, may_differ, _text_fits, _table_fits):
        for sql in TEXTS:
            first = gate(sql)
            assert first == gate.uncached(sql) == gate(sql), (gate, sql)


def test_answer_is_kept_and_bounded():
    calls: list[str] = []

    @by_text
    def upper(sql: str) -> str:
        calls.append(sql)
        return sql.upper()

    assert upper("a") == "A" and upper("a") == "A"
    assert calls == ["a"]  # the second came from the memo
    for i in range(text_memo.TEXTS + 10):
        upper(f"t{i}")
    assert upper.cache_info().currsize == text_memo.TEXTS  # least recently used dropped
    calls.clear()
    assert upper("a") == "A" and calls == ["a"]  # pushed out long ago: computed again


def test_long_texts_are_tested_every_time_and_not_kept():
    calls: list[int] = []

    @by_text
    def size(sql: str) -> int:
        calls.append(len(sql))
        return len(sql)

    long = "x" * (text_memo.LONGEST + 1)
    assert size(long) == size(long) == len(long)
    assert calls == [len(long)] * 2 and size.cache_info().currsize == 0
