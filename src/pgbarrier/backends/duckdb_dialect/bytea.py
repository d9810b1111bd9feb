"""PostgreSQL's bytea hex text (``'\\xdeadbeef'``) on DuckDB's BLOB.

Rules this module keeps:

* ``'\\x...'::bytea`` (and ``CAST(... AS bytea)``) -> ``from_hex('...')``: PostgreSQL's
  hex format, blanks between digits allowed. Text that is not valid hex is PostgreSQL's
  22023 (``invalid hexadecimal digit: "z"``, ``invalid hexadecimal data: odd number of
  digits``). Text without ``\\x`` is PostgreSQL's escape format, which DuckDB reads the
  same way (``\\nnn`` octal escapes): it keeps DuckDB's cast.
* A bare ``'\\x...'`` literal bound for a ``bytea`` (BLOB) column (``INSERT ... VALUES`` /
  ``SELECT``, ``UPDATE ... SET``) or compared with one is read as hex too: DuckDB's own
  cast would keep the text's escapes (``'\\xdeadbeef'`` as 7 bytes). The column types
  come from the session (:mod:`.typeof`); anywhere else a bare literal is text.
"""

from __future__ import annotations

import re

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context, kind
from pgbarrier.errors import PgError

__all__ = ["bound_literal", "from_hex", "rewrite"]

_BINARY = (exp.DataType.Type.VARBINARY, exp.DataType.Type.BINARY, exp.DataType.Type.BLOB)
_BARE_HEX = re.compile(r"\\x[0-9a-fA-F\s]*\Z")
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ,
                exp.NullSafeNEQ)


def from_hex(text: str) -> exp.Expr | None:
    """``from_hex`` of PostgreSQL's hex bytea text; None for the escape format."""
    if not text.startswith("\\x"):
        return None  # PostgreSQL's escape format: DuckDB reads \nnn the same way
    digits = re.sub(r"\s", "", text[2:])
    bad = re.search(r"[^0-9a-fA-F]", digits)
    if bad:
        raise PgError.by_sqlstate("22023")(f'invalid hexadecimal digit: "{bad.group()}"',
                                           sqlstate="22023")
    if len(digits) % 2:
        raise PgError.by_sqlstate("22023")("invalid hexadecimal data: odd number of digits",
                                           sqlstate="22023")
    return exp.Anonymous(this="from_hex", expressions=[exp.Literal.string(digits)])


def bound_literal(value: exp.Expr, to: exp.DataType | None) -> exp.Expr | None:
    """A bare ``'\\x..'`` literal bound for (or compared with) a bytea: its bytes."""
    if kind(to) == "bytea" and isinstance(value, exp.Literal) and value.is_string and \
            _BARE_HEX.match(value.this):
        return from_hex(value.this)
    return None


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and \
            node.this.is_string:
        to = node.args.get("to")
        if isinstance(to, exp.DataType) and to.this in _BINARY:
            return from_hex(node.this.this)
        return None
    if isinstance(node, _COMPARISONS):
        for lit, other, side in ((node.expression, node.this, "expression"),
                                 (node.this, node.expression, "this")):
            if isinstance(lit, exp.Literal) and lit.is_string and _BARE_HEX.match(lit.this):
                value = bound_literal(lit, ctx.type_of(other))
                if value is not None:
                    new = node.copy()
                    new.set(side, value)
                    return new
    return None
