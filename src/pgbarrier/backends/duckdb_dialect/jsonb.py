"""PostgreSQL's json / jsonb operators and functions on DuckDB's JSON.

DuckDB has one ``JSON`` type (each session's ``jsonb`` is an alias of it); its own ``->`` /
``->>`` with a literal key or index answer as PostgreSQL. Rules this module keeps (an
operand is JSON when it is visibly so: a cast, a ``json[b]_*`` function, a JSON operator,
a column of JSON type, :mod:`.typeof`):

* ``->`` / ``->>`` with a key or index that is not a literal (a column, an expression):
  a text key is one key (DuckDB would read ``$..`` as a path), an integer an index
  (negative from the end); a parameter keeps DuckDB's reading (a string key, an index).
* ``#>`` / ``#>>`` with any path: a literal (``'{a,0}'``) becomes a JSON path when the
  statement is translated; anything else (``ARRAY['a','b']``, ``'{a,b}'::text[]``, a
  column, a parameter, read as ``text[]``) is built into one at run time. A path element
  of digits indexes an array (``-n`` from the end); a NULL element answers NULL.
  ``json[b]_extract_path[_text](j, VARIADIC keys)`` is the same.
* ``?`` / ``?|`` / ``?&``: a top-level key of an object, a string element of an array, or
  the string itself, as PostgreSQL; the keys of ``?|`` / ``?&`` are any ``text[]``.
* ``@>`` / ``<@`` where either side is JSON: with a literal on the contained side,
  PostgreSQL's containment exactly (an object's keys each contained, an array's elements
  each contained in some element, a scalar in an array's top level); otherwise DuckDB's
  ``json_contains``, which also finds a value nested deeper (``'{"a":{"b":1}}' @>
  '{"b":1}'`` is true there, false in PostgreSQL).
* ``jsonb - text`` (a key, or an array's string elements), ``- int`` (an index),
  ``- text[]``, ``#- path``; ``||`` of two JSON values (objects merged at the top level,
  the right one winning; otherwise arrays concatenated, a scalar as a one-element array);
  a scalar that cannot be deleted from is PostgreSQL's 22023.
* ``jsonb_set`` (``create_missing``), ``jsonb_insert`` (``insert_after``),
  ``json[b]_strip_nulls``, ``jsonb_pretty`` (PostgreSQL's layout; keys as the document
  has them), ``json[b]_array_elements[_text]``, ``json[b]_object_keys`` (set-returning,
  in the select list or FROM), ``json[b]_each[_text]`` in FROM (``key``, ``value``).
* ``json[b]_build_object`` -> ``json_object``; ``json[b]_build_array`` -> ``json_array``;
  ``json[b]_array_length`` of an array, else PostgreSQL's 22023 (DuckDB answers 0);
  ``json[b]_agg`` -> ``to_json(list(...))`` (DuckDB's list aggregate: ORDER BY and FILTER
  kept, NULL for no rows) and ``json[b]_object_agg`` -> ``json_group_object`` (with ORDER
  BY or other options: 0A000); ``to_jsonb`` ->
  ``to_json``; ``json[b]_typeof`` -> DuckDB's ``json_type`` named as PostgreSQL does.
* What has no DuckDB form is 0A000 naming it (:data:`UNSUPPORTED`: the SQL/JSON path
  language, ``json_populate_record``...).
"""

from __future__ import annotations

import json
import re

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.arrays import array_value
from pgbarrier.backends.duckdb_dialect.typeof import Context, is_array, is_json, kind
from pgbarrier.errors import FeatureNotSupported
from pgbarrier.pgproto.jsonb import jsonb_text

__all__ = ["UNSUPPORTED", "bound_literal", "rewrite"]

_JSON_BUILD = {"json_build_object": "json_object", "jsonb_build_object": "json_object",
               "json_build_array": "json_array", "jsonb_build_array": "json_array",
               "to_jsonb": "to_json"}
#: DuckDB's json_type -> PostgreSQL's json[b]_typeof
_JSON_TYPEOF = {"OBJECT": "object", "ARRAY": "array", "VARCHAR": "string",
                "BOOLEAN": "boolean", "NULL": "null", "BIGINT": "number", "UBIGINT": "number",
                "DOUBLE": "number", "HUGEINT": "number", "UHUGEINT": "number"}
_NUMBER_TYPES = ("BIGINT", "UBIGINT", "DOUBLE", "HUGEINT", "UHUGEINT")
#: PostgreSQL JSON functions DuckDB has no form of
UNSUPPORTED = frozenset({
    "jsonb_path_query", "jsonb_path_query_array", "jsonb_path_query_first",
    "jsonb_path_exists", "jsonb_path_match", "jsonb_path_query_tz",
    "jsonb_path_query_array_tz", "jsonb_path_query_first_tz", "jsonb_path_exists_tz",
    "jsonb_path_match_tz", "json_populate_record", "jsonb_populate_record",
    "json_populate_recordset", "jsonb_populate_recordset", "json_to_record",
    "jsonb_to_record", "json_to_recordset", "jsonb_to_recordset", "jsonb_set_lax",
})
_DIGITS = re.compile(r"-?[0-9]+\Z")


# -- helpers -----------------------------------------------------------------------------


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _str(text: str) -> exp.Expr:
    return exp.Literal.string(text)


def _lambda(var: str, body: exp.Expr) -> exp.Expr:
    return exp.Lambda(this=body, expressions=[exp.to_identifier(var)])


def _json_type(node: exp.Expr | None, ctx: Context) -> bool:
    return node is not None and is_json(ctx.type_of(node))


def _is_parameter(node: exp.Expr) -> bool:
    return isinstance(node, (exp.Parameter, exp.Placeholder))


def _canonical(literal: exp.Literal) -> exp.Literal:
    """A jsonb literal's text as PostgreSQL stores it (keys sorted and unique): what
    DuckDB's JSON then reads, prints and extracts as PostgreSQL's jsonb would."""
    text = jsonb_text(literal.this)
    if text == literal.this:
        return literal
    new = exp.Literal.string(text)
    new.meta.update(literal.meta)
    return new


def _doc(node: exp.Expr, ctx: Context, jsonb: bool = True) -> exp.Expr:
    """``node`` as a DuckDB JSON value (a cast unless it is JSON already); a literal read
    as jsonb (``jsonb``) in its canonical text."""
    if isinstance(node, exp.Literal) and node.is_string and jsonb:
        return exp.Cast(this=_canonical(node), to=exp.DataType.build("JSON"))
    if _json_type(node, ctx):
        return node.copy()
    return exp.Cast(this=node.copy(), to=exp.DataType.build("JSON"))


def bound_literal(value: exp.Expr, to: exp.DataType | None) -> exp.Expr | None:
    """A string literal bound for a jsonb column, in jsonb's canonical text."""
    if kind(to) == "jsonb" and isinstance(value, exp.Literal) and value.is_string:
        new = _canonical(value)
        return new if new is not value else None
    return None


def _error(text: str) -> exp.Expr:
    return _fn("error", _str(text))


def _null_or(doc: exp.Expr, value: exp.Expr) -> exp.Expr:
    return exp.Case().when(exp.Is(this=doc.copy(), expression=exp.Null()), exp.Null()).else_(
        value)


def _key_path(key: str) -> str:
    return '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _static_path(items: list[exp.Expr]) -> exp.Expr:
    """A JSON path from a PostgreSQL path's literal elements (NULL: no path)."""
    parts = ["$"]
    for item in items:
        if not isinstance(item, exp.Literal):
            return exp.Null()  # a NULL element: PostgreSQL answers NULL
        key = item.this
        if _DIGITS.match(key):
            n = int(key)
            parts.append(f"[{n}]" if n >= 0 else f"[#{n}]")
        else:
            parts.append(_key_path(key))
    return _str("".join(parts))


def _text_array(node: exp.Expr, ctx: Context) -> exp.Expr:
    """A ``text[]`` operand (keys, a path) as a DuckDB ``VARCHAR[]``."""
    if isinstance(node, exp.Literal) and node.is_string:
        return array_value(node, exp.DataType.build("TEXT[]"))
    if isinstance(node, exp.Array) or is_array(ctx.type_of(node)):
        return node.copy()
    return exp.Cast(this=node.copy(), to=exp.DataType.build("VARCHAR[]"))


def _path(node: exp.Expr, ctx: Context) -> exp.Expr:
    """A PostgreSQL ``text[]`` path as a DuckDB JSON path (built at run time unless it is
    a literal)."""
    if isinstance(node, exp.Literal) and node.is_string:
        cast = array_value(node, exp.DataType.build("TEXT[]"))
        return _static_path(cast.this.expressions)
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Array) and all(
            isinstance(e, (exp.Literal, exp.Null)) for e in node.this.expressions):
        return _static_path(node.this.expressions)  # '{a,b}'::text[], read as an array
    if isinstance(node, exp.Array) and all(isinstance(e, (exp.Literal, exp.Null))
                                           for e in node.expressions):
        return _static_path(node.expressions)
    items = _text_array(node, ctx)
    x = exp.column("pgb_k")
    step = exp.Case().when(_fn("regexp_full_match", x, _str("[0-9]+")),
                           exp.Concat(expressions=[_str("["), x.copy(), _str("]")], safe=True)
                           ).when(_fn("regexp_full_match", x.copy(), _str("-[0-9]+")),
                                  exp.Concat(expressions=[_str("[#"), x.copy(), _str("]")],
                                             safe=True)).else_(
        exp.Concat(expressions=[_str('."'), _fn("replace", _fn("replace", x.copy(), _str("\\"),
                                                               _str("\\\\")),
                                                _str('"'), _str('\\"')), _str('"')], safe=True))
    built = exp.Concat(expressions=[_str("$"), _fn("array_to_string", _fn(
        "list_transform", items, _lambda("pgb_k", step)), _str(""))], safe=True)
    return exp.Case().when(exp.Not(this=exp.Is(this=_fn("list_position", items.copy(),
                                                        exp.Null()), expression=exp.Null())),
                           exp.Null()).else_(built)


def _candidates(doc: exp.Expr) -> exp.Expr:
    """What ``?`` matches in ``doc``: an object's keys, an array's string elements, a
    string itself."""
    x = exp.column("pgb_e")
    strings = _fn("list_transform", _fn("list_filter", _elements(doc.copy()), _lambda(
        "pgb_e", exp.EQ(this=_fn("json_type", x), expression=_str("VARCHAR")))),
        _lambda("pgb_e", _fn("json_extract_string", x.copy(), _str("$"))))
    return exp.Case(this=_fn("json_type", doc.copy())).when(
        _str("OBJECT"), _fn("json_keys", doc.copy())).when(
        _str("ARRAY"), strings).when(
        _str("VARCHAR"), exp.Array(expressions=[_fn("json_extract_string", doc.copy(),
                                                    _str("$"))])).else_(
        exp.Cast(this=exp.Array(expressions=[]), to=exp.DataType.build("VARCHAR[]")))


def _elements(doc: exp.Expr) -> exp.Expr:
    """The elements of JSON array ``doc`` as a list (typed: DuckDB folds a constant
    non-array to a scalar NULL, which a lambda cannot take)."""
    return exp.Cast(this=_fn("json_extract", doc, _str("$[*]")),
                    to=exp.DataType.build("JSON[]", dialect="duckdb"))


# -- containment -----------------------------------------------------------------------


def _scalar_eq(x: exp.Expr, value: object) -> exp.Expr:
    """JSON value ``x`` equals the JSON scalar ``value`` (as PostgreSQL compares them)."""
    jt = _fn("json_type", x.copy())
    if value is None:
        return exp.EQ(this=jt, expression=_str("NULL"))
    if isinstance(value, bool):
        return exp.And(this=exp.EQ(this=jt, expression=_str("BOOLEAN")), expression=exp.EQ(
            this=_fn("json_extract_string", x.copy(), _str("$")),
            expression=_str("true" if value else "false")))
    if isinstance(value, (int, float)):
        return exp.And(this=exp.In(this=jt, expressions=[_str(t) for t in _NUMBER_TYPES]),
                       expression=exp.EQ(this=exp.TryCast(
                           this=_fn("json_extract_string", x.copy(), _str("$")),
                           to=exp.DataType.build("DOUBLE")),
                           expression=exp.Literal.number(repr(float(value)))))
    return exp.And(this=exp.EQ(this=jt, expression=_str("VARCHAR")), expression=exp.EQ(
        this=_fn("json_extract_string", x.copy(), _str("$")), expression=_str(str(value))))


def _contains(hay: exp.Expr, needle: object, depth: int = 0) -> exp.Expr:
    """PostgreSQL's ``hay @> needle`` for a needle known now (parsed JSON)."""
    jt = _fn("json_type", hay.copy())
    if isinstance(needle, dict):
        cond: exp.Expr = exp.EQ(this=jt, expression=_str("OBJECT"))
        for key, value in needle.items():
            inner = _fn("json_extract", hay.copy(), _str("$" + _key_path(key)))
            cond = exp.And(this=cond, expression=exp.And(
                this=exp.Not(this=exp.Is(this=inner, expression=exp.Null())),
                expression=exp.Paren(this=_contains(inner.copy(), value, depth + 1))))
        return cond
    var = f"pgb_c{depth}"
    x = exp.column(var)
    if isinstance(needle, list):
        cond = exp.EQ(this=jt, expression=_str("ARRAY"))
        for item in needle:
            match = _contains(x, item, depth + 1) if isinstance(item, (dict, list)) \
                else _scalar_eq(x, item)
            cond = exp.And(this=cond, expression=exp.GT(this=_fn("len", _fn(
                "list_filter", _elements(hay.copy()), _lambda(var, match))),
                expression=exp.Literal.number(0)))
        return cond
    # a scalar: itself, or an element of an array's top level
    in_array = exp.GT(this=_fn("len", _fn("list_filter", _elements(hay.copy()),
                                          _lambda(var, _scalar_eq(x, needle)))),
                      expression=exp.Literal.number(0))
    return exp.Case().when(exp.EQ(this=jt, expression=_str("ARRAY")), in_array).else_(
        _scalar_eq(hay, needle))


def _literal_json(node: exp.Expr) -> tuple[bool, object]:
    """(whether ``node`` is a JSON literal, its value)."""
    inner = node.this if isinstance(node, exp.Cast) else node
    if isinstance(inner, exp.Literal) and inner.is_string:
        try:
            return True, json.loads(inner.this)
        except ValueError:
            return False, None
    return False, None


def _containment(node: exp.Binary, ctx: Context) -> exp.Expr | None:
    if not (_json_type(node.this, ctx) or _json_type(node.expression, ctx)):
        return None
    outer, inner = (node.this, node.expression) if isinstance(node, exp.ArrayContainsAll) \
        else (node.expression, node.this)
    known, needle = _literal_json(inner)
    hay = _doc(outer, ctx)
    if known:
        return _null_or(hay, _contains(hay, needle))
    return _fn("json_contains", hay, _doc(inner, ctx))


# -- deletion and concatenation ---------------------------------------------------------


def _delete(node: exp.Sub, ctx: Context) -> exp.Expr | None:
    if not _json_type(node.this, ctx):
        return None
    doc = _doc(node.this, ctx)
    right = node.expression
    rt = ctx.type_of(right)
    x = exp.column("pgb_e")
    if kind(rt) == "int":
        index = right.copy()
        path = exp.Case().when(exp.GTE(this=index, expression=exp.Literal.number(0)), exp.Concat(
            expressions=[_str("$["), exp.cast(index.copy(), "VARCHAR"), _str("]")],
            safe=True)).else_(
            exp.Concat(expressions=[_str("$[#"), exp.cast(index.copy(), "VARCHAR"), _str("]")],
                       safe=True))
        return _null_or(doc, exp.Case(this=_fn("json_type", doc.copy())).when(
            _str("ARRAY"), _fn("json_remove", doc.copy(), path)).when(
            _str("OBJECT"), _error("cannot delete from object using integer index")).else_(
            _error("cannot delete from scalar")))
    if is_array(rt) or isinstance(right, exp.Array):
        keys = _text_array(right, ctx)
        listed = keys.this if isinstance(keys, exp.Cast) else keys
        if isinstance(listed, exp.Array) and all(isinstance(k, exp.Literal)
                                                 for k in listed.expressions):
            removed = doc.copy()
            for k in listed.expressions:
                removed = _fn("json_remove", removed, _str("$" + _key_path(k.this)))
        else:
            as_map = exp.DataType.build("MAP(VARCHAR, JSON)")
            e = exp.column("pgb_m")
            removed = _fn("to_json", _fn("map_from_entries", _fn("list_filter", _fn(
                "map_entries", exp.Cast(this=doc.copy(), to=as_map)), _lambda("pgb_m", exp.Not(
                    this=_fn("list_contains", keys.copy(), exp.Dot(
                        this=e, expression=exp.to_identifier("key"))))))))
        kept = _lambda("pgb_e", exp.Not(this=exp.Paren(this=exp.And(
            this=exp.EQ(this=_fn("json_type", x), expression=_str("VARCHAR")),
            expression=_fn("list_contains", keys.copy(), _fn("json_extract_string", x.copy(),
                                                            _str("$")))))))
        return _null_or(doc, exp.Case(this=_fn("json_type", doc.copy())).when(
            _str("OBJECT"), removed).when(
            _str("ARRAY"), _fn("to_json", _fn("list_filter", _elements(doc.copy()), kept))
        ).else_(_error("cannot delete from scalar")))
    if kind(rt) not in ("text", "unknown") and not _is_parameter(right):
        return None  # a parameter is a key, as PostgreSQL resolves jsonb - unknown
    key = right.copy()
    kept = _lambda("pgb_e", exp.Not(this=exp.Paren(this=exp.And(
        this=exp.EQ(this=_fn("json_type", x), expression=_str("VARCHAR")),
        expression=exp.EQ(this=_fn("json_extract_string", x.copy(), _str("$")),
                          expression=key.copy())))))
    path = _str("$" + _key_path(right.this)) if isinstance(right, exp.Literal) \
        else _key_expr(key.copy())
    return _null_or(doc, exp.Case(this=_fn("json_type", doc.copy())).when(
        _str("OBJECT"), _fn("json_remove", doc.copy(), path)).when(
        _str("ARRAY"), _fn("to_json", _fn("list_filter", _elements(doc.copy()), kept))).else_(
        _error("cannot delete from scalar")))


def _key_expr(key: exp.Expr) -> exp.Expr:
    """A JSON path of one key, built at run time."""
    return exp.Concat(expressions=[_str('$."'), _fn("replace", _fn(
        "replace", key, _str("\\"), _str("\\\\")), _str('"'), _str('\\"')), _str('"')],
        safe=True)


def _delete_path(node: exp.Expr, ctx: Context) -> exp.Expr:
    doc = _doc(node.this, ctx)
    return _null_or(doc, exp.Case(this=_fn("json_type", doc.copy())).when(
        _str("OBJECT"), _fn("json_remove", doc.copy(), _path(node.expression, ctx))).when(
        _str("ARRAY"), _fn("json_remove", doc.copy(), _path(node.expression, ctx))).else_(
        _error("cannot delete path in scalar")))


def _as_list(doc: exp.Expr) -> exp.Expr:
    return exp.Case().when(exp.EQ(this=_fn("json_type", doc.copy()), expression=_str("ARRAY")),
                           _elements(doc.copy())).else_(exp.Array(expressions=[doc.copy()]))


def _concat(node: exp.DPipe, ctx: Context) -> exp.Expr | None:
    lt, rt = ctx.type_of(node.this), ctx.type_of(node.expression)
    if not (is_json(lt) or is_json(rt)) or is_array(lt) or is_array(rt):
        return None
    if not all(is_json(t) or kind(t) == "unknown" or _is_parameter(side)
               for t, side in ((lt, node.this), (rt, node.expression))):
        return None  # jsonb || text: PostgreSQL's text concatenation
    a, b = _doc(node.this, ctx), _doc(node.expression, ctx)
    as_map = exp.DataType.build("MAP(VARCHAR, JSON)")
    both_objects = exp.And(this=exp.EQ(this=_fn("json_type", a.copy()), expression=_str("OBJECT")),
                           expression=exp.EQ(this=_fn("json_type", b.copy()),
                                             expression=_str("OBJECT")))
    merged = _fn("to_json", _fn("map_concat", exp.Cast(this=a.copy(), to=as_map),
                                exp.Cast(this=b.copy(), to=as_map.copy())))
    joined = _fn("to_json", _fn("list_concat", _as_list(a), _as_list(b)))
    either_null = exp.Or(this=exp.Is(this=a.copy(), expression=exp.Null()),
                         expression=exp.Is(this=b.copy(), expression=exp.Null()))
    return exp.Case().when(either_null, exp.Cast(this=exp.Null(), to=exp.DataType.build("JSON"))
                           ).when(both_objects, merged).else_(joined)


# -- functions ---------------------------------------------------------------------------


def _key_exists(value: exp.Expr, key: exp.Expr, ctx: Context) -> exp.Expr:
    doc = _doc(value, ctx)
    return _null_or(doc, _fn("list_contains", _candidates(doc), key.copy()))


def _keys_exist(node: exp.Expr, ctx: Context, fn: str) -> exp.Expr:
    doc = _doc(node.this, ctx)
    return _null_or(doc, _fn(fn, _candidates(doc), _text_array(node.expression, ctx)))


def _array_length(value: exp.Expr, ctx: Context) -> exp.Expr:
    """PostgreSQL's json[b]_array_length: an error for anything but an array (DuckDB: 0)."""
    doc = _doc(value, ctx)
    kind_ = _fn("json_type", doc.copy())
    return exp.Case(this=kind_).when(
        _str("ARRAY"), exp.cast(_fn("json_array_length", doc.copy()), "INT")).when(
        _str("OBJECT"), _error("cannot get array length of a non-array")).else_(
        _null_or(doc, _error("cannot get array length of a scalar")))


def _split_path(node: exp.Expr) -> tuple[str, str | int] | None:
    """A literal path as (its parent's JSON path, its last key or index); None when it is
    not a literal of one element or more."""
    if not (isinstance(node, exp.Literal) and node.is_string):
        return None
    items = array_value(node, exp.DataType.build("TEXT[]")).this.expressions
    if not items or not all(isinstance(i, exp.Literal) for i in items):
        return None
    parent = _static_path(items[:-1]).this
    last = items[-1].this
    return parent, int(last) if _DIGITS.match(last) else last


def _set(node: exp.Anonymous, ctx: Context) -> exp.Expr | None:
    """jsonb_set(target, path, new [, create_missing]): the last element of the path is
    set when its parent exists (PostgreSQL creates no other level)."""
    args = node.expressions
    if not 3 <= len(args) <= 4:
        return None
    doc = _doc(args[0], ctx)
    if isinstance(args[1], exp.Literal) and args[1].is_string and \
            not array_value(args[1], exp.DataType.build("TEXT[]")).this.expressions:
        return doc  # an empty path changes nothing
    path = _path(args[1], ctx)
    value = _doc(args[2], ctx)
    flag = args[3].copy() if len(args) == 4 else None
    setter = _fn("json_set", doc.copy(), path, value)
    if flag is not None:
        setter = exp.Case().when(flag, setter).else_(
            _fn("json_replace", doc.copy(), path.copy(), value.copy()))
    split = _split_path(args[1])
    if split is not None and split[0] != "$":
        setter = exp.Case().when(exp.Is(this=_fn("json_extract", doc.copy(), _str(split[0])),
                                        expression=exp.Null()), doc.copy()).else_(setter)
    return _null_or(doc, setter)


def _insert(node: exp.Anonymous, ctx: Context) -> exp.Expr | None:
    """jsonb_insert(target, path, new [, insert_after]): before (after) an array element,
    or a new key of an object (an existing one is PostgreSQL's 22023); a literal path."""
    args = node.expressions
    if not 3 <= len(args) <= 4:
        return None
    split = _split_path(args[1])
    if split is None:
        raise FeatureNotSupported("jsonb_insert with a path that is not a literal is not "
                                  "supported by pgbarrier on DuckDB")
    parent_path, last = split
    doc = _doc(args[0], ctx)
    value = _doc(args[2], ctx)
    after = args[3].copy() if len(args) == 4 else exp.false()
    parent = doc.copy() if parent_path == "$" else _fn("json_extract", doc.copy(),
                                                        _str(parent_path))
    elems = _elements(parent.copy())
    count = _fn("len", elems.copy())
    if isinstance(last, int):
        # the position of the new element, 0-based, clamped as PostgreSQL does
        at = exp.Literal.number(last) if last >= 0 else exp.Add(
            this=count.copy(), expression=exp.Literal.number(last))
        at = exp.Add(this=at, expression=exp.Cast(this=after, to=exp.DataType.build("INT")))
        at = _fn("greatest", _fn("least", at, count.copy()), exp.Literal.number(0))
        inserted = _fn("to_json", _fn("list_concat", _fn("list_concat", _fn(
            "list_slice", elems.copy(), exp.Literal.number(1), at), exp.Array(
            expressions=[value.copy()])), _fn("list_slice", elems.copy(), exp.Add(
                this=at.copy(), expression=exp.Literal.number(1)), count.copy())))
        new_parent: exp.Expr = exp.Case(this=_fn("json_type", parent.copy())).when(
            _str("ARRAY"), inserted).when(_str("OBJECT"), _fn(
                "json_insert", parent.copy(), _str("$" + _key_path(str(last))), value.copy())
        ).else_(parent.copy())
    else:
        key_path = "$" + _key_path(last)
        new_parent = exp.Case(this=_fn("json_type", parent.copy())).when(
            _str("OBJECT"), exp.Case().when(exp.Is(this=_fn(
                "json_extract", parent.copy(), _str(key_path)), expression=exp.Null()), _fn(
                "json_insert", parent.copy(), _str(key_path), value.copy())).else_(
                _error("cannot replace existing key"))).else_(parent.copy())
    result = new_parent if parent_path == "$" else exp.Case().when(
        exp.Is(this=parent.copy(), expression=exp.Null()), doc.copy()).else_(
        _fn("json_set", doc.copy(), _str(parent_path), new_parent))
    return _null_or(doc, result)


def _set_returning(node: exp.Anonymous, ctx: Context, name: str) -> exp.Expr | None:
    if len(node.expressions) != 1:
        return None
    doc = _doc(node.expressions[0], ctx)
    if name.endswith("object_keys"):
        values: exp.Expr = _fn("json_keys", doc.copy())
        check = exp.Case(this=_fn("json_type", doc.copy())).when(
            _str("OBJECT"), values).when(_str("ARRAY"), _error(
                "cannot call %s on an array" % name)).else_(_null_or(
                    doc, _error("cannot call %s on a scalar" % name)))
        return _fn("unnest", check)
    text = name.endswith("_text")
    values = exp.Cast(this=_fn("json_extract_string" if text else "json_extract", doc.copy(),
                               _str("$[*]")),
                      to=exp.DataType.build("VARCHAR[]" if text else "JSON[]", dialect="duckdb"))
    check = exp.Case(this=_fn("json_type", doc.copy())).when(_str("ARRAY"), values).when(
        _str("OBJECT"), _error("cannot extract elements from an object")).else_(
        _null_or(doc, _error("cannot extract elements from a scalar")))
    return _fn("unnest", check)


def _each(node: exp.Anonymous, ctx: Context, name: str) -> exp.Expr | None:
    """``json[b]_each[_text](j)`` in FROM: (key, value) of an object."""
    if len(node.expressions) != 1 or not isinstance(node.parent, exp.Table):
        return None
    doc = _doc(node.expressions[0], ctx)
    value = "json_extract_string(value, '$')" if name.endswith("_text") else "value"
    from sqlglot import parse_one
    select = parse_one(f"SELECT key, {value} AS value FROM json_each(pgb_doc)", read="duckdb")
    for col in list(select.find_all(exp.Column)):
        if col.name == "pgb_doc":
            col.replace(doc)
    return exp.Subquery(this=select)


_SET_RETURNING = ("json_array_elements", "jsonb_array_elements", "json_array_elements_text",
                  "jsonb_array_elements_text", "json_object_keys", "jsonb_object_keys")
_EACH = ("json_each", "jsonb_each", "json_each_text", "jsonb_each_text")


def _function(node: exp.Anonymous, ctx: Context) -> exp.Expr | None:
    name = node.name.lower()
    args = node.expressions
    if name in UNSUPPORTED:
        raise FeatureNotSupported(f"{name} is not supported by pgbarrier on DuckDB")
    if name in _JSON_BUILD:
        return _fn(_JSON_BUILD[name], *[e.copy() for e in args])
    if name in ("json_typeof", "jsonb_typeof") and len(args) == 1:
        case = exp.Case(this=_fn("json_type", args[0].copy()))
        for duck, pg in _JSON_TYPEOF.items():
            case = case.when(_str(duck), _str(pg))
        return case
    if name in ("json_array_length", "jsonb_array_length") and len(args) == 1:
        return _array_length(args[0], ctx)
    if name in ("json_extract_path", "jsonb_extract_path", "json_extract_path_text",
                "jsonb_extract_path_text") and args:
        doc = _doc(args[0], ctx)
        keys = args[1:]
        if len(keys) == 1 and isinstance(keys[0], exp.Variadic):
            path = _path(keys[0].this, ctx)
        elif all(isinstance(k, exp.Literal) and k.is_string for k in keys):
            path = _static_path(keys)
        else:
            path = _path(exp.Array(expressions=[exp.cast(k.copy(), "VARCHAR") for k in keys]),
                         ctx)
        fn = "json_extract_string" if name.endswith("_text") else "json_extract"
        return _fn(fn, doc, path)
    if name == "jsonb_set":
        return _set(node, ctx)
    if name == "jsonb_insert":
        return _insert(node, ctx)
    if name in ("json_strip_nulls", "jsonb_strip_nulls") and len(args) == 1:
        return _fn("json_strip_nulls", _doc(args[0], ctx))
    if name == "jsonb_pretty" and len(args) == 1:
        doc = _doc(args[0], ctx)
        return _fn("json_pretty", doc)
    if name in _SET_RETURNING:
        return _set_returning(node, ctx, name)
    if name in _EACH:
        return _each(node, ctx, name)
    return None


_OPERATOR_PARENTS = (exp.Binary, exp.Unary, exp.In, exp.Between, exp.Is)


def _is_list_json(node: exp.Expr) -> bool:
    """``to_json(list(...))``: json[b]_agg as translated."""
    return isinstance(node, exp.Anonymous) and node.name.lower() == "to_json" and \
        len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Anonymous) and \
        node.expressions[0].name.lower() == "list"


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and \
            node.this.is_string and kind(node.args.get("to")) == "jsonb":
        new = _canonical(node.this)
        return None if new is node.this else exp.Cast(this=new, to=node.args["to"].copy())
    if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)) and \
            isinstance(node.parent, _OPERATOR_PARENTS) and \
            isinstance(node.expression, (exp.JSONPath, exp.Neg, exp.Literal)):
        # DuckDB binds -> / ->> looser than PostgreSQL (j ->> 'a' = 'x' is j ->> ('a' = 'x')
        # there): kept apart by parentheses
        return exp.Paren(this=node.copy())
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("json_agg", "jsonb_agg") \
            and len(node.expressions) == 1:
        # DuckDB's list aggregate (with ORDER BY / FILTER), as JSON: NULL for no rows
        return _fn("to_json", _fn("list", node.expressions[0].copy()))
    if isinstance(node, exp.Filter) and _is_list_json(node.this):
        inner = node.this.expressions[0]
        return _fn("to_json", exp.Filter(this=inner.copy(),
                                         expression=node.expression.copy()))
    if isinstance(node, (exp.JSONBExtract, exp.JSONBExtractScalar)):
        fn = "json_extract" if isinstance(node, exp.JSONBExtract) else "json_extract_string"
        return _fn(fn, _doc(node.this, ctx), _path(node.expression, ctx))
    if isinstance(node, (exp.JSONExtract, exp.JSONExtractScalar)):
        key = node.expression
        if isinstance(key, (exp.JSONPath, exp.Neg, exp.Literal)):
            return None  # DuckDB's own ->, the same
        kt = kind(ctx.type_of(key))
        if kt == "text":
            path = _key_expr(key.copy())
        elif kt == "int":
            path = exp.Concat(expressions=[_str("$["), exp.cast(key.copy(), "VARCHAR"),
                                           _str("]")], safe=True)
        else:
            return None
        fn = "json_extract" if isinstance(node, exp.JSONExtract) else "json_extract_string"
        return _fn(fn, _doc(node.this, ctx), path)
    if isinstance(node, exp.JSONBContainsTopKey):
        return _key_exists(node.this, node.expression, ctx)
    if isinstance(node, exp.JSONBContainsAnyTopKeys):
        return _keys_exist(node, ctx, "list_has_any")
    if isinstance(node, exp.JSONBContainsAllTopKeys):
        return _keys_exist(node, ctx, "list_has_all")
    if isinstance(node, exp.JSONBDeleteAtPath):
        return _delete_path(node, ctx)
    if isinstance(node, (exp.ArrayContainsAll, exp.ArrayContainedBy)):
        return _containment(node, ctx)
    if isinstance(node, exp.Sub):
        return _delete(node, ctx)
    if isinstance(node, exp.DPipe):
        return _concat(node, ctx)
    if isinstance(node, exp.JSONObjectAgg) and len(node.expressions) == 2 and \
            not any(v for k, v in node.args.items() if k != "expressions"):
        return _fn("json_group_object", *[e.copy() for e in node.expressions])
    if isinstance(node, (exp.JSONArrayAgg, exp.JSONBObjectAgg)):
        plain = {k for k, v in node.args.items() if v is not None and v is not False}
        if isinstance(node, exp.JSONArrayAgg) and plain == {"this"}:
            return _fn("to_json", _fn("list", node.this.copy()))
        if isinstance(node, exp.JSONBObjectAgg) and plain == {"this", "expression"}:
            return _fn("json_group_object", node.this.copy(), node.expression.copy())
        raise FeatureNotSupported("json_agg / json_object_agg with ORDER BY or options are "
                                  "not supported by pgbarrier on DuckDB")
    if isinstance(node, exp.Anonymous):
        return _function(node, ctx)
    return None

