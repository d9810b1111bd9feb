"""PostgreSQL's arrays on DuckDB's lists: array text, ``||`` and the array functions.

Rules this module keeps:

* PostgreSQL's array text (``'{1,2}'``, ``'{"a b",NULL,"c\\"d"}'``, ``'{{1,2},{3,4}}'``,
  ``'[1:2]={1,2}'``) is read here as PostgreSQL's ``array_in`` reads it
  (:func:`array_value`: quotes, backslash escapes, blanks trimmed around unquoted elements,
  unquoted ``NULL``) into a DuckDB list of text literals cast to the array type, so DuckDB
  converts each element as PostgreSQL would. Malformed text is PostgreSQL's 22P02
  ``malformed array literal: "..."`` with its DETAIL; a lower bound other than 1 is 0A000
  (DuckDB's lists have none).
* Where the text is read as an array: a cast to an array type; a bare literal bound for an
  array column (``INSERT ... VALUES``, ``INSERT ... SELECT``, ``UPDATE ... SET``, a
  ``DEFAULT``) or compared with an array (``=``, ``<>``, ``<``..., ``IS DISTINCT FROM``,
  ``@>``, ``<@``, ``&&``, ``IN``); the operand of ``= ANY('{...}')`` / ``ALL``; a literal
  beside an array in ``||``. Column types come from the session (:mod:`.typeof`).
* ``||``: array || array -> ``list_concat``, an array and an element (one dimension less)
  -> ``list_append`` / ``list_prepend``, NULL is an empty array as in PostgreSQL; text
  ``||`` is DuckDB's own. Choice: a parameter beside an array is an element (PostgreSQL
  decides by the parameter's type, which a translation made per statement text cannot
  see); an operand of another unknown type keeps DuckDB's reading.
* The functions, with PostgreSQL's answers (NULL where PostgreSQL has no dimension, NULL
  elements matched as ``IS NOT DISTINCT FROM``, ``integer`` results): ``array_append``,
  ``array_prepend``, ``array_cat``, ``array_remove``, ``array_replace``,
  ``array_position`` (with a start), ``array_positions``, ``array_length``,
  ``array_upper``, ``array_lower``, ``array_ndims``, ``array_dims``, ``cardinality``,
  ``array_to_string`` (NULLs skipped or replaced, booleans ``t``/``f``),
  ``string_to_array`` (a NULL separator splits characters, an empty one does not split,
  an empty string is an empty array, the null string becomes NULL). DuckDB's lists are
  one value per level: a multi-dimensional array is a list of lists, whose dimensions come
  from its type.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.build import bool_text
from pgbarrier.backends.duckdb_dialect.typeof import (
    Context, array_of, element, is_array, is_unknown, kind)
from pgbarrier.errors import FeatureNotSupported, PgError

__all__ = ["array_value", "bound_literal", "malformed", "rewrite"]

T = exp.DataType.Type
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ,
                exp.NullSafeNEQ, exp.ArrayContainsAll, exp.ArrayContainedBy,
                exp.ArrayOverlaps)


# -- array text ------------------------------------------------------------------------


def malformed(text: str, detail: str) -> PgError:
    err = PgError.by_sqlstate("22P02")(f'malformed array literal: "{text}"', sqlstate="22P02")
    err.detail = detail
    return err


def _parse(text: str) -> tuple[list, int]:
    """PostgreSQL's array_in structure check and element split: (nested items, dims)."""
    n = len(text)
    i = 0
    while i < n and text[i].isspace():
        i += 1
    sizes: list[int] = []
    if i < n and text[i] == "[":
        i = _bounds(text, i, sizes)
    if i >= n or text[i] != "{":
        raise malformed(text, 'Array value must start with "{" or dimension information.')
    # the structure, as PostgreSQL's ArrayCount walks it
    level_started, elem_started, elem_completed, quoted_started, quoted_completed, \
        elem_delimited, level_completed, level_delimited = range(8)
    state = -1
    depth = 0
    last: dict[int, int] = {}
    deepest = 0
    root: list = []
    stack: list[list] = []
    buf: list[str] = []
    quoted = False
    in_quotes = False
    has_escape = False
    closed = False

    def finish_item() -> None:
        nonlocal buf, quoted, has_escape
        word = _trim(buf) if not quoted else "".join(
            c[1:] if c.startswith("\x00") else c for c in buf)
        value = None if not quoted and not has_escape and word.upper() == "NULL" else word
        stack[-1].append(value)
        buf, quoted, has_escape = [], False, False

    while i < n and not closed:
        ch = text[i]
        if ch == "\\":
            if state not in (level_started, elem_started, quoted_started, elem_delimited):
                raise malformed(text, 'Unexpected "\\" character.')
            if state != quoted_started:
                state = elem_started
            i += 1
            if i >= n:
                raise malformed(text, "Unexpected end of input.")
            buf.append("\x00" + text[i])  # escaped: kept whatever it is
            has_escape = True
        elif ch == '"':
            if state not in (level_started, quoted_started, elem_delimited):
                raise malformed(text, "Unexpected array element.")
            in_quotes = not in_quotes
            state = quoted_started if in_quotes else quoted_completed
            quoted = True
        elif in_quotes:
            buf.append(ch)
        elif ch == "{":
            if state not in (-1, level_started, level_delimited):
                raise malformed(text, 'Unexpected "{" character.')
            state = level_started
            depth += 1
            if depth > 6:
                raise PgError.by_sqlstate("54000")(
                    "number of array dimensions (7) exceeds the maximum allowed (6)",
                    sqlstate="54000")
            deepest = max(deepest, depth)
            level: list = []
            if stack:
                stack[-1].append(level)
            else:
                root = level
            stack.append(level)
        elif ch == "}":
            if state not in (elem_started, elem_completed, quoted_completed, level_completed) \
                    and not (depth == 1 and state == level_started):
                raise malformed(text, 'Unexpected "}" character.')
            had_items = state != level_started
            if state in (elem_started, quoted_completed):
                finish_item()
            state = level_completed
            items = len(stack[-1]) if had_items else 0
            if depth in last and last[depth] != items:
                raise malformed(text, "Multidimensional arrays must have sub-arrays with "
                                      "matching dimensions.")
            last[depth] = items
            stack.pop()
            depth -= 1
            if depth == 0:
                closed = True
        elif ch == ",":
            if state not in (elem_started, elem_completed, quoted_completed, level_completed):
                raise malformed(text, 'Unexpected "," character.')
            if state in (elem_started, quoted_completed):
                finish_item()
            state = level_delimited if state == level_completed else elem_delimited
        elif ch.isspace():
            if state == elem_started:
                buf.append(ch)
        else:
            if state not in (level_started, elem_started, elem_delimited):
                raise malformed(text, "Unexpected array element.")
            state = elem_started
            buf.append(ch)
        i += 1
    if not closed:
        raise malformed(text, "Unexpected end of input.")
    if text[i:].strip():
        raise malformed(text, "Junk after closing right brace.")
    _check_levels(root, deepest, text)
    if sizes and _sizes(root) != sizes:
        raise malformed(text, "Specified array dimensions do not match array contents.")
    return root, deepest if _has_items(root) else 1


def _sizes(items: list) -> list[int]:
    """The length of each dimension of a (checked) nested list."""
    out = []
    while isinstance(items, list):
        out.append(len(items))
        if not items:
            break
        items = items[0]
    return out


def _trim(chars: list[str]) -> str:
    """An unquoted element without its trailing blanks (escaped ones stay; leading ones
    were never kept); escapes resolved."""
    chars = list(chars)
    while chars and chars[-1].isspace():
        chars.pop()
    return "".join(c[1:] if c.startswith("\x00") else c for c in chars)


def _has_items(items: list) -> bool:
    return bool(items)


def _check_levels(items: list, deepest: int, text: str, depth: int = 1) -> None:
    """Elements only at the deepest level, sub-arrays of one size (PostgreSQL's rule)."""
    for item in items:
        if isinstance(item, list):
            _check_levels(item, deepest, text, depth + 1)
        elif depth != deepest:
            raise malformed(text, "Multidimensional arrays must have sub-arrays with "
                                  "matching dimensions.")


def _bounds(text: str, i: int, sizes: list[int]) -> int:
    """Skip ``[lb:ub]...=`` (each dimension's size into ``sizes``); a lower bound other than
    1 cannot be kept (0A000)."""
    n = len(text)
    while i < n and text[i] == "[":
        close = text.find("]", i)
        if close < 0:
            raise malformed(text, 'Missing "]" after array dimensions.')
        spec = text[i + 1:close]
        lower, colon, upper = spec.partition(":")
        if not colon:
            lower, upper = "1", spec
        try:
            lo, hi = int(lower), int(upper)
        except ValueError:
            raise malformed(text, '"[" must introduce explicitly-specified array '
                                  'dimensions.') from None
        if hi < lo:
            raise malformed(text, "Upper bound cannot be less than lower bound.")  # PG's
        if lo != 1:
            raise FeatureNotSupported("array lower bounds other than 1 are not supported by "
                                      "pgbarrier on DuckDB")
        sizes.append(hi - lo + 1)
        i = close + 1
        while i < n and text[i].isspace():
            i += 1
    if i >= n or text[i] != "=":
        raise malformed(text, 'Missing "=" after array dimensions.')
    i += 1
    while i < n and text[i].isspace():
        i += 1
    return i


def _as_sql(items: list) -> exp.Expr:
    return exp.Array(expressions=[
        _as_sql(v) if isinstance(v, list) else exp.Null() if v is None
        else exp.Literal.string(v) for v in items])


def array_value(source: str | exp.Literal, to: exp.DataType) -> exp.Expr:
    """PostgreSQL's array text (``source``, or the string literal ``source``) as a DuckDB
    list cast to ``to`` (an array type; another level of list per dimension beyond
    ``to``'s). An error points at the literal, as PostgreSQL's does."""
    text = source if isinstance(source, str) else source.this
    try:
        items, dims = _parse(text)
    except PgError as err:
        start = None if isinstance(source, str) else source.meta.get("start")
        if start is not None and err.position is None:
            err.position = start + 1
        raise
    target = to.copy()
    have = 0
    t: exp.DataType | None = target
    while is_array(t):
        have += 1
        t = element(t)
    for _ in range(dims - have):
        target = array_of(target)
    return exp.Cast(this=_as_sql(items), to=target)


def bound_literal(value: exp.Expr, to: exp.DataType | None) -> exp.Expr | None:
    """A bare string literal bound for (or compared with) a value of type ``to``: the
    array it is when ``to`` is an array type; None otherwise."""
    if is_array(to) and isinstance(value, exp.Literal) and value.is_string:
        return array_value(value, to)
    return None


# -- rewrites ----------------------------------------------------------------------------


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and \
            node.this.is_string and is_array(node.args.get("to")):
        return array_value(node.this, node.args["to"])
    if isinstance(node, exp.ColumnDef) and is_array(node.args.get("kind")):
        return _default(node)
    if isinstance(node, _COMPARISONS):
        return _compared(node, ctx)
    if isinstance(node, exp.In) and node.expressions:
        target = ctx.type_of(node.this)
        if is_array(target):
            new = [bound_literal(e, target) for e in node.expressions]
            if any(v is not None for v in new):
                return node.__class__(this=node.this.copy(), expressions=[
                    v if v is not None else e.copy() for v, e in zip(new, node.expressions)])
        return None
    if isinstance(node, (exp.Any, exp.All)) or isinstance(node, exp.Anonymous) and \
            node.name.upper() == "ALL":
        return _quantified(node, ctx)
    if isinstance(node, exp.DPipe):
        return _concat(node, ctx)
    if isinstance(node, exp.Anonymous):
        fn = _FUNCTIONS.get(node.name.lower())
        if fn is not None:
            return fn(node, ctx)
    return None


def _default(col: exp.ColumnDef) -> exp.Expr | None:
    """``a int[] DEFAULT '{}'``: the default as an array."""
    fired = False
    for c in col.constraints:
        default = c.kind
        if isinstance(default, exp.DefaultColumnConstraint) and \
                isinstance(default.this, exp.Literal) and default.this.is_string:
            default.set("this", array_value(default.this, col.args["kind"]))
            fired = True
    return col if fired else None


def _compared(node: exp.Binary, ctx: Context) -> exp.Expr | None:
    left, right = node.this, node.expression
    for lit, other, side in ((right, left, "expression"), (left, right, "this")):
        if isinstance(lit, exp.Literal) and lit.is_string:
            target = ctx.type_of(other)
            value = bound_literal(lit, target)
            if value is not None:
                new = node.copy()
                new.set(side, value)
                return new
    return None


def _quantified(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    """``x = ANY('{1,2}')``: the literal an array of ``x``'s type (text when unknown)."""
    inner = node.this if not isinstance(node, exp.Anonymous) else \
        (node.expressions[0] if len(node.expressions) == 1 else None)
    lit = inner.this if isinstance(inner, exp.Paren) else inner
    if not (isinstance(lit, exp.Literal) and lit.is_string):
        return None
    parent = node.parent
    other = parent.this if isinstance(parent, exp.Binary) and parent.expression is node \
        else None
    t = ctx.type_of(other)
    to = array_of(t if t is not None and not is_unknown(t) and not is_array(t)
                  else exp.DataType.build("TEXT"))
    value = array_value(lit, to)
    if isinstance(node, exp.Anonymous):
        return exp.Anonymous(this=node.this, expressions=[value])
    return node.__class__(this=exp.Paren(this=value))


def _dims(t: exp.DataType | None) -> int:
    n = 0
    while is_array(t):
        n += 1
        t = element(t)
    return n


#: coarse kinds (typeof.kind) -> PostgreSQL's type name, for a concatenation it refuses
_PG_NAMES = {"int": "integer", "number": "numeric", "text": "text", "bool": "boolean",
             "date": "date", "timestamp": "timestamp without time zone",
             "timestamptz": "timestamp with time zone", "interval": "interval",
             "bytea": "bytea", "json": "json", "jsonb": "jsonb"}
_NUMERIC_KINDS = frozenset({"int", "number"})


def _innermost(t: exp.DataType | None) -> tuple[str | None, int]:
    """(kind of the innermost element, dimensions) of array type ``t`` (0 for a scalar)."""
    depth = 0
    while is_array(t):
        t = element(t)  # type: ignore[arg-type]
        depth += 1
    return kind(t), depth


def _refuse_mismatch(node: exp.DPipe, ctx: Context, lt: exp.DataType | None,
                     rt: exp.DataType | None) -> None:
    """PostgreSQL's 42883 for ``a || b`` whose element types have no common type (an
    integer array and text), at the operator, when both are known."""
    (lk, ld), (rk, rd) = _innermost(lt), _innermost(rt)
    if lk is None or rk is None or "unknown" in (lk, rk) or lk == rk or \
            {lk, rk} <= _NUMERIC_KINDS or lk not in _PG_NAMES or rk not in _PG_NAMES:
        return
    at = node.expression.meta.get("start") if node.expression.meta else None
    if at is None:
        first = next((n for n in node.expression.walk() if n.meta.get("start") is not None),
                     None)
        at = first.meta.get("start") if first is not None else None
    position = ctx.sql.rfind("||", 0, at) + 1 if at is not None else 0
    raise PgError.by_sqlstate("42883")(
        f"operator does not exist: {_PG_NAMES[lk]}{'[]' * ld} || {_PG_NAMES[rk]}{'[]' * rd}",
        sqlstate="42883", position=position or None,
        hint="No operator matches the given name and argument types. You might need to "
             "add explicit type casts.")


def _concat(node: exp.DPipe, ctx: Context) -> exp.Expr | None:
    left, right = node.this, node.expression
    lt, rt = ctx.type_of(left), ctx.type_of(right)
    if not (is_array(lt) or is_array(rt)):
        return None
    _refuse_mismatch(node, ctx, lt, rt)
    if is_array(lt) and is_array(rt):
        dl, dr = _dims(lt), _dims(rt)
        if dl == dr:
            return _fn("list_concat", left.copy(), right.copy())
        if dl == dr + 1:
            return _fn("list_append", left.copy(), right.copy())
        if dr == dl + 1:
            return _fn("list_prepend", left.copy(), right.copy())
        return None
    array, other, array_left = (left, right, True) if is_array(lt) else (right, left, False)
    at, ot = (lt, rt) if array_left else (rt, lt)
    if isinstance(other, exp.Null):
        return array.copy()
    if isinstance(other, exp.Literal) and other.is_string:
        value = array_value(other, at)
        pair = (array.copy(), value) if array_left else (value, array.copy())
        return _fn("list_concat", *pair)
    if ot is None and not isinstance(other, (exp.Parameter, exp.Placeholder)):
        return None  # an unknown column: DuckDB's reading
    # (a parameter beside an array is an element, as drivers mostly mean it)
    if array_left:
        return _fn("list_append", array.copy(), other.copy())
    return _fn("list_prepend", other.copy(), array.copy())


# -- functions ---------------------------------------------------------------------------


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _int(node: exp.Expr) -> exp.Expr:
    return exp.Cast(this=node, to=exp.DataType.build("INT"))


def _lambda(var: str, body: exp.Expr) -> exp.Expr:
    return exp.Lambda(this=body, expressions=[exp.to_identifier(var)])


def _var(name: str) -> exp.Expr:
    return exp.column(name)


def _not_distinct(a: exp.Expr, b: exp.Expr) -> exp.Expr:
    return exp.NullSafeEQ(this=a, expression=b)


def _args(node: exp.Anonymous, low: int, high: int) -> list[exp.Expr] | None:
    args = node.expressions
    return [a.copy() for a in args] if low <= len(args) <= high else None


def _append(node, ctx):
    args = _args(node, 2, 2)
    return args and _fn("list_append", *args)


def _prepend(node, ctx):
    args = _args(node, 2, 2)
    return args and _fn("list_prepend", *args)


def _cat(node, ctx):
    args = _args(node, 2, 2)
    if not args:
        return None
    for i, a in enumerate(node.expressions):
        if isinstance(a, exp.Literal) and a.is_string:
            other = ctx.type_of(node.expressions[1 - i])
            if is_array(other):
                args[i] = array_value(a, other)
    return _fn("list_concat", *args)


def _remove(node, ctx):
    args = _args(node, 2, 2)
    if not args:
        return None
    array, value = args
    return _fn("list_filter", array, _lambda(
        "pgb_x", exp.Not(this=exp.Paren(this=_not_distinct(_var("pgb_x"), value)))))


def _replace(node, ctx):
    args = _args(node, 3, 3)
    if not args:
        return None
    array, old, new = args
    x = _var("pgb_x")
    return _fn("list_transform", array, _lambda(
        "pgb_x", exp.Case().when(_not_distinct(x, old), new).else_(x.copy())))


def _position(node, ctx):
    args = _args(node, 2, 3)
    if not args:
        return None
    array, value = args[0], args[1]
    i = _var("pgb_i")
    start = args[2] if len(args) == 3 else exp.Literal.number(1)
    found = _fn("list_filter", _fn("generate_series", exp.Cast(
        this=_fn("greatest", start, exp.Literal.number(1)),
        to=exp.DataType.build("BIGINT")), _fn("len", array.copy())), _lambda(
        "pgb_i", _not_distinct(exp.Bracket(this=array.copy(), expressions=[i]), value)))
    return _int(_first(found))


def _positions(node, ctx):
    args = _args(node, 2, 2)
    if not args:
        return None
    array, value = args
    i = _var("pgb_i")
    found = _fn("list_filter", _fn("generate_series", exp.Literal.number(1),
                                   _fn("len", array.copy())), _lambda(
        "pgb_i", _not_distinct(exp.Bracket(this=array.copy(), expressions=[i]), value)))
    return exp.Case().when(exp.Is(this=array.copy(), expression=exp.Null()), exp.Null()).else_(
        exp.Cast(this=found, to=exp.DataType.build("INT[]")))


def _first(value: exp.Expr) -> exp.Expr:
    """``value[1]`` (sqlglot keeps subscripts 0-based and writes DuckDB's 1-based ones)."""
    return exp.Bracket(this=value, expressions=[exp.Literal.number(0)])


def _level_length(array: exp.Expr, dim: int, dims: int) -> exp.Expr:
    """The length of dimension ``dim`` (1-based) of a value with ``dims`` dimensions."""
    value = array
    for _ in range(dim - 1):
        value = _first(value)
    return _fn("len", value)


def _by_dimension(node: exp.Anonymous, ctx: Context, answer) -> exp.Expr | None:
    """A per-dimension function: NULL for an empty array or a dimension it does not have."""
    args = _args(node, 2, 2)
    if not args:
        return None
    array, dim = args
    dims = max(_dims(ctx.type_of(node.expressions[0])), 1)
    if isinstance(dim, exp.Literal) and not dim.is_string and dim.this.isdigit():
        d = int(dim.this)
        if not 1 <= d <= dims:
            return exp.Cast(this=exp.Null(), to=exp.DataType.build("INT"))
        return _nonempty(array, _int(answer(array.copy(), d, dims)))
    case = exp.Case(this=dim)
    for d in range(1, dims + 1):
        case = case.when(exp.Literal.number(d), _int(answer(array.copy(), d, dims)))
    return _nonempty(array, case)


def _nonempty(array: exp.Expr, value: exp.Expr) -> exp.Expr:
    """``value`` for an array with elements; NULL for an empty or NULL one."""
    return exp.Case().when(exp.GT(this=_fn("len", array.copy()), expression=exp.Literal.number(0)),
                           value)


def _length(node, ctx):
    return _by_dimension(node, ctx, _level_length)


def _lower(node, ctx):
    return _by_dimension(node, ctx, lambda a, d, n: exp.Literal.number(1))


def _ndims(node, ctx):
    args = _args(node, 1, 1)
    if not args:
        return None
    dims = max(_dims(ctx.type_of(node.expressions[0])), 1)
    return _nonempty(args[0], _int(exp.Literal.number(dims)))


def _dims_text(node, ctx):
    args = _args(node, 1, 1)
    if not args:
        return None
    array = args[0]
    dims = max(_dims(ctx.type_of(node.expressions[0])), 1)
    parts: list[exp.Expr] = []
    for d in range(1, dims + 1):
        parts += [exp.Literal.string("[1:"), exp.cast(_level_length(array.copy(), d, dims),
                                                      "VARCHAR"), exp.Literal.string("]")]
    return _nonempty(array, exp.Concat(expressions=parts, safe=True))


def _cardinality(node, ctx):
    args = _args(node, 1, 1)
    if not args:
        return None
    value = args[0]
    for _ in range(_dims(ctx.type_of(node.expressions[0])) - 1):
        value = _fn("flatten", value)
    return _int(_fn("len", value))


def _to_string(node, ctx):
    args = _args(node, 2, 3)
    if not args:
        return None
    array, sep = args[0], args[1]
    t = ctx.type_of(node.expressions[0])
    inner = element(t) if is_array(t) else None
    x = _var("pgb_x")
    text: exp.Expr = exp.cast(x, "VARCHAR")
    if kind(inner) == "bool":
        text = bool_text(x)
    if len(args) == 3:
        text = exp.Coalesce(this=text, expressions=[args[2]])
    if text.sql("duckdb") != exp.cast(x, "VARCHAR").sql("duckdb"):
        array = _fn("list_transform", array, _lambda("pgb_x", text))
    return _fn("array_to_string", array, sep)


def _string_to_array(node, ctx):
    args = _args(node, 2, 3)
    if not args:
        return None
    text, sep = args[0], args[1]
    empty_list = exp.Cast(this=exp.Array(expressions=[]), to=exp.DataType.build("TEXT[]"))
    split = exp.Case().when(exp.EQ(this=text.copy(), expression=exp.Literal.string("")),
                            empty_list)
    if isinstance(sep, exp.Null):
        split = split.else_(_fn("string_split", text.copy(), exp.Literal.string("")))
    else:
        split = split.when(exp.Is(this=sep.copy(), expression=exp.Null()),
                           _fn("string_split", text.copy(), exp.Literal.string(""))).when(
            exp.EQ(this=sep.copy(), expression=exp.Literal.string("")),
            exp.Array(expressions=[text.copy()])).else_(_fn("string_split", text.copy(),
                                                            sep.copy()))
    if len(args) == 3:
        x = _var("pgb_x")
        split = _fn("list_transform", split, _lambda("pgb_x", exp.Case().when(
            _not_distinct(x, args[2]), exp.Null()).else_(x.copy())))
    return split


_FUNCTIONS = {
    "array_append": _append, "array_prepend": _prepend, "array_cat": _cat,
    "array_remove": _remove, "array_replace": _replace, "array_position": _position,
    "array_positions": _positions, "array_length": _length, "array_upper": _length,
    "array_lower": _lower, "array_ndims": _ndims, "array_dims": _dims_text,
    "cardinality": _cardinality, "array_to_string": _to_string,
    "string_to_array": _string_to_array,
}
