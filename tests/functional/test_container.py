"""The container image, without Docker (issue 31, item 6): the Dockerfile's layout read, and
its entry point run here the way the image runs it (``pgbarrier-entrypoint`` with the
image's arguments), on 127.0.0.1.

* ``docker run IMAGE`` without a password source refuses to start in one line saying how
  to give one (exit 2); ``PGBARRIER_PASSWORD`` (user ``PGBARRIER_USER``, default root) is
  one; a mounted file (``PGBARRIER_PASSWORD_FILE`` or compose's ``--password-file``) is
  another.
* The image builds the compiled loops (setup.py is copied into the build stage), copies
  nothing built on the host (.dockerignore), has a HEALTHCHECK and runs as a non-root user.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from tests.conftest import READY

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"


def _stages() -> list[list[str]]:
    """The Dockerfile's instructions, per stage (continuation lines joined)."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        stages[-1].append(line)
    return stages


def test_the_image_builds_its_own_compiled_loops_and_runs_unprivileged() -> None:
    build, run = _stages()
    assert any(i.startswith("COPY") and "setup.py" in i for i in build), build
    assert any("pip wheel" in i for i in build)
    users = [i.split()[1] for i in run if i.startswith("USER ")]
    assert users and users[-1] not in ("root", "0"), run
    assert any(i.startswith("HEALTHCHECK") and "pg_isready" in i for i in run), run
    entry = next(i for i in run if i.startswith("ENTRYPOINT"))
    assert "pgbarrier-entrypoint" in entry
    assert any(i.startswith("COPY docker/entrypoint.sh") for i in run)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "**/*.so" in ignored and ".venv" in ignored


def test_the_compose_files_give_a_password_file() -> None:
    for name in ("docker-compose.yml", "docker-compose.ha.yml"):
        text = (ROOT / name).read_text()
        assert "--password-file" in text and "build: ." in text, name


def _entrypoint(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.Popen[str]:
    bindir = str(Path(sys.executable).parent)  # where `pgbarrier` is installed
    full = {k: v for k, v in os.environ.items() if not k.startswith("PGBARRIER_")}
    full.update(env, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
                TMPDIR=str(tmp_path))
    return subprocess.Popen(["sh", str(ENTRYPOINT), *args], env=full, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_without_a_password_the_container_refuses_in_one_line(tmp_path: Path) -> None:
    proc = _entrypoint("--host", "0.0.0.0", "--data-dir", str(tmp_path / "data"), env={},
                       tmp_path=tmp_path)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "PGBARRIER_PASSWORD" in lines[0], err
    assert not (tmp_path / "data").exists()


def test_pgbarrier_password_lets_its_user_in_and_nobody_else(tmp_path: Path) -> None:
    proc = _entrypoint("--host", "127.0.0.1", "--port", "0", "--data-dir", str(tmp_path / "d"),
                       env={"PGBARRIER_PASSWORD": "s3cret pass", "PGBARRIER_USER": "alice"},
                       tmp_path=tmp_path)
    lines: list[str] = []
    ready = threading.Event()
    found: list[int] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            m = READY.search(line)
            if m and not found:
                found.append(int(m.group(2)))
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        assert ready.wait(60) and found, "".join(lines)
        port = found[0]
        with psycopg.connect(host="127.0.0.1", port=port, user="alice", password="s3cret pass",
                             dbname="dev", autocommit=True) as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(host="127.0.0.1", port=port, user="alice", password="wrong",
                            dbname="dev")
        written = [p for p in tmp_path.iterdir() if p.is_file()]
        assert written and all(p.stat().st_mode & 0o077 == 0 for p in written)
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, "".join(lines)
    assert "s3cret" not in "".join(lines)
