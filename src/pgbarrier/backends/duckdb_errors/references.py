"""Answers for names PostgreSQL would not resolve and shapes it would refuse.

Rules this module keeps:

* Columns: 42703 ``column "x" does not exist`` / ``column t.x does not exist`` with
  PostgreSQL's own HINT rule (:mod:`.scopes`), at the reference; ``column "x" of relation
  "t" does not exist`` for an INSERT's, UPDATE's or ALTER's target column; 42702 for an
  ambiguous one; 42701 for a duplicate; 42803 ``column "t.a" must appear in the GROUP BY
  clause...`` naming the column's range-table entry.
* Tables: 42P01 ``missing FROM-clause entry`` / ``invalid reference to FROM-clause entry``
  (with the alias HINT), ``relation "x" does not exist`` (``table``/``view``/``sequence``
  in a DROP), 3F000 for a schema, 42704 for a type or index; DuckDB's "Did you mean"
  guesses are never passed on (PostgreSQL gives none).
* Shapes: INSERT's target and value counts (42601, at the first extra item), set
  operations' column counts, subqueries' columns, type mixes of COALESCE / CASE /
  GREATEST / LEAST / ARRAY (42804 at the first item of the second type), ORDER BY /
  GROUP BY positions (42P10), negative LIMIT / OFFSET (2201W / 2201X), DROP of an object
  with dependents (2BP01 naming the foreign keys), DROP of the wrong kind (42809).
* What DuckDB cannot do that PostgreSQL does (altering a table an index depends on) is
  0A000 naming it, with a HINT.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from pgbarrier.backends.duckdb_constraint_errors import constraint_error
from pgbarrier.backends.duckdb_errors import carets, scopes
from pgbarrier.backends.duckdb_errors.answer import (
    Ctx,
    bracket_items,
    case_results,
    enclosing_open,
    err,
    ident_name,
    operator_position,
)
from pgbarrier.backends.duckdb_errors.argtypes import item_type
from pgbarrier.backends.duckdb_errors.functions import OP_HINT
from pgbarrier.backends.duckdb_errors.names import pg_type
from pgbarrier.errors import PgError


# --------------------------------------------------------------------------- names

def missing_column(m: re.Match[str], ctx: Ctx) -> PgError:
    groups = m.groupdict()
    name = ident_name(groups["name"], ctx)
    qualifier = ident_name(groups["table"], ctx) if groups.get("table") else None
    levels, col = scopes.range_tables(ctx.sql, name, qualifier, ctx.position, ctx.columns)
    hint = scopes.missing_column_hint(levels, name, qualifier) if levels else None
    position = scopes.column_start(col) if col is not None else ctx.position
    text = f"column {qualifier}.{name} does not exist" if qualifier \
        else f'column "{name}" does not exist'
    return err("42703", text, hint=hint, position=position)


def missing_table_ref(m: re.Match[str], ctx: Ctx) -> PgError:
    name = ident_name(m.group("name"), ctx)
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    col = None
    if tree is not None:
        col = next((c for c in tree.find_all(exp.Column) if isinstance(
            c.args.get("table"), exp.Identifier) and scopes._folded(c.args["table"]) == name),
            None)
    position = scopes.column_start(col) if col is not None else ctx.position
    levels: list[list[scopes.Rte]] = []
    if col is not None:
        levels, _ = scopes.range_tables(ctx.sql, col.name if not isinstance(
            col.this, exp.Star) else "*", name, position, ctx.columns)
    if not levels and tree is not None:
        levels, _ = scopes.range_tables(ctx.sql, "\x00", None, None, ctx.columns)
    hint = scopes.missing_table_hint(levels, name)
    if hint is not None:
        return err("42P01", f'invalid reference to FROM-clause entry for table "{name}"',
                   hint=hint, position=position)
    return err("42P01", f'missing FROM-clause entry for table "{name}"', position=position)


def group_by(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    levels, col = scopes.range_tables(ctx.sql, ident_name(name, ctx), None, ctx.position,
                                      ctx.columns)
    qualifier = col.table if col is not None and col.table else None
    if qualifier is None:
        owner = scopes.owner_of(levels, ident_name(name, ctx))
        qualifier = owner.name if owner is not None else None
    shown = f"{qualifier}.{name}" if qualifier else name
    return err("42803", f'column "{shown}" must appear in the GROUP BY clause or be used in an '
                        "aggregate function",
               position=scopes.column_start(col) if col is not None else ctx.position)


def duplicate_column(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    sql = ctx.sql or ""
    alter = re.match(r"(?is)\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?"
                     r"((?:\"[^\"]+\"|[^\s.]+)\.)?(\"[^\"]+\"|[^\s.]+)", sql)
    if alter:
        table = alter.group(2)
        table = table[1:-1] if table.startswith('"') else table.lower()
        return err("42701", f'column "{name}" of relation "{table}" already exists')
    return err("42701", f'column "{name}" specified more than once')


def alter_column_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name, table = m.group("name"), m.group("table")
    sql = ctx.sql or ""
    if re.match(r"(?is)\s*ALTER\s+TABLE\b.*\bRENAME\b", sql):
        return err("42703", f'column "{name}" does not exist')
    if re.match(r"(?is)\s*INSERT\b", sql):
        return err("42703", f'column "{name}" of relation "{table}" does not exist',
                   position=carets.identifier_position(sql, name))
    return err("42703", f'column "{name}" of relation "{table}" does not exist')


def update_column_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    table = None
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    target = tree.this.this if isinstance(tree, exp.Insert) and \
        isinstance(tree.this, exp.Schema) else tree.this if tree is not None else None
    if isinstance(tree, (exp.Update, exp.Insert)) and isinstance(target, exp.Table):
        table = target.name
    return err("42703", f'column "{name}" of relation "{table or "?"}" does not exist',
               position=carets.identifier_position(ctx.sql, name))


# --------------------------------------------------------------------------- catalog

def relation_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    sql = ctx.sql or ""
    drop = re.match(r"(?is)\s*DROP\s+(TABLE|VIEW|SEQUENCE|INDEX|MATERIALIZED\s+VIEW)\b", sql)
    if drop:
        kind = " ".join(drop.group(1).lower().split())
        state = "42704" if kind == "index" else "42P01"
        return err(state, f'{kind} "{name}" does not exist')
    position = ctx.position or carets.identifier_position(sql, name.split(".")[-1])
    if not re.match(r"(?is)\s*(SELECT|WITH|INSERT|UPDATE|DELETE|TABLE|VALUES|MERGE|COPY)\b",
                    sql):
        position = None
    return err("42P01", f'relation "{name}" does not exist', position=position)


def schema_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    position = None
    if re.match(r"(?is)\s*CREATE\b", ctx.sql or ""):
        position = carets.identifier_position(ctx.sql, name)
    return err("3F000", f'schema "{name}" does not exist', position=position)


def type_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42704", f'type "{m.group("name")}" does not exist', position=ctx.position)


def sequence_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    if re.match(r"(?is)\s*DROP\s+SEQUENCE\b", ctx.sql or ""):
        return err("42P01", f'sequence "{name}" does not exist')
    toks = carets.tokens(ctx.sql)
    position = next((t.start + 1 for t in toks if t.kind.name == "STRING" and
                     t.text.split(".")[-1].strip('"').lower() == name.lower()), None)
    return err("42P01", f'relation "{name}" does not exist', position=position)


def insert_count(more: str) -> Callable[[re.Match[str], Ctx], PgError]:
    def answer(m: re.Match[str], ctx: Ctx) -> PgError:
        position = None
        tree = scopes.parse(ctx.sql) if ctx.sql else None
        toks = carets.tokens(ctx.sql)
        if isinstance(tree, exp.Insert):
            cols = tree.this.expressions if isinstance(tree.this, exp.Schema) else []
            values = tree.expression
            row = values.expressions[0] if isinstance(values, exp.Values) and \
                values.expressions else None
            n = len(row.expressions) if isinstance(row, exp.Tuple) else \
                len(values.expressions) if isinstance(values, exp.Select) else None
            if more == "expressions" and n is not None:
                limit = len(cols) if cols else int(m.groupdict().get("cols") or 0)
                position = _nth_in_values(toks, limit) if row is not None else \
                    _nth_selected(toks, limit)
            elif more == "target columns" and n is not None and len(cols) > n:
                ident = cols[n]
                start = ident.meta.get("start") if isinstance(ident, exp.Identifier) else None
                position = None if start is None else start + 1
        return err("42601", f"INSERT has more {more} than target columns"
                   if more == "expressions" else
                   "INSERT has more target columns than expressions", position=position)
    return answer


def _nth_selected(toks: tuple[carets.Tok, ...], n: int) -> int | None:
    """Position of the ``n``-th (0-based) item of the first select list."""
    for i, t in enumerate(toks):
        if t.kind.name == "SELECT":
            depth, index = 0, 0
            for tok in toks[i + 1:]:
                if index == n and depth == 0:
                    return tok.start + 1
                if tok.kind.name == "L_PAREN":
                    depth += 1
                elif tok.kind.name == "R_PAREN":
                    depth -= 1
                elif tok.kind.name == "COMMA" and depth == 0:
                    index += 1
                elif tok.kind.name == "FROM" and depth == 0:
                    return None
            return None
    return None


def _nth_in_values(toks: tuple[carets.Tok, ...], n: int) -> int | None:
    """Position of the ``n``-th (0-based) element of the first VALUES row."""
    for i, t in enumerate(toks):
        if t.kind.name == "VALUES" and i + 1 < len(toks) and toks[i + 1].kind.name == "L_PAREN":
            depth, index = 0, 0
            for tok in toks[i + 2:]:
                if index == n and depth == 0:
                    return tok.start + 1
                if tok.kind.name == "L_PAREN":
                    depth += 1
                elif tok.kind.name == "R_PAREN":
                    if depth == 0:
                        return None
                    depth -= 1
                elif tok.kind.name == "COMMA" and depth == 0:
                    index += 1
    return None


def order_position(word: str) -> Callable[[re.Match[str], Ctx], PgError]:
    def answer(m: re.Match[str], ctx: Ctx) -> PgError | None:
        toks = carets.tokens(ctx.sql)
        # the out-of-range number: the first integer after ORDER/GROUP BY beyond the bound
        bound = int(m.group("hi"))
        seen = False
        for t in toks:
            if " ".join(t.text.upper().split()) == word:
                seen = True
            elif seen and t.kind.name == "NUMBER" and t.text.isdigit() and \
                    (int(t.text) > bound or int(t.text) < 1):
                return err("42P10", f"{word} position {t.text} is not in select list",
                           position=t.start + 1)
        return None
    return answer


def negative_limit(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    word = "LIMIT"
    if i is not None and i >= 1 and toks[i - 1].text.upper() == "OFFSET":
        word = "OFFSET"
    state = "2201X" if word == "OFFSET" else "2201W"
    return err(state, f"{word} must not be negative")


def dependents(m: re.Match[str], ctx: Ctx) -> PgError:
    sql = ctx.sql or ""
    kind = re.match(r"(?is)\s*DROP\s+(TABLE|VIEW|SEQUENCE|SCHEMA|TYPE)\s+(?:IF\s+EXISTS\s+)?"
                    r"(?:\S+\.)?(\"[^\"]+\"|[^\s;,]+)", sql)
    word = kind.group(1).lower() if kind else "table"
    name = m.groupdict().get("name") or (kind.group(2).strip('"') if kind else "?")
    rows = ctx.constraints() if ctx.constraints is not None else []
    lines = [f"constraint {r[6] or r[0] + '_' + '_'.join(r[2]) + '_fkey'} on table {r[0]} "
             f"depends on {word} {name}" for r in rows
             if r[1] == "FOREIGN KEY" and (r[4] or "").lower() == name.lower()]
    if word == "type" and ctx.query is not None:  # the columns of that type, by table
        tables = re.findall(r'^table "([^"]+)" depends on type', ctx.text, re.M)
        ident = '"' + name.replace('"', '""') + '"'
        try:
            found = ctx.query(
                "SELECT table_name, column_name FROM duckdb_columns() WHERE "
                "database_name = current_database() AND list_contains($1, table_name) AND "
                f"data_type = typeof(CAST(NULL AS {ident})) ORDER BY table_oid, column_index",
                [tables]) if tables else []
        except Exception:  # noqa: BLE001 - the DETAIL is an extra, never a new error
            found = []
        lines += [f"column {c} of table {t} depends on type {name}" for t, c in found]
    return err("2BP01", f"cannot drop {word} {name} because other objects depend on it",
               detail="\n".join(lines) or None,
               hint="Use DROP ... CASCADE to drop the dependent objects too.")


# --------------------------------------------------------------------------- more binder errors

_KIND = {"Table": "table", "View": "view", "Index": "index", "Sequence": "sequence",
         "Type": "type", "Schema": "schema", "Macro": "function", "Macro Function": "function"}
_ARTICLE = {"index": "an index"}


def wrong_kind(m: re.Match[str], ctx: Ctx) -> PgError | None:
    name, have, want = m.group("name"), _KIND.get(m.group("have")), _KIND.get(m.group("want"))
    if have is None or want is None:
        return None
    replacing = "trying to replace" in m.group(0)  # CREATE OR REPLACE: PostgreSQL gives no HINT
    return err("42809", f'"{name}" is not a{"n" if want[0] in "aeiou" else ""} {want}',
               hint=None if replacing else
               f"Use DROP {have.upper()} to remove {_ARTICLE.get(have, 'a ' + have)}.")


def mixed_types(construct: str | None) -> Callable[[re.Match[str], Ctx], PgError | None]:
    """``X types a and b cannot be matched`` (42804), at the first item of the second type;
    ``construct`` None: the function (GREATEST, LEAST) or ARRAY around DuckDB's caret."""
    def answer(m: re.Match[str], ctx: Ctx) -> PgError | None:
        a, b = pg_type(m.group("a")), pg_type(m.group("b"))
        toks = carets.tokens(ctx.sql)
        i = carets.token_at(ctx.sql, ctx.position)
        if i is None:
            return None
        word, open_i = construct, None
        if construct is None:
            open_i = enclosing_open(toks, i)
            if open_i is None or open_i == 0:
                return None
            word = toks[open_i - 1].text.upper()
            if word not in ("GREATEST", "LEAST", "ARRAY"):
                return None
        elif construct == "COALESCE":
            open_i = i + 1 if i + 1 < len(toks) and toks[i + 1].kind.name == "L_PAREN" else None
        items = bracket_items(toks, open_i) if open_i is not None else case_results(toks, i)
        position = next((toks[x].start + 1 for x, y in items
                         if item_type(ctx, toks, x, y) == b), None)
        return err("42804", f"{word} types {a} and {b} cannot be matched",
                   position=position or ctx.position)
    return answer


def mixed_array(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """DuckDB's list_value template (an ARRAY[...] of mixed types)."""
    inferred = re.findall(r" - '([^']+)', (?:from first occurrence|which is incompatible)",
                          ctx.text)
    if len(inferred) < 2:
        return None
    fake = re.match(r"(?P<a>.+)\n(?P<b>.+)", f"{inferred[0]}\n{inferred[-1]}")
    assert fake is not None
    return mixed_types(None)(fake, ctx)


def set_columns(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    word, position, depth = "UNION", None, 0
    for j, t in enumerate(toks):
        kind = t.kind.name
        if kind == "L_PAREN":
            depth += 1
        elif kind == "R_PAREN":
            depth -= 1
        elif depth == 0 and kind in ("UNION", "INTERSECT", "EXCEPT"):
            word = kind
            for k in range(j + 1, len(toks)):
                if toks[k].kind.name == "SELECT":
                    nxt = k + 1
                    while nxt < len(toks) and toks[nxt].text.upper() in ("DISTINCT", "ALL"):
                        nxt += 1
                    position = toks[nxt].start + 1 if nxt < len(toks) else None
                    break
            break
    return err("42601", f"each {word} query must have the same number of columns",
               position=position)


def subquery_columns(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is not None and i >= 1 and toks[i - 1].text.upper() in ("IN", "ANY", "SOME", "ALL"):
        return err("42601", "subquery has too many columns", position=toks[i - 1].start + 1)
    return err("42601", "subquery must return only one column", position=ctx.position)


def window_here(m: re.Match[str], ctx: Ctx) -> PgError | None:
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is None or i + 1 >= len(toks) or toks[i + 1].kind.name != "L_PAREN":
        return None
    items_end = bracket_items(toks, i + 1)
    end = items_end[-1][1] if items_end else i + 2
    if end < len(toks) and toks[end].kind.name == "R_PAREN":
        end += 1
    if end < len(toks) and toks[end].text.upper() == "OVER":
        return None
    return err("42809", f"window function {toks[i].text.lower()} requires an OVER clause",
               position=ctx.position)


def using_column(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42703", f'column "{m.group("name")}" specified in USING clause does not exist '
                        f'in {m.group("side")} table')


def missing_parameter(m: re.Match[str], ctx: Ctx) -> PgError:
    n = m.group("n").split(",")[0].strip()
    found = re.search(r"\$" + n + r"(?!\d)", ctx.sql or "")
    position = found.start() + 1 if found else None
    return err("42P02", f"there is no parameter ${n}", position=position)


def key_column(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    at = carets.identifier_position(ctx.sql, name)
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, at)
    position = at
    for j in range((i or 0) - 1, -1, -1):  # PostgreSQL points at the constraint
        if " ".join(toks[j].text.upper().split()) in ("PRIMARY KEY", "UNIQUE", "PRIMARY"):
            position = toks[j].start + 1
            if j >= 2 and toks[j - 2].text.upper() == "CONSTRAINT":
                position = toks[j - 2].start + 1
            break
    return err("42703", f'column "{name}" named in key does not exist', position=position)


def check_column(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    return err("42703", f'column "{name}" does not exist',
               position=carets.identifier_position(ctx.sql, name))


def distinct_order(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    position, seen = None, False
    for j, t in enumerate(toks):
        if t.text.upper() == "DISTINCT":
            seen = True
        elif seen and " ".join(t.text.upper().split()) == "ORDER BY" and j + 1 < len(toks):
            position = toks[j + 1].start + 1
            break
    return err("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in "
                        "argument list", position=position)


def row_compare(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42601", "unequal number of entries in row expressions",
               position=operator_position(ctx, "="))


def alter_dependents(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    return err("0A000", f'altering table "{name}" while an index depends on it is not '
                        "supported by pgbarrier on DuckDB",
               detail="DuckDB cannot alter a table that has an index (a PRIMARY KEY, UNIQUE "
                      "or CREATE INDEX) in this way.",
               hint="Drop the index, alter the table, then create the index again.")


def insert_values(m: re.Match[str], ctx: Ctx) -> PgError:
    """More values than columns is PostgreSQL's 42601; fewer, without a column list, is what
    PostgreSQL fills with defaults and DuckDB refuses: 0A000 saying how to write it."""
    if int(m.group("vals")) > int(m.group("cols")):
        return insert_count("expressions")(m, ctx)
    return err("0A000", "an INSERT without a column list must give a value for every column "
                        "on pgbarrier's DuckDB backend",
               detail=f'Table "{m.group("table")}" has {m.group("cols")} columns; '
                      f'{m.group("vals")} values were given.',
               hint="Name the columns the values are for: INSERT INTO t (a, b) VALUES ...")


def build_object(m: re.Match[str], ctx: Ctx) -> PgError:
    found = re.search(r"(?i)\b(jsonb?_build_object)\s*\(", ctx.written or "")
    name = found.group(1).lower() if found else "json_build_object"
    return err("22023", "argument list must have even number of elements",
               hint=f"The arguments of {name}() must consist of alternating keys and values.")


def commit_duplicate(m: re.Match[str], ctx: Ctx) -> PgError:
    """A duplicate key DuckDB finds at COMMIT (two transactions inserted the same key):
    PostgreSQL's 23505, naming the constraint when one alone fits the key's width."""
    rows = ctx.constraints() if ctx.constraints is not None else []
    width = len(m.group("key").split(", "))
    fits = [r for r in rows if r[1] in ("PRIMARY KEY", "UNIQUE") and len(r[2]) == width]
    if len(fits) == 1:
        found = constraint_error(
            f'PRIMARY KEY or UNIQUE constraint violation: duplicate key "{m.group("key")}"',
            f'INSERT INTO "{fits[0][0]}"', lambda: fits)
        if found is not None:
            return found
    return err("23505", "duplicate key value violates unique constraint",
               detail=f"Key ({m.group('key')}) already exists.")


_TYPE_WITH_ARGS = re.compile(r"(?i)\b(numeric|decimal)\s*\(\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?\)")


def numeric_typmod(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """DuckDB's DECIMAL width limits against PostgreSQL's numeric(p, s): a precision
    PostgreSQL refuses is its 22023 at the type; one it accepts and DuckDB cannot hold is
    0A000."""
    sql = ctx.written or ""
    found = list(_TYPE_WITH_ARGS.finditer(sql))
    if not found:
        return None
    anchor = (ctx.position or 1) - 1 if ctx.client_sql is None else 0
    t = min(found, key=lambda f: abs(f.start() - anchor)) if ctx.client_sql is None \
        else found[0]
    precision = int(t.group(2))
    scale = int(t.group(3)) if t.group(3) is not None else 0
    if not 1 <= precision <= 1000:
        return err("22023", f"NUMERIC precision {precision} must be between 1 and 1000",
                   position=t.start() + 1 if ctx.client_sql is None else None)
    if not -1000 <= scale <= 1000:
        return err("22023", f"NUMERIC scale {scale} must be between -1000 and 1000",
                   position=t.start() + 1 if ctx.client_sql is None else None)
    return err("0A000", f"numeric({precision}, {scale}) is not supported by pgbarrier on DuckDB",
               detail="DuckDB's numeric holds at most 38 digits, with a scale from 0 to the "
                      "precision.")


def renamed_onto(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42P07", f'relation "{m.group("new")}" already exists')


_COMPARISONS = ("=", "<>", "!=", "<", ">", "<=", ">=")


def no_comparison(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """DuckDB's "Cannot compare values of type a and type b": PostgreSQL has no such
    operator (42883), pointed at the operator (``IN``'s at the ``IN``)."""
    a, b = pg_type(m.group("a")), pg_type(m.group("b"))
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    op, position = "=", ctx.position
    if m.group("inany"):
        if i is not None and i >= 1 and toks[i - 1].text.upper() == "IN":
            position = toks[i - 1].start + 1
        elif i is not None and i >= 2 and toks[i - 1].text.upper() in ("ANY", "SOME", "ALL"):
            op, position = toks[i - 2].text, toks[i - 2].start + 1
    elif i is not None:
        depth = 0
        for tok in toks[i:]:
            kind = tok.kind.name
            if kind == "L_PAREN":
                depth += 1
            elif kind == "R_PAREN":
                depth -= 1
                if depth < 0:
                    break
            elif depth == 0 and tok.text in _COMPARISONS:
                op, position = tok.text, tok.start + 1
                break
    return err("42883", f"operator does not exist: {a} {op} {b}", hint=OP_HINT,
               position=position)
