"""PostgreSQL functions DuckDB has under another name or not at all.

Rules this module keeps:

* ``every(x)`` is ``bool_and(x)`` (the SQL standard's name PostgreSQL also takes).
* ``btrim(s [, chars])`` and ``initcap(s)``: sqlglot reads them as its ``Trim`` and
  ``Initcap`` and writes DuckDB's equivalents (``trim``; an ``initcap`` built of list
  functions whose word separators are blanks and ASCII punctuation, as PostgreSQL's are
  any character that is not a letter or digit); this module only marks such a call as
  needing that translation (DuckDB has neither name).
* ``encode(bytea, 'hex' | 'base64')`` is ``to_hex`` (lower case) / ``to_base64``, and
  ``decode(text, 'hex' | 'base64')`` ``from_hex`` / ``from_base64`` (DuckDB's own
  ``encode``/``decode`` are UTF-8 conversions: they answered the input, silently). The
  ``escape`` format and a format that is not a literal are 0A000 naming them. Known
  difference: PostgreSQL's base64 breaks lines every 76 characters, DuckDB's does not.
* Each name is in the gate (:mod:`.gate`), so a statement without one is not parsed.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context
from pgbarrier.errors import FeatureNotSupported


#: (function, format) -> DuckDB's function
_CODECS = {("encode", "hex"): "to_hex", ("encode", "base64"): "to_base64",
           ("decode", "hex"): "from_hex", ("decode", "base64"): "from_base64"}


def _codec(node: exp.Expr) -> exp.Expr:
    name = "encode" if isinstance(node, exp.Encode) else "decode"
    fmt = node.args.get("charset")
    found = _CODECS.get((name, fmt.name.lower())) \
        if isinstance(fmt, exp.Literal) and fmt.is_string else None
    if found is None:
        shown = f"format {fmt.name}" if isinstance(fmt, exp.Literal) \
            else "a format that is not a literal"
        raise FeatureNotSupported(f"{name} with {shown} is not supported by pgbarrier on DuckDB")
    call = exp.Anonymous(this=found, expressions=[node.this.copy()])
    return exp.Lower(this=call) if found == "to_hex" else call


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, (exp.Encode, exp.Decode)):
        return _codec(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "every" and \
            len(node.expressions) == 1:
        return exp.LogicalAnd(this=node.expressions[0].copy())
    if isinstance(node, exp.Initcap) or isinstance(node, exp.Trim) and \
            "btrim" in ctx.sql.lower():
        return node.copy()  # sqlglot's DuckDB form of it (a trim() is the same either way)
    return None
