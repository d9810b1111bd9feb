"""Which implementation of the compiled hot paths runs (pgbarrier/accel.py)."""

from __future__ import annotations

import os
import types

import pytest

from pgbarrier import accel

MODULES = ("pgbarrier.pgproto.scan", "pgbarrier.pgproto.rowframe", "pgbarrier.relay.state",
           "pgbarrier.server.core", "pgbarrier.server.upstream_io")


@pytest.mark.parametrize("name", MODULES)
def test_the_install_built_the_extension_and_it_is_the_one_loaded(name):
    """``make install`` compiles each (setup.py); CI must run them, not their sources."""
    package, _, base = name.rpartition(".")
    try:
        __import__(f"{package}._{base}_c")
    except ImportError as exc:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"{name} was not compiled by the install: {exc}") from None
        pytest.skip(f"{name} is not compiled here ({exc}); its Python source runs")
    if accel.pure_python():
        pytest.skip("PGBARRIER_PURE_PYTHON is set")
    assert accel.load(name).__name__ == f"{package}._{base}_c"
    assert accel.COMPILED[name] is True


@pytest.mark.parametrize("name", MODULES)
def test_pure_python_asks_for_the_sources(name, monkeypatch):
    monkeypatch.setattr(accel, "COMPILED", {})
    monkeypatch.setenv("PGBARRIER_PURE_PYTHON", "1")
    assert accel.load(name).__name__ == name
    assert accel.COMPILED[name] is False


@pytest.mark.parametrize("name", sorted(accel.REQUIRES))
def test_an_extension_runs_only_beside_the_extensions_it_is_typed_against(name, monkeypatch):
    """The serving core calls the relay state's extension type in C: where the state runs
    its source (stale, say), so does the core, whatever its own build."""
    monkeypatch.setattr(accel, "COMPILED", {r: False for r in accel.REQUIRES[name]})
    assert accel.load(name).__name__ == name
    assert accel.COMPILED[name] is False


def test_an_extension_older_than_its_source_is_not_used(tmp_path):
    source, built = tmp_path / "scan.py", tmp_path / "_scan_c.so"
    source.write_text("")
    built.write_text("")
    os.utime(built, (1_000, 1_000))
    os.utime(source, (2_000, 2_000))
    compiled = types.ModuleType("c")
    compiled.__file__ = str(built)
    plain = types.ModuleType("p")
    plain.__file__ = str(source)
    assert accel._older(compiled, plain)
    os.utime(built, (3_000, 3_000))
    assert not accel._older(compiled, plain)


def test_an_extension_older_than_a_pxd_it_was_built_against_is_not_used(tmp_path):
    """The serving core reads the relay state's fields at the offsets of the state's
    ``.pxd``: an edited ``.pxd`` (its own, or one of a module it is typed against) makes
    the extension stale though no ``.py`` changed."""
    own, other = tmp_path / "own", tmp_path / "other"
    own.mkdir()
    other.mkdir()
    files = {"built": own / "_core_c.so", "source": own / "core.py",
             "pxd": own / "_core_c.pxd", "required": other / "state.py",
             "required_pxd": other / "_state_c.pxd"}
    for path in files.values():
        path.write_text("")
        os.utime(path, (1_000, 1_000))
    os.utime(files["built"], (2_000, 2_000))
    compiled, plain, state = (types.ModuleType(n) for n in ("c", "p", "s"))
    compiled.__file__ = str(files["built"])
    plain.__file__ = str(files["source"])
    state.__file__ = str(files["required"])
    assert not accel._older(compiled, plain, [state])
    for key in ("pxd", "required_pxd", "source"):
        os.utime(files[key], (3_000, 3_000))
        assert accel._older(compiled, plain, [state]), key
        os.utime(files[key], (1_000, 1_000))
    os.utime(files["required"], (3_000, 3_000))  # its code, not its C layout: still good
    assert not accel._older(compiled, plain, [state])
    files["pxd"].unlink()  # a module compiled without a .pxd of its own
    assert not accel._older(compiled, plain, [state])
