"""Where a pgbarrier database's DuckDB file lives: a name is a name, never a path.

Rules this module keeps:

* Every database's file is directly inside the data dir: ``<data_dir>/<stem>.duckdb``
  (and DuckDB's ``.wal`` beside it). No database name, whatever it holds (``/``,
  ``..``, quotes, NUL-free unicode, up to PostgreSQL's 63 bytes), can name a file
  anywhere else, so CREATE/DROP DATABASE create or delete only that file.
* ``stem`` is the name itself when it is a plain lower-case identifier
  (``[a-z0-9_]``, not starting with a digit), so ``dev`` is ``dev.duckdb`` as before.
  Any other name is percent-encoded byte by byte (every byte outside ``[a-z0-9_]``,
  upper-case letters included so case-insensitive file systems keep names apart,
  and ``%`` itself): ``a/b`` is ``a%2Fb.duckdb``, ``Sales`` is ``%53ales.duckdb``.
  The mapping is one-to-one: a plain stem has no ``%``, an encoded one always has.
  63 bytes encode to at most 189 characters, within every file system's 255.
* A data dir written before this rule may hold ``<Name>.duckdb`` for a name that
  is now encoded (``Sales.duckdb``): when that file exists and the name is a plain
  file name (no path separator, no leading ``.``, no ``%``, so it can never be the
  file of another name), it is used, so upgrading keeps its data.
"""

from __future__ import annotations

import os
import re

SUFFIX = ".duckdb"
_PLAIN = re.compile(r"[a-z_][a-z0-9_]*\Z")
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")


def file_stem(name: str) -> str:
    """The file name (without ``.duckdb``) of database ``name``."""
    if _PLAIN.match(name):
        return name
    return "".join(chr(b) if b in _KEEP else f"%{b:02X}"
                   for b in name.encode("utf-8", "surrogatepass"))


def _legacy_name_ok(name: str) -> bool:
    # no "%": an encoded stem always has one, so a legacy file is never another name's file
    return bool(name) and not name.startswith(".") and not any(
        c in name for c in ("/", "\\", "\0", "%", os.sep))


def database_path(data_dir: str, name: str) -> str:
    """The path of database ``name``'s DuckDB file, always directly in ``data_dir``."""
    stem = file_stem(name)
    if stem != name and _legacy_name_ok(name):
        legacy = os.path.join(data_dir, name + SUFFIX)
        if os.path.isfile(legacy) and os.path.dirname(os.path.abspath(legacy)) == \
                os.path.abspath(data_dir):
            return legacy
    return os.path.join(data_dir, stem + SUFFIX)
