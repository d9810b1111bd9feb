"""``SELECT ... INTO [TEMP | UNLOGGED] [TABLE] name`` as the ``CREATE TABLE ... AS`` it is.

PostgreSQL's ``SELECT INTO`` makes a table from a query's rows (its tag is ``SELECT n``,
as ``CREATE TABLE AS``'s); DuckDB has no such form and answered it 42601. Rules this
module keeps:

* :func:`as_create` answers the ``CREATE [TEMP | UNLOGGED] TABLE name AS <query>`` text of
  a ``SELECT`` (a ``WITH`` query included) whose top-level select list has ``INTO``, which
  the session then runs as any ``CREATE TABLE AS`` (its DDL bookkeeping, its tag);
  None for anything else (most statements: a text without the word ``into`` is not parsed).
* The query is the client's, generated again from its parse in pgbarrier's dialect
  without the ``INTO`` clause; ``ORDER BY`` and ``LIMIT`` stay with it.
* ``INTO`` in an arm of a set operation is not this form (DuckDB's error stands).
"""

from __future__ import annotations

import re

from sqlglot import exp

from pgbarrier.sql.colnames import PgWritten, parse_single
from pgbarrier.sql.text_memo import by_text

_INTO = re.compile(r"(?i)\binto\b")


@by_text
def as_create(sql: str) -> str | None:
    """The ``CREATE TABLE ... AS`` text of a ``SELECT ... INTO`` (module rules), or None."""
    if _INTO.search(sql) is None:
        return None
    tree = parse_single(sql)
    into = tree.args.get("into") if isinstance(tree, exp.Select) else None
    if not isinstance(into, exp.Into) or not isinstance(into.this, exp.Table):
        return None
    query = tree.copy()
    query.set("into", None)
    kind = "TEMPORARY " if into.args.get("temporary") else \
        "UNLOGGED " if into.args.get("unlogged") else ""
    return (f"CREATE {kind}TABLE {into.this.sql(dialect=PgWritten)} AS "
            f"{query.sql(dialect=PgWritten)}")
