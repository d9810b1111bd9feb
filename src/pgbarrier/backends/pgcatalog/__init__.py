"""A PostgreSQL catalog (``pg_catalog``, ``information_schema``) over DuckDB's own catalog.

Rules this package keeps:

* Each DuckDB database gets, on first use of a catalog object, an attached in-memory
  database :data:`CATALOG_DB` holding views and macros (``catalog.sql``). The views read
  DuckDB's catalog functions (``duckdb_tables()``, ``duckdb_columns()``,
  ``duckdb_constraints()``...) when queried, so they never drift from the data: no copy of
  a user object is kept anywhere. The attached database lives in memory, so an upgrade of
  pgbarrier never finds an old definition.
* Schema names: DuckDB's ``main`` is PostgreSQL's ``public`` (OID 2200); other DuckDB
  schemas keep their names; ``pg_catalog`` (OID 11), ``information_schema`` and
  ``rw_catalog`` list pgbarrier's emulated relations; temporary objects are in
  ``pg_temp_1``. The hidden schema ``pgbarrier`` of each user database holds
  ``materialized_views`` (name: pgbarrier's, kind, definition: a batch view's query,
  schema_name and relname: where DuckDB has it), created once when the backend opens the database
  (:meth:`CatalogInstaller.ensure_marker`, outside any transaction) and written by the
  DuckDB backend in the same transaction that creates or drops a batch-refresh or
  streaming view, so ``relkind`` is ``'m'`` for exactly those.
* OIDs: well-known catalog relations have PostgreSQL's OIDs (``pg_class`` is 1259...);
  every other relation, index, constraint, namespace and database gets an OID derived
  from the MD5 of its kind, schema and name (16384 and up): stable for the object's
  life and across restarts; a rename gives a new OID. Type OIDs are PostgreSQL's; a
  column's ``atttypid`` is the OID its values carry on the wire
  (:func:`pgbarrier.backends.pgcatalog.types.type_oid_sql`).
* One role: the session's user (``getvariable('pgbarrier_user')``, set per DuckDB
  connection), OID 10, owner of every object.
* ``pg_database`` lists pgbarrier's databases (:meth:`CatalogInstaller.set_databases`).
* Declared ``varchar(n)``, ``char(n)`` and ``jsonb`` column types, which DuckDB stores as
  ``VARCHAR`` / ``JSON``, come from the hidden ``pgbarrier.column_types``
  (:mod:`pgbarrier.backends.pgcatalog.declared`), created with the marker table; so do
  the names clients give constraints (``pgbarrier.constraint_names``) and identity columns
  (``pgbarrier.identity_columns``).
* A RowDescription's table OID, attnum and typmod come from the same rows
  (:mod:`pgbarrier.backends.pgcatalog.origins`).
"""

from __future__ import annotations

import re
import threading
from importlib import resources

import duckdb

from pgbarrier.backends.duckdb_sql import LENGTH_CHECK_MARKER, literal, quote_ident
from pgbarrier.backends.pgcatalog.builtins import CAST_FUNCTIONS, CASTS, LANGUAGES
from pgbarrier.backends.pgcatalog.declared import (COLUMN_TYPES_TABLE, CONSTRAINT_NAMES_TABLE,
                                                   IDENTITY_COLUMNS_TABLE,
                                                   declared_storage_sql)
from pgbarrier.backends.pgcatalog.origins import OriginCache
from pgbarrier.backends.pgcatalog.types import opclass_case_sql, pg_type_rows, type_oid_sql

__all__ = ["CATALOG_DB", "FIXED_OIDS", "SCHEMA_FOR", "CatalogInstaller", "RELATIONS", "FUNCTIONS",
           "MARKER_SCHEMA"]

CATALOG_DB = "pgbarrier_catalog"
#: PostgreSQL schema -> schema of CATALOG_DB that holds its emulation
SCHEMA_FOR = {"pg_catalog": "pgcat", "information_schema": "infoschema"}
MARKER_SCHEMA = "pgbarrier"

#: PostgreSQL's OIDs of the catalog relations clients name in ``'pg_x'::regclass``
FIXED_OIDS = {"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259,
              "pg_authid": 1260, "pg_database": 1262, "pg_am": 2601, "pg_attrdef": 2604,
              "pg_constraint": 2606, "pg_description": 2609, "pg_index": 2610,
              "pg_namespace": 2615, "pg_depend": 2608, "pg_inherits": 2611,
              "pg_trigger": 2620, "pg_enum": 3501, "pg_extension": 3079,
              "pg_collation": 3456, "pg_tablespace": 1213, "pg_auth_members": 1261,
              "pg_policy": 3256, "pg_publication": 6104, "pg_statistic_ext": 3381,
              "pg_sequence": 2224, "pg_publication_rel": 6106,
              "pg_publication_namespace": 6237, "pg_cast": 2605, "pg_operator": 2617,
              "pg_opclass": 2616, "pg_opfamily": 2753, "pg_language": 2612,
              "pg_rewrite": 2618, "pg_foreign_data_wrapper": 2328, "pg_foreign_server": 1417,
              "pg_default_acl": 826, "pg_conversion": 2607, "pg_event_trigger": 3466,
              "pg_subscription": 6100, "pg_ts_parser": 3601, "pg_ts_template": 3764,
              "pg_ts_dict": 3600, "pg_ts_config": 3602, "pg_transform": 3576,
              "pg_largeobject_metadata": 2995, "pg_partitioned_table": 3350,
              "pg_range": 3541, "pg_foreign_table": 3118, "pg_init_privs": 3394,
              "pg_amop": 2602, "pg_amproc": 2603, "pg_seclabel": 3596,
              "pg_shseclabel": 3592}

#: the catalog's views and macros: catalog.sql, then privileges.sql (the has_*_privilege
#: family and the strict reg* lookups, which read the views the first defines)
_SQL = "\n".join(resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
                 for name in ("catalog.sql", "privileges.sql"))


def _names(kind: str, schema: str) -> frozenset[str]:
    pattern = re.compile(rf"^CREATE {kind} @C@\.{schema}\.(\w+)", re.M)
    return frozenset(pattern.findall(_SQL))


#: emulated relations per PostgreSQL schema (names as PostgreSQL spells them)
RELATIONS = {pg: _names("VIEW", duck) for pg, duck in SCHEMA_FOR.items()}
RELATIONS["pg_catalog"] |= {"pg_settings"}  # per session, inlined by the rewrite
#: emulated pg_catalog functions
FUNCTIONS = _names("MACRO", "pgcat")


class CatalogInstaller:
    """Installs the catalog into a DuckDB database once, on first need (thread-safe)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, database: str) -> None:
        self._conn = conn
        self.database = database  # pgbarrier's name for it
        self._lock = threading.Lock()
        self._installed = False
        #: result column origins per statement (origins.py), dropped by any DDL
        self.origins = OriginCache()
        self._databases: list[str] = [database]
        self._system_views: dict[str, tuple[tuple[str, str], ...]] = {}

    @property
    def installed(self) -> bool:
        return self._installed

    def ensure(self) -> None:
        if self._installed:
            return
        with self._lock:
            if not self._installed:
                self._install()
                self._installed = True

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of the database with the catalog installed (the caller closes it)."""
        self.ensure()
        return self._conn.cursor()

    def ensure_marker(self, cur: duckdb.DuckDBPyConnection) -> None:
        """The ``pgbarrier.materialized_views`` table of the user database (idempotent).
        Called when the database is opened, before any client: creating the schema in
        concurrent transactions is a DuckDB catalog write-write conflict."""
        cur.execute(f"CREATE SCHEMA IF NOT EXISTS {MARKER_SCHEMA}")
        cur.execute(f"CREATE TABLE IF NOT EXISTS {MARKER_SCHEMA}.materialized_views "
                    "(name VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, definition VARCHAR)")
        # a batch view's query (pg_get_viewdef); data dirs made before it lack the column
        cur.execute(f"ALTER TABLE {MARKER_SCHEMA}.materialized_views "
                    "ADD COLUMN IF NOT EXISTS definition VARCHAR")
        # where the view is in DuckDB (``name`` is pgbarrier's, pgbarrier.sql.relnames):
        # data dirs made before views had schemas kept every one in main under its name
        for column in ("schema_name", "relname"):
            cur.execute(f"ALTER TABLE {MARKER_SCHEMA}.materialized_views "
                        f"ADD COLUMN IF NOT EXISTS {column} VARCHAR")
        cur.execute(f"UPDATE {MARKER_SCHEMA}.materialized_views SET schema_name = 'main', "
                    "relname = name WHERE relname IS NULL")
        # declared types DuckDB forgets (varchar(n), char(n), jsonb): declared.py
        cur.execute(f"CREATE TABLE IF NOT EXISTS {MARKER_SCHEMA}.{COLUMN_TYPES_TABLE} "
                    "(schema_name VARCHAR, table_name VARCHAR, column_name VARCHAR, "
                    "type_oid INTEGER, typmod INTEGER)")
        # constraint names DuckDB does not keep: declared.py
        cur.execute(f"CREATE TABLE IF NOT EXISTS {MARKER_SCHEMA}.{CONSTRAINT_NAMES_TABLE} "
                    "(schema_name VARCHAR, table_name VARCHAR, contype VARCHAR, "
                    "column_names VARCHAR[], constraint_name VARCHAR)")
        cur.execute(f"CREATE TABLE IF NOT EXISTS {MARKER_SCHEMA}.{IDENTITY_COLUMNS_TABLE} "
                    "(schema_name VARCHAR, table_name VARCHAR, column_name VARCHAR, "
                    "generation VARCHAR)")

    def set_databases(self, names: list[str]) -> None:
        self._databases = sorted(set(names))
        if self._installed:
            with self._lock:
                self._write_databases(self._conn.cursor())

    def set_system_views(self, views: dict[str, tuple[tuple[str, str], ...]]) -> None:
        """``rw_catalog`` views (name -> columns) to list in ``pg_class``/``pg_attribute``."""
        self._system_views = dict(views)

    def _write_databases(self, cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(f"DELETE FROM {CATALOG_DB}.pgb.databases")
        cur.executemany(f"INSERT INTO {CATALOG_DB}.pgb.databases VALUES (?)",
                        [[n] for n in self._databases])

    def _install(self) -> None:
        cur = self._conn.cursor()
        try:
            (uname,) = cur.execute("SELECT current_database()").fetchone()
            self.ensure_marker(cur)
            cur.execute(f"ATTACH ':memory:' AS {CATALOG_DB}")
            c = CATALOG_DB
            for schema in ("pgb", "pgcat", "infoschema", "rw_catalog"):
                cur.execute(f"CREATE SCHEMA {c}.{schema}")
            cur.execute(f"CREATE TABLE {c}.pgb.types (oid BIGINT, typname VARCHAR, "
                        "typlen INTEGER, typtype VARCHAR, typcategory VARCHAR, typelem BIGINT, "
                        "typarray BIGINT, typinput VARCHAR, typoutput VARCHAR, fmt VARCHAR)")
            cur.executemany(f"INSERT INTO {c}.pgb.types VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [list(r) for r in pg_type_rows()])
            cur.execute(f"CREATE TABLE {c}.pgb.casts (castsource BIGINT, casttarget BIGINT, "
                        "castfunc BIGINT, castcontext VARCHAR, castmethod VARCHAR)")
            cur.executemany(f"INSERT INTO {c}.pgb.casts VALUES (?, ?, ?, ?, ?)",
                            [list(r) for r in CASTS])
            cur.execute(f"CREATE TABLE {c}.pgb.procs (oid BIGINT, proname VARCHAR, "
                        "prorettype BIGINT, proargtypes BIGINT[])")
            cur.executemany(f"INSERT INTO {c}.pgb.procs VALUES (?, ?, ?, ?)",
                            [[o, n, r, list(a)] for o, n, r, a in CAST_FUNCTIONS])
            cur.execute(f"CREATE TABLE {c}.pgb.languages (oid BIGINT, lanname VARCHAR, "
                        "lanispl BOOLEAN, lanpltrusted BOOLEAN, lanplcallfoid BIGINT, "
                        "laninline BIGINT, lanvalidator BIGINT, description VARCHAR)")
            cur.executemany(f"INSERT INTO {c}.pgb.languages VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            [list(r) for r in LANGUAGES])
            cur.execute(f"CREATE TABLE {c}.pgb.databases (name VARCHAR)")
            self._write_databases(cur)
            cur.execute(f"CREATE MACRO {c}.pgb.type_oid(dt) AS {type_oid_sql('dt')}")
            sql = (_SQL.replace("@C@", c).replace("@CNAME@", c)
                   .replace("@U@", quote_ident(uname))
                   .replace("@UNAME@", uname.replace("'", "''"))
                   .replace("@DB@", self.database.replace("'", "''"))
                   .replace("@FIXED_OIDS_CASE@", _fixed_oids_case("nm"))
                   .replace("@DECLARED_STORAGE@", declared_storage_sql("d.type_oid",
                                                                       "c.data_type"))
                   .replace("@OPCLASS_CASE@", opclass_case_sql("dt"))
                   .replace("@LENGTH_MARKER@", LENGTH_CHECK_MARKER))
            cur.execute(sql)
            for name, columns in self._system_views.items():
                cols = ", ".join(f"CAST(NULL AS {_duck_type(t)}) AS {quote_ident(n)}"
                                 for n, t in columns)
                cur.execute(f"CREATE VIEW {c}.rw_catalog.{quote_ident(name)} "
                            f"AS SELECT {cols} WHERE false")
        finally:
            cur.close()


def _fixed_oids_case(arg: str) -> str:
    """``CASE nm WHEN 'pg_class' THEN 1259 ...`` (a constant, so no lookup per row)."""
    whens = " ".join(f"WHEN {literal(name)} THEN {oid}"
                     for name, oid in sorted(FIXED_OIDS.items()))
    return f"CASE {arg} {whens} END"


def _duck_type(sql_type: str) -> str:
    t = sql_type.strip().upper()
    return {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE", "TEXT": "VARCHAR",
            "NUMERIC": "DECIMAL(38, 10)"}.get(t, t)
