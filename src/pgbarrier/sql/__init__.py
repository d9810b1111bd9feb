"""pgbarrier's SQL layer: classify, parse control statements, rewrite catalog reads.

Rules this package keeps:

* It executes nothing. :mod:`~pgbarrier.sql.classify` is the cheap, sqlglot-free check run
  on every statement; only statements it flags go to :func:`parse_control`; only statements
  that mention ``rw_catalog`` go to :func:`rewrite_catalog_refs`.
* Control statements come back as frozen dataclasses (:data:`ControlStatement`), never as
  sqlglot ``Command``s; what looks like ours but does not parse is a 42601 with a position.
"""

from pgbarrier.sql.catalog_rewrite import CATALOG_SCHEMA, CatalogTable, rewrite_catalog_refs
from pgbarrier.sql.classify import (
    Piece,
    is_control,
    leading_words,
    mentions_rw_catalog,
    split_statements,
)
from pgbarrier.sql.dialect import AlterDatabaseBarrier, BatchRefreshProperty, PgBarrier
from pgbarrier.sql.statements import (
    DEFAULT_BATCH_REFRESH_SEC,
    MAX_REFRESH_INTERVAL_SEC,
    ControlStatement,
    CreateMaterializedView,
    Flush,
    PauseDatabase,
    ResumeDatabase,
    parse_control,
)

__all__ = [
    "CATALOG_SCHEMA",
    "DEFAULT_BATCH_REFRESH_SEC",
    "MAX_REFRESH_INTERVAL_SEC",
    "AlterDatabaseBarrier",
    "BatchRefreshProperty",
    "CatalogTable",
    "ControlStatement",
    "CreateMaterializedView",
    "Flush",
    "PauseDatabase",
    "PgBarrier",
    "Piece",
    "ResumeDatabase",
    "is_control",
    "leading_words",
    "mentions_rw_catalog",
    "parse_control",
    "rewrite_catalog_refs",
    "split_statements",
]
