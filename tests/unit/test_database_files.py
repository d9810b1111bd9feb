"""A database name is a name, never a path: the DuckDB file-name mapping and identifier cuts."""

from __future__ import annotations

import os

import pytest

from pgbarrier.backends.duckdb_files import database_path, file_stem
from pgbarrier.sql.identifiers import truncate_identifier, truncation_notice

HOSTILE = ["../other/prod", "a/b", "/etc/passwd", "..", ".", ".hidden", "we;ird", 'x"q', "x'q",
           "Ünïcødé", "日本語", "a b", "A", "a", "%41", "%2541", "temp", "system", "main",
           "1db", "con", "nul", "x\\y", "x.duckdb", "a\nb", "\x1b[31m", "dev", "Dev", "DEV"]


@pytest.mark.parametrize("name", HOSTILE)
def test_every_name_is_a_file_directly_in_the_data_dir(tmp_path, name):
    path = database_path(str(tmp_path), name)
    assert os.path.dirname(path) == str(tmp_path)
    base = os.path.basename(path)
    assert base.endswith(".duckdb") and not base.startswith(".")
    assert all(c.isalnum() and c.isascii() or c in "_%" for c in base[: -len(".duckdb")])


def test_the_mapping_is_one_to_one():
    stems = [file_stem(n) for n in HOSTILE]
    assert len(set(stems)) == len(HOSTILE)
    assert len(set(s.lower() for s in stems)) == len(HOSTILE)  # case-insensitive file systems too


def test_plain_names_keep_their_old_file_name():
    assert file_stem("dev") == "dev"
    assert file_stem("sales_2024") == "sales_2024"


def test_longest_name_fits_a_file_name():
    name = truncate_identifier("é" * 100)
    assert len(name.encode()) <= 63
    assert len(file_stem(name) + ".duckdb") <= 255


def test_a_file_written_before_the_rule_is_still_used(tmp_path):
    (tmp_path / "Sales.duckdb").write_bytes(b"")
    assert database_path(str(tmp_path), "Sales") == str(tmp_path / "Sales.duckdb")
    # ... but never one outside the data dir
    (tmp_path / "inst").mkdir()
    assert os.path.dirname(database_path(str(tmp_path / "inst"), "../Sales")) == \
        str(tmp_path / "inst")


def test_truncation_is_at_a_character_boundary():
    assert truncate_identifier("a" * 63) == "a" * 63
    assert truncate_identifier("a" * 64) == "a" * 63
    cut = truncate_identifier("a" * 62 + "é")  # 64 bytes: the 2-byte é does not fit
    assert cut == "a" * 62
    notice = truncation_notice("b" * 70)
    assert notice is not None and notice.sqlstate == "42622"
    assert notice.message == f'identifier "{"b" * 70}" will be truncated to "{"b" * 63}"'
    assert truncation_notice("short") is None


def test_a_legacy_file_is_never_another_names_file(tmp_path):
    # "A" is stored as %41.duckdb; the name "%41" must not take that file as its legacy one
    (tmp_path / "%41.duckdb").write_bytes(b"")
    assert database_path(str(tmp_path), "%41") == str(tmp_path / "%2541.duckdb")
