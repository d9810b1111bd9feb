"""The cheap gate: whether a statement may need the translation at all.

Rules this module keeps:

* :func:`may_differ` is False only for a statement DuckDB runs as PostgreSQL would: no
  parse happens then, and the statement runs as written. It tests plain substrings (``in``:
  a case-insensitive regex costs ten times more): characters as written
  (:data:`GATE_CHARS`), then words of the lower-cased text (:data:`GATE_WORDS`). A
  statement the gate lets through is parsed once (answers are cached per text) and keeps
  its own text when no transform fires. Its answer is kept per text
  (:func:`pgbarrier.sql.text_memo.by_text`): a statement run again pays a lookup.
* The words of :mod:`.values`, :mod:`.similar`, :mod:`.like` and :mod:`.functions` do not
  open the gate for a statement that reads pgbarrier's ``rw_catalog`` views: those come
  with the views' rows inlined as a ``VALUES`` list (``sql.catalog_rewrite``), a new text
  at each change of the rows, which sqlglot would parse whole each time (seconds for a
  long refresh history). Their translations do not apply to such a statement.
* Each entry names what it is for: a transform that fires on something none of these
  substrings can be in would never run, so a new transform adds its signal here (to the
  tuples and to :func:`may_differ`'s written-out tests, which a unit test keeps in step).
"""

from __future__ import annotations

from pgbarrier.sql.catalog_rewrite import is_rewritten
from pgbarrier.sql.text_memo import by_text

__all__ = ["GATE_CHARS", "GATE_WORDS", "may_differ"]

#: characters as written: array text and JSON literals ('{'), array types ('[]'), the
#: JSON operators (#> #>>
#: #- @> <@ ? ?| ?& ->), bytea hex, array / JSON concatenation, a string literal added to
#: or subtracted from a date/time value or a JSON document (written with a blank:
#: ``d - '2020-01-01'``)
GATE_CHARS = ("{", "[]", "#", "@>", "<@", "'\\x", "?", "||", "->", "- '", "+ '", "~~")
#: words of the lower-cased text (a prefix stands for the functions it starts)
GATE_WORDS = (
    "json",                                  # jsonb: json_*, jsonb_*, ::json
    "to_",                                   # formatting: to_char, to_date, to_timestamp...
    "array", "cardinality",                  # arrays: array_*, ARRAY[...]
    "date_", "make_", "extract", "justify_",  # datetimes: date_part / date_trunc / date_bin
    "generate_series",                       # series
    "bytea", "serial", "identity",           # bytea, column_defaults
    "char", "numeric", "decimal", "tz(", "time(", " bit(",  # declared
    "values",                                # values (not in a statement starting INSERT)
    "similar",                               # similar
    "like",                                  # like (ilike too; ~~ is in GATE_CHARS)
    "every", "btrim", "initcap", "code(",    # functions (encode, decode)
    "round", "substr", "concat",             # functions (to_hex is "to_")
    "bool", "pad(", "length(", "num_n",      # functions (boolean input, lpad, length, num_nulls)
    "sqrt(", "ln(", "log(", "log10(", "pow",  # functions (math domain errors)
)


@by_text  # met twice per statement: kept per text (sql.text_memo)
def may_differ(sql: str) -> bool:
    """The cheap gate: False means DuckDB runs ``sql`` as PostgreSQL would. The tests of
    :data:`GATE_CHARS` and :data:`GATE_WORDS` written out (a loop costs as much again)."""
    if ("{" in sql or "[]" in sql or "#" in sql or "@>" in sql or "<@" in sql
            or "'\\x" in sql or "?" in sql or "||" in sql or "->" in sql or "- '" in sql
            or "+ '" in sql or "~~" in sql):
        return True
    low = sql.lower()
    return ("json" in low or "to_" in low or "array" in low or "cardinality" in low
            or "date_" in low or "make_" in low or "extract" in low or "justify_" in low
            or "generate_series" in low or "bytea" in low or "serial" in low
            or "identity" in low or "char" in low or "numeric" in low or "decimal" in low
            or "tz(" in low or "time(" in low or " bit(" in low
            or "/" in sql and ("interval" in low or "age(" in low)  # dividing an interval
            or ("values" in low and not low.lstrip().startswith("insert")
                or "similar" in low or "like" in low
                or "every" in low or "btrim" in low or "initcap" in low or "code(" in low
                or "round" in low or "substr" in low or "concat" in low
                or "bool" in low or "pad(" in low or "length(" in low or "num_n" in low
                or "sqrt(" in low or "ln(" in low or "log(" in low or "log10(" in low
                or "pow" in low)
            and not is_rewritten(sql))
