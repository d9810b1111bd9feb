"""What of the DuckDB instance a client may not see or act on (issue 28).

PostgreSQL shows a non-superuser neither its ``data_directory`` nor its configuration
files, and keeps ``CHECKPOINT`` to superusers. An embedded DuckDB instance is the
server's: its settings (memory limit, threads, directories), its attached databases and
their files, its extensions, memory and version build are the operator's business.
Rules this module keeps:

* :func:`refusal` answers PostgreSQL's 42501 for a client statement that calls one of
  DuckDB's instance functions (:data:`FUNCTIONS`: ``duckdb_settings()``,
  ``duckdb_databases()``, ``pragma_version()``...), runs an instance ``PRAGMA``
  (:data:`PRAGMAS`: ``database_list``, ``version``, ``platform``...) or ``CHECKPOINT``
  (PostgreSQL's own words: ``must be superuser to do CHECKPOINT``), with a HINT naming
  the flag that opens them. Names inside string literals and comments do not count.
* ``--allow-instance-info`` opens them to every client (an operator's choice, README's
  Security section); server paths stay hidden even then (the session's shadows of
  :mod:`pgbarrier.backends.duckdb_config`). ``version()`` always answers PostgreSQL's
  text (its session macro).
* A statement pays a substring test; only one naming ``duckdb_``, ``pragma`` or
  ``checkpoint`` is looked at closer.
"""

from __future__ import annotations

import re

from pgbarrier.errors import PgError

__all__ = ["FUNCTIONS", "PRAGMAS", "refusal"]

#: DuckDB's table and scalar functions that show the instance (lower case)
FUNCTIONS = frozenset({
    "duckdb_settings", "duckdb_databases", "duckdb_extensions", "duckdb_memory",
    "duckdb_temporary_files", "duckdb_secrets", "duckdb_logs", "duckdb_log_contexts",
    "duckdb_external_file_cache", "duckdb_approx_database_count", "pragma_version",
    "pragma_platform", "pragma_database_size", "pragma_user_agent", "pragma_metadata_info",
    "pragma_database_list", "pragma_show_databases", "which_secret", "duckdb_secret_types",
})
#: DuckDB's PRAGMAs that show or act on the instance (lower case)
PRAGMAS = frozenset({
    "database_list", "version", "platform", "database_size", "user_agent", "show_databases",
    "metadata_info", "extension_versions", "debug_checkpoint_abort", "force_checkpoint",
})

HINT = ("DuckDB's instance (its settings, databases, files, memory and build) is the "
        "operator's; pgbarrier shows it to no client unless started with "
        "--allow-instance-info.")

_STRIP = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.S)
_CALL = re.compile(r'(?<![\w$])"?([A-Za-z_][A-Za-z0-9_]*)"?\s*\(')
_PRAGMA = re.compile(r'(?is)^\s*(?:CALL\s+)?PRAGMA\s+"?([A-Za-z_][A-Za-z0-9_]*)"?')
_CHECKPOINT = re.compile(r"(?is)^\s*(?:FORCE\s+)?CHECKPOINT\b")


def refusal(sql: str) -> PgError | None:
    """PostgreSQL's 42501 for ``sql`` if it shows or acts on the DuckDB instance, else
    None (see the module rules)."""
    low = sql.lower()
    if "duckdb_" not in low and "pragma" not in low and "checkpoint" not in low and \
            "which_secret" not in low:
        return None
    text = _STRIP.sub(" ", sql)
    if _CHECKPOINT.match(text):
        return PgError("must be superuser to do CHECKPOINT", sqlstate="42501", hint=HINT)
    m = _PRAGMA.match(text)
    if m is not None and m.group(1).lower() in PRAGMAS:
        return PgError(f"permission denied for PRAGMA {m.group(1).lower()}", sqlstate="42501",
                       hint=HINT)
    for name in _CALL.findall(text):
        if name.lower() in FUNCTIONS:
            return PgError(f"permission denied for function {name.lower()}",
                           sqlstate="42501", hint=HINT)
    return None
