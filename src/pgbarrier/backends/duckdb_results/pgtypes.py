"""PostgreSQL's types as the result-type inference reasons about them.

Rules this module keeps:

* A type is a :class:`PgType`: PostgreSQL's OID and type modifier (``-1`` when none).
  ``UNKNOWN`` is the type of an untyped string literal or ``NULL`` (PostgreSQL sends such
  a select-list item as ``text``).
* :func:`common` is PostgreSQL's ``select_common_type`` for the cases clients write
  (``CASE``, ``COALESCE``, ``GREATEST``, ``VALUES`` rows): unknowns take the other
  type, numbers widen along ``int2 < int4 < int8 < numeric < float4 < float8``, strings of
  different kinds are ``text``, ``date < timestamp < timestamptz``; anything else that
  differs is not known (None). A type modifier survives only when every input has it.
* :func:`of_datatype` reads a cast's target (sqlglot's ``DataType``) as PostgreSQL's type,
  with its modifier (``numeric(10,2)``, ``varchar(5)``); :func:`regtype_name` is what
  ``pg_typeof`` prints for a type (``integer``, ``character varying``, ``numeric[]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from pgbarrier.backends.pgcatalog.declared import declared_type
from pgbarrier.backends.duckdb_types import _BUILTIN_NAMES, _oid_of
from pgbarrier.pgproto import types as pgt

__all__ = ["PgType", "common", "of_datatype", "regtype_name"]

REGTYPE = 2206


@dataclass(frozen=True)
class PgType:
    oid: int
    typmod: int = -1

    @property
    def plain(self) -> PgType:
        return self if self.typmod == -1 else PgType(self.oid)

    @property
    def element(self) -> PgType | None:
        elem = pgt.ELEMENT_OF.get(self.oid)
        return PgType(elem) if elem is not None else None

    def array(self) -> PgType | None:
        arr = pgt.ARRAY_OF.get(self.oid)
        return PgType(arr) if arr is not None else None


BOOL, INT2, INT4, INT8 = PgType(pgt.BOOL), PgType(pgt.INT2), PgType(pgt.INT4), PgType(pgt.INT8)
NUMERIC, FLOAT4, FLOAT8 = PgType(pgt.NUMERIC), PgType(pgt.FLOAT4), PgType(pgt.FLOAT8)
TEXT, VARCHAR, BPCHAR, NAME = PgType(pgt.TEXT), PgType(pgt.VARCHAR), PgType(pgt.BPCHAR), \
    PgType(pgt.NAME)
DATE, TIME, TIMETZ = PgType(pgt.DATE), PgType(pgt.TIME), PgType(pgt.TIMETZ)
TIMESTAMP, TIMESTAMPTZ, INTERVAL = PgType(pgt.TIMESTAMP), PgType(pgt.TIMESTAMPTZ), \
    PgType(pgt.INTERVAL)
BYTEA, JSON, JSONB, UUID = PgType(pgt.BYTEA), PgType(pgt.JSON), PgType(pgt.JSONB), \
    PgType(pgt.UUID)
UNKNOWN = PgType(pgt.UNKNOWN)
REGTYPE_T = PgType(REGTYPE)

#: the numeric category in PostgreSQL's order of preference (later wins)
NUMBERS = (pgt.INT2, pgt.INT4, pgt.INT8, pgt.NUMERIC, pgt.FLOAT4, pgt.FLOAT8)
INTEGERS = frozenset({pgt.INT2, pgt.INT4, pgt.INT8})
STRINGS = frozenset({pgt.TEXT, pgt.VARCHAR, pgt.BPCHAR, pgt.NAME})
_DATETIMES = (pgt.DATE, pgt.TIMESTAMP, pgt.TIMESTAMPTZ)


def is_number(t: PgType | None) -> bool:
    return t is not None and t.oid in NUMBERS


def is_integer(t: PgType | None) -> bool:
    return t is not None and t.oid in INTEGERS


def common(types: list[PgType | None]) -> PgType | None:
    """PostgreSQL's common type of ``types`` (None: not known here)."""
    if any(t is None for t in types):
        return None
    known = [t for t in types if t != UNKNOWN]
    if not known:
        return TEXT if types else None
    oids = {t.oid for t in known}
    if len(oids) == 1:
        mods = {t.typmod for t in known}
        return known[0] if len(mods) == 1 else known[0].plain
    if oids <= set(NUMBERS):
        return PgType(max(oids, key=NUMBERS.index))
    if oids <= STRINGS:
        return TEXT
    if oids <= set(_DATETIMES):
        return PgType(max(oids, key=_DATETIMES.index))
    return None


def of_datatype(node: exp.Expr | None) -> PgType | None:
    """A cast target as PostgreSQL's type (with its modifier); None when not known."""
    if not isinstance(node, exp.DataType):
        return None
    T = exp.DataType.Type
    if node.this == T.ARRAY:
        inner = of_datatype(node.expressions[0]) if node.expressions else None
        return inner.plain.array() if inner is not None else None
    if node.this == T.USERDEFINED:
        kind = node.args.get("kind")
        name = (kind.expression if isinstance(kind, exp.Dot) else kind)
        name = name.name.lower() if name is not None else ""
        return _NAMED.get(name)
    found = declared_type(node)
    if found is not None:
        return PgType(*found)
    if node.this in (T.CHAR, T.NCHAR):
        return PgType(pgt.BPCHAR, 5)  # char is char(1)
    if node.this == T.JSONB:
        return JSONB
    oid = _oid_of(node)
    return PgType(oid) if oid is not None else None


#: PostgreSQL type names sqlglot leaves user-defined
_NAMED = {"regtype": REGTYPE_T, "regclass": PgType(2205), "oid": PgType(pgt.OID),
          "name": NAME, "jsonb": JSONB, "timestamptz": TIMESTAMPTZ, "timetz": TIMETZ}


def regtype_name(t: PgType) -> str | None:
    """What ``pg_typeof`` prints for ``t`` (a regtype's text); None when not known."""
    elem = pgt.ELEMENT_OF.get(t.oid)
    if elem is not None:
        inner = regtype_name(PgType(elem))
        return inner + "[]" if inner is not None else None
    if t.oid == REGTYPE:
        return "regtype"
    if t.oid == pgt.UNKNOWN:
        return "unknown"
    found = _BUILTIN_NAMES.get(t.oid)
    return found[1] if found is not None else None
