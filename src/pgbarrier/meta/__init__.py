"""pgbarrier's durable meta state; see :mod:`pgbarrier.meta.store`."""

from __future__ import annotations

from pgbarrier.meta.store import MetaStore


def open_meta_store(data_dir: str, url: str | None = None) -> MetaStore:
    """PostgreSQL when ``url`` is given, else SQLite in ``data_dir``."""
    if url:
        from pgbarrier.meta.postgres import PostgresMetaStore

        return PostgresMetaStore(url)
    from pgbarrier.meta.sqlite import SqliteMetaStore

    return SqliteMetaStore(data_dir)
