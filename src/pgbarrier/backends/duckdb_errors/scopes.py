"""The range tables of a statement, as PostgreSQL's parser sees them, for its HINTs.

Rules this module keeps:

* The statement DuckDB ran is parsed with sqlglot (PostgreSQL's grammar, DuckDB's when
  that fails; cached per text); a statement neither reads, or one longer than
  :data:`~.carets.MAX_ANALYSED` characters, gives no range table and so no HINT, never a
  guessed one.
* :func:`range_tables` lists, for the column reference a DuckDB error names (found by name,
  qualifier and DuckDB's caret), the range-table entries of its query level and of each
  enclosing level, innermost first, each entry in PostgreSQL's order (FROM items left to
  right, an UPDATE's / DELETE's / INSERT's target first). An entry's name is its alias, else
  the table's (or ``*VALUES*``, or the function's); its columns are the table's (the
  caller's ``columns`` lookup), a CTE's or subquery's output names (``*`` expanded), or the
  alias's column list. A FROM subquery sees only the entries before it in its parent.
* :func:`missing_column_hint` is PostgreSQL 15's ``errorMissingColumn``: Levenshtein
  distance (case-sensitive, cost 1 each), a qualifier's distance to an entry's name added as
  a penalty, at most 3 and at most half the name's length; one best match gives ``Perhaps
  you meant to reference the column "t.c".``, two equally good give both, three or more
  give none; an exact match in an entry the reference cannot see gives ``There is a column
  named "c" in table "t", but it cannot be referenced from this part of the query.``
* :func:`missing_table_hint` is ``errorMissingRTE``: a table in the range table under
  another alias gives ``invalid reference to FROM-clause entry`` and the alias HINT.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier.backends.duckdb_errors.carets import MAX_ANALYSED

#: table names -> {table: {column: DuckDB type}} (names matched case-insensitively)
ColumnsLookup = Callable[[list[str]], dict[str, dict[str, str]]]

MAX_FUZZY_DISTANCE = 3


@dataclass
class Rte:
    name: str                 # eref->aliasname
    columns: list[str]
    relation: str | None = None  # the table's own name, for a table
    aliased: bool = False
    types: dict[str, str] = field(default_factory=dict)


@lru_cache(maxsize=32)
def parse(sql: str) -> exp.Expr | None:
    if len(sql) > MAX_ANALYSED:  # a bulk statement's error must not cost seconds more
        return None
    for dialect in ("postgres", "duckdb"):
        try:
            trees = sqlglot.parse(sql, read=dialect)
        except (ParseError, TokenError, Exception):  # noqa: BLE001 - no tree, no hint
            continue
        trees = [t for t in trees if t is not None]
        if trees:
            return trees[-1]
    return None


def _folded(ident: exp.Identifier | None) -> str | None:
    if ident is None:
        return None
    return ident.this if ident.quoted else ident.this.lower()


def find_column(tree: exp.Expr, name: str, qualifier: str | None,
                near: int | None) -> exp.Column | None:
    """The column reference ``[qualifier.]name`` nearest DuckDB's caret ``near``."""
    hits = []
    for col in tree.find_all(exp.Column):
        if not isinstance(col.this, exp.Identifier) or _folded(col.this) != name:
            continue
        table = col.args.get("table")
        if qualifier is not None and (not isinstance(table, exp.Identifier) or
                                      _folded(table) != qualifier):
            continue
        hits.append(col)
    if not hits:
        return None

    def distance(col: exp.Column) -> int:
        ident = col.args.get("table") or col.this
        start = ident.meta.get("start") if isinstance(ident, exp.Identifier) else None
        return abs(start - ((near or 1) - 1)) if start is not None else 1 << 30

    return min(hits, key=distance)


def column_start(col: exp.Column) -> int | None:
    """1-based position of a column reference (its qualifier's, when qualified)."""
    ident = col.args.get("table") or col.this
    start = ident.meta.get("start") if isinstance(ident, exp.Identifier) else None
    return None if start is None else start + 1


class _Builder:
    def __init__(self, tree: exp.Expr, lookup: ColumnsLookup | None) -> None:
        self.tree = tree
        self.lookup = lookup
        self._tables: dict[str, dict[str, str]] | None = None

    def tables(self) -> dict[str, dict[str, str]]:
        if self._tables is None:
            names = sorted({t.name for t in self.tree.find_all(exp.Table) if t.name})
            found = self.lookup(names) if self.lookup is not None and names else {}
            self._tables = {k.lower(): v for k, v in found.items()}
        return self._tables

    def cte(self, node: exp.Expr, name: str) -> exp.CTE | None:
        for anc in _ancestors(node):
            with_ = anc.args.get("with_") or anc.args.get("with")
            if isinstance(with_, exp.With):
                for cte in with_.expressions:
                    if cte.alias_or_name.lower() == name.lower():
                        return cte
        return None

    def outputs(self, query: exp.Expr, depth: int = 0) -> list[str]:
        if depth > 8:
            return []
        if isinstance(query, exp.Subquery):
            return self.outputs(query.this, depth + 1)
        if isinstance(query, exp.SetOperation):
            return self.outputs(query.this, depth + 1)
        if not isinstance(query, exp.Select):
            return []
        names: list[str] = []
        for proj in query.expressions:
            if isinstance(proj, exp.Star) or (isinstance(proj, exp.Column) and
                                              isinstance(proj.this, exp.Star)):
                qual = proj.table if isinstance(proj, exp.Column) else ""
                for rte in self.entries(query, depth + 1):
                    if not qual or rte.name == qual:
                        names.extend(rte.columns)
            elif isinstance(proj, exp.Alias):
                names.append(_folded(proj.args.get("alias")) or proj.alias)
            elif isinstance(proj, exp.Column):
                names.append(_folded(proj.this) or proj.name)
            elif isinstance(proj, (exp.Func, exp.Anonymous)):
                names.append((proj.sql_name() if not isinstance(proj, exp.Anonymous)
                              else proj.name).lower())
            else:
                names.append("?column?")
        return names

    def source(self, item: exp.Expr, depth: int) -> Rte | None:
        alias = item.args.get("alias")
        alias_name = _folded(alias.this) if isinstance(alias, exp.TableAlias) and \
            isinstance(alias.this, exp.Identifier) else None
        alias_cols = [_folded(c) or c.name for c in alias.columns] \
            if isinstance(alias, exp.TableAlias) else []
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            table = _folded(item.this) or item.name
            cte = self.cte(item, table) if not item.args.get("db") else None
            if cte is not None:
                cols = [_folded(c) or c.name for c in cte.args["alias"].columns] \
                    if isinstance(cte.args.get("alias"), exp.TableAlias) and \
                    cte.args["alias"].columns else self.outputs(cte.this, depth + 1)
                rte = Rte(alias_name or table, cols, None, alias_name is not None)
            else:
                types = self.tables().get(table.lower(), {})
                rte = Rte(alias_name or table, list(types), table, alias_name is not None,
                          dict(types))
        elif isinstance(item, exp.Table) and isinstance(item.this, (exp.Func, exp.Anonymous)):
            fn = item.this
            fname = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
            rte = Rte(alias_name or fname, [alias_name or fname], None, alias_name is not None)
        elif isinstance(item, exp.Subquery):
            rte = Rte(alias_name or "unnamed_subquery", self.outputs(item.this, depth + 1),
                      None, alias_name is not None)
        elif isinstance(item, exp.Values):
            width = len(item.expressions[0].expressions) if item.expressions and \
                isinstance(item.expressions[0], exp.Tuple) else 0
            rte = Rte(alias_name or "*VALUES*", [f"column{i + 1}" for i in range(width)],
                      None, alias_name is not None)
        elif isinstance(item, exp.Unnest):
            rte = Rte(alias_name or "unnest", [alias_name or "unnest"], None,
                      alias_name is not None)
        else:
            return None
        if alias_cols:
            rte.columns = alias_cols + rte.columns[len(alias_cols):]
        return rte

    def entries(self, query: exp.Expr, depth: int = 0, before: exp.Expr | None = None
                ) -> list[Rte]:
        """The range table of one query level (the items before ``before`` only)."""
        items: list[exp.Expr] = []
        if isinstance(query, (exp.Update, exp.Delete, exp.Insert)):
            target = query.this.this if isinstance(query.this, exp.Schema) else query.this
            if target is not None:
                items.append(target)
        from_ = query.args.get("from_") or query.args.get("from")
        if isinstance(from_, exp.From):
            items.append(from_.this)
            items.extend(e for e in from_.expressions if e is not from_.this)
        for join in query.args.get("joins") or []:
            items.append(join.this)
        using = query.args.get("using")
        if isinstance(using, list):
            items.extend(using)
        out = []
        for item in items:
            if before is not None and (item is before or before in list(item.walk())):
                break
            rte = self.source(item, depth)
            if rte is not None:
                out.append(rte)
        return out


def _ancestors(node: exp.Expr) -> list[exp.Expr]:
    out = []
    cur: exp.Expr | None = node
    while cur is not None:
        out.append(cur)
        cur = cur.parent
    return out


_LEVELS = (exp.Select, exp.Update, exp.Delete, exp.Insert)


def range_tables(sql: str | None, node_name: str, qualifier: str | None, near: int | None,
                 lookup: ColumnsLookup | None) -> tuple[list[list[Rte]], exp.Column | None]:
    """The range tables (innermost level first) seen from the reference
    ``[qualifier.]node_name``, and that reference's node."""
    tree = parse(sql) if sql else None
    if tree is None:
        return [], None
    col = find_column(tree, node_name, qualifier, near)
    builder = _Builder(tree, lookup)
    anchor: exp.Expr = col if col is not None else tree
    levels: list[list[Rte]] = []
    child: exp.Expr | None = None
    for anc in _ancestors(anchor):
        if isinstance(anc, _LEVELS):
            before = None
            if child is not None:  # inside one of this level's FROM items?
                for item in _from_items(anc):
                    if child is item or child in list(item.walk()):
                        before = item
                        break
            levels.append(builder.entries(anc, before=before))
        child = anc
    return levels, col


def _from_items(query: exp.Expr) -> list[exp.Expr]:
    from_ = query.args.get("from_") or query.args.get("from")
    items = [from_.this] if isinstance(from_, exp.From) else []
    items.extend(j.this for j in query.args.get("joins") or [])
    return items


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def missing_column_hint(levels: list[list[Rte]], name: str,
                        qualifier: str | None) -> str | None:
    """PostgreSQL 15's HINT for ``column [qualifier.]name does not exist``."""
    distance = MAX_FUZZY_DISTANCE + 1
    first: tuple[Rte, str] | None = None
    second: tuple[Rte, str] | None = None
    for level in levels:
        for rte in level:
            penalty = levenshtein(qualifier, rte.name) if qualifier is not None else 0
            if penalty > MAX_FUZZY_DISTANCE + 1:
                penalty = MAX_FUZZY_DISTANCE + 1
            exact = False
            for col in rte.columns:
                if col == name:
                    exact = True
                if penalty > distance or not col:
                    continue
                d = levenshtein(col, name)
                if d > len(name) // 2:
                    continue
                d += penalty
                if d < distance:
                    distance, first, second = d, (rte, col), None
                elif d == distance:
                    if second is not None:
                        first = second = None
                        distance = d - 1
                    elif first is not None:
                        second = (rte, col)
                    elif distance <= MAX_FUZZY_DISTANCE:
                        first = (rte, col)
            if exact and penalty == 0:
                return (f'There is a column named "{name}" in table "{rte.name}", but it '
                        "cannot be referenced from this part of the query.")
    if first is None:
        return None
    if second is None:
        return f'Perhaps you meant to reference the column "{first[0].name}.{first[1]}".'
    return (f'Perhaps you meant to reference the column "{first[0].name}.{first[1]}" or the '
            f'column "{second[0].name}.{second[1]}".')


def missing_table_hint(levels: list[list[Rte]], name: str) -> str | None:
    """PostgreSQL's HINT (and so ``invalid reference to FROM-clause entry``) when table
    ``name`` is in the range table under another name; None for a missing entry."""
    for level in levels:
        for rte in level:
            if rte.relation == name and rte.aliased and rte.name != name:
                return f'Perhaps you meant to reference the table alias "{rte.name}".'
            if rte.name == name:
                return (f'There is an entry for table "{name}", but it cannot be referenced '
                        "from this part of the query.")
    return None


def owner_of(levels: list[list[Rte]], name: str) -> Rte | None:
    """The range-table entry (innermost first) that has column ``name``."""
    for level in levels:
        for rte in level:
            if name in rte.columns:
                return rte
    return None
