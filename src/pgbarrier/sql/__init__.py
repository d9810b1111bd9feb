"""pgbarrier's SQL layer: classify, parse control statements, rewrite catalog reads.

Rules this package keeps:

* It executes nothing. :func:`route` decides once per statement text where it goes
  (control, own setting, catalog read, plain), from the cheap, sqlglot-free checks of
  :mod:`~pgbarrier.sql.classify` and the shapes of the registered control statements
  (:mod:`~pgbarrier.sql.controls`); only ``CONTROL`` statements go to :func:`parse_control`;
  only ``CATALOG`` statements (they mention ``rw_catalog``) go to :func:`rewrite_catalog_refs`.
* Control statements come back as frozen dataclasses deriving :class:`ControlStatement`,
  each carrying its own facts (:mod:`~pgbarrier.sql.grammar`), never as
  sqlglot ``Command``s; what looks like ours but does not parse is a 42601 with a position.
  They are listed in :data:`STATEMENTS` (``ALTER DATABASE d PAUSE [FOR ...] [REASON
  ...] | RESUME | RENAME TO``, ``FLUSH``, ``CREATE | REFRESH | DROP MATERIALIZED VIEW``,
  ``ALTER MATERIALIZED VIEW v AS query | RENAME TO | SET SCHEMA | SUSPEND | RESUME | SET
  (...) | RESET (...)``, ``SHOW MATERIALIZED VIEWS``, ``SHOW DATABASES``, ``CREATE
  DATABASE`` and ``DROP DATABASE``); every other statement passes through to the backend.
"""

from pgbarrier.sql.catalog_rewrite import CATALOG_SCHEMA, CatalogTable, rewrite_catalog_refs
from pgbarrier.sql.classify import (
    Piece,
    leading_words,
    mentions_rw_catalog,
    split_statements,
)
from pgbarrier.sql.controls import STATEMENTS, is_control, parse_control
from pgbarrier.sql.grammar import ControlStatement
from pgbarrier.sql.route import Kind, Route, route
from pgbarrier.sql.dialect import AlterDatabaseBarrier, BatchRefreshProperty, PgBarrier
from pgbarrier.sql.statements import (
    DEFAULT_BATCH_REFRESH_SEC,
    MAX_REFRESH_INTERVAL_SEC,
    AlterMaterializedViewAs,
    AlterMaterializedViewName,
    CreateDatabase,
    CreateMaterializedView,
    DropDatabase,
    DropMaterializedView,
    Flush,
    PauseDatabase,
    RefreshMaterializedView,
    ResumeDatabase,
    ShowDatabases,
    ShowMaterializedViews,
)

__all__ = [
    "CATALOG_SCHEMA",
    "DEFAULT_BATCH_REFRESH_SEC",
    "MAX_REFRESH_INTERVAL_SEC",
    "AlterDatabaseBarrier",
    "AlterMaterializedViewAs",
    "AlterMaterializedViewName",
    "BatchRefreshProperty",
    "CatalogTable",
    "ControlStatement",
    "CreateDatabase",
    "CreateMaterializedView",
    "DropDatabase",
    "DropMaterializedView",
    "Flush",
    "Kind",
    "PauseDatabase",
    "PgBarrier",
    "Piece",
    "RefreshMaterializedView",
    "ResumeDatabase",
    "STATEMENTS",
    "Route",
    "ShowDatabases",
    "ShowMaterializedViews",
    "is_control",
    "leading_words",
    "mentions_rw_catalog",
    "parse_control",
    "rewrite_catalog_refs",
    "route",
    "split_statements",
]
